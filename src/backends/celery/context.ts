import type { Redis } from 'ioredis';
import type { CelerySystemConfig } from '../../config/schema.js';
import type { OpsError } from '../../errors.js';
import { createQueueNames, type QueueNames } from '../queue-names.js';
import { ensureConnected, toRedisUnavailable, urlSecrets } from '../redis-client.js';
import { type CeleryConnections, celeryConnections } from './connections.js';
import { createFailureIndex, type FailureIndex } from './failures.js';
import {
  bindingScanPattern,
  dbFromUrl,
  exchangeOfBindingKey,
  isInternalExchange,
  isInternalQueue,
  type KombuLayout,
  pausedKey,
  queueOfBindingMember,
} from './keys.js';
import { type BroadcastResult, createPidboxClient, type PidboxClient } from './pidbox.js';

export interface CeleryBackendOptions {
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  now?: () => number;
  /** How long discovered queue names are reused. Default 30 s. */
  discoveryTtlMs?: number;
  /** How often the failure index is rebuilt from a full SCAN. Default 5 min. */
  rescanIntervalMs?: number;
}

/**
 * What the Celery backend's reads and actions share: one system's connections, its kombu key
 * layout, its remote-control client, its queue names and its failure index (opened on first use).
 */
export interface CeleryContext {
  system: CelerySystemConfig;
  now: () => number;
  connectTimeoutMs: number;
  layout: KombuLayout;
  connections: CeleryConnections;
  /** The result backend is a Redis of its own (`resultBackend:`), not the broker. */
  separateResults: boolean;
  client: Redis;
  resultClient: Redis;
  secrets: string[];
  pidbox: PidboxClient;
  queueNames: QueueNames;
  /** The hash of queues paused by queue-ops (see `pausedKey`). */
  pauseMarks: string;
  unavailable: (error: unknown) => OpsError;
  /** The failure index, opened (with its subscriber) on first use. */
  failures: () => FailureIndex;
  /** The failure index if something opened it; never opens one. */
  openedFailures: () => FailureIndex | undefined;
  /** One round of remote-control inspection, by method. */
  inspect: (methods: readonly string[], timeoutMs?: number) => Promise<Map<string, BroadcastResult>>;
  close: () => Promise<void>;
}

export function createCeleryContext(
  system: CelerySystemConfig,
  options: CeleryBackendOptions,
): CeleryContext {
  const now = options.now ?? Date.now;
  const connectTimeoutMs = options.connectTimeoutMs ?? 2000;
  const commandTimeoutMs = options.commandTimeoutMs ?? 3000;
  const discoveryTtlMs = options.discoveryTtlMs ?? 5 * 60_000;
  const resultUrl = system.resultBackend ?? system.redis;
  const secrets = [...urlSecrets(system.redis), ...urlSecrets(resultUrl)];
  const layout: KombuLayout = {
    globalKeyprefix: system.globalKeyprefix,
    prioritySteps: system.prioritySteps,
    separator: system.separator,
    fanoutPrefix: system.fanoutPrefix,
    db: dbFromUrl(system.redis),
  };
  const connections = celeryConnections(system, { connectTimeoutMs, commandTimeoutMs });
  const separateResults = connections.separateResults;
  const client = connections.broker({ connectionName: 'queue-ops' });
  const resultClient = separateResults ? connections.results({ connectionName: 'queue-ops' }) : client;
  let subscriber: Redis | undefined;
  let failureIndex: FailureIndex | undefined;
  const pidbox: PidboxClient = createPidboxClient({
    client,
    layout,
    // Deadlines run on the real clock: an injected `now` is for ages and dates only.
    connectTimeoutMs,
    createBlockingClient: () =>
      connections.broker({
        // A BRPOP here waits up to 1 s by design; the timeout is for a Redis that hangs.
        commandTimeoutMs: commandTimeoutMs + 1500,
        connectionName: 'queue-ops:pidbox',
      }),
  });

  const unavailable = (error: unknown) => toRedisUnavailable(system.name, error, secrets);

  function failures(): FailureIndex {
    if (!failureIndex) {
      subscriber = connections.results({ connectionName: 'queue-ops:results' });
      failureIndex = createFailureIndex({
        client: resultClient,
        subscriber,
        now,
        rescanIntervalMs: options.rescanIntervalMs,
        connectTimeoutMs,
      });
    }
    return failureIndex;
  }

  const queueNames = createQueueNames({
    system: system.name,
    configured: system.queues,
    patterns: system.queuePatterns,
    discover: async () => {
      try {
        return await discoverQueues(client, layout, connectTimeoutMs);
      } catch (error) {
        throw unavailable(error);
      }
    },
    now,
    ttlMs: discoveryTtlMs,
  });

  async function inspect(methods: readonly string[], timeoutMs = system.inspectTimeoutMs) {
    const results = await Promise.all(methods.map((method) => pidbox.broadcast(method, {}, { timeoutMs })));
    return new Map(methods.map((method, i) => [method, results[i]!] as const));
  }

  return {
    system,
    now,
    connectTimeoutMs,
    layout,
    connections,
    separateResults,
    client,
    resultClient,
    secrets,
    pidbox,
    queueNames,
    pauseMarks: pausedKey(layout),
    unavailable,
    failures,
    openedFailures: () => failureIndex,
    inspect,
    async close() {
      await failureIndex?.close();
      await pidbox.close();
      subscriber?.disconnect();
      client.disconnect();
      if (separateResults) resultClient.disconnect();
    },
  };
}

/** The queues bound to a non-internal exchange, from kombu's binding sets. */
async function discoverQueues(
  client: Redis,
  layout: KombuLayout,
  connectTimeoutMs: number,
): Promise<string[]> {
  await ensureConnected(client, connectTimeoutMs);
  const bindingKeys = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', bindingScanPattern(layout), 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const exchange = exchangeOfBindingKey(layout, key);
      if (exchange !== undefined && !isInternalExchange(exchange)) bindingKeys.add(key);
    }
  } while (cursor !== '0');
  const queues = new Set<string>();
  if (bindingKeys.size > 0) {
    const pipeline = client.pipeline();
    // Binding sets hold one member per queue bound to an exchange: small by construction.
    for (const key of bindingKeys) pipeline.smembers(key);
    for (const [error, members] of (await pipeline.exec()) ?? []) {
      if (error) continue; // a key of another type that happens to match the pattern
      for (const member of members as string[]) {
        const queue = queueOfBindingMember(layout, member);
        if (queue && !isInternalQueue(queue)) queues.add(queue);
      }
    }
  }
  return [...queues].sort();
}
