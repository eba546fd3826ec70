import { type ChainableCommander, Cluster, type Redis } from 'ioredis';
import type { BullmqSystemConfig } from '../../config/schema.js';
import { OpsError } from '../../errors.js';
import { createQueueNames, type QueueNames } from '../queue-names.js';
import { ensureConnected, toRedisUnavailable, urlSecrets } from '../redis-client.js';
import { isPlainReply, isReplyError, isVagueConnectionError } from '../redis-errors.js';
import { bullmqConnections } from './connections.js';

export interface BullmqBackendOptions {
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  /** Epoch milliseconds; injectable so tests and the bench control job ages and the discovery cache. */
  now?: () => number;
}

/** What the backend has sent to Redis so far, for the bench's "commands per status call". */
export interface BullmqCommandStats {
  /** Commands sent by the client (a script call counts once, whatever it runs inside Redis). */
  commands: number;
  /** Network round trips (one per pipeline or single command). */
  roundTrips: number;
}

/**
 * How long discovered queue names are fresh; then the next read answers from them and SCANs in
 * the background (src/backends/queue-names.ts). A SCAN walks every key, jobs included, so it runs
 * at most once in this span; a queue asked for by name is looked for at once.
 */
export const DISCOVERY_TTL_MS = 5 * 60_000;
/**
 * An answer, even a failure, within 5 s of Redis going silent: Slack shows a slash command's
 * answer for a few seconds only, and an operator waiting longer assumes the bot is down.
 */
const DEADLINE_MS = 4_500;
const SCAN_COUNT = 1000;

/**
 * What the BullMQ backend's status, reads and actions share: one system's read client behind a
 * deadline (`withRedis`), its command counters, its queue names and the way to open connections.
 */
export interface BullmqContext {
  system: BullmqSystemConfig;
  now: () => number;
  prefix: string;
  /** Opens a new connection to the system's whole endpoint (TLS files, Sentinel, Cluster). */
  connect: ReturnType<typeof bullmqConnections>;
  client: Redis;
  counters: BullmqCommandStats;
  queueNames: QueueNames;
  unavailable: (error: unknown) => OpsError;
  withRedis<T>(work: (expired: AbortSignal) => Promise<T>): Promise<T>;
  exec(pipeline: ChainableCommander): Promise<[Error | null, unknown][]>;
  single<T>(send: (redis: Redis) => Promise<T>): Promise<T>;
  prefixNode(): Promise<Redis>;
  close(): Promise<void>;
}

export function createBullmqContext(
  system: BullmqSystemConfig,
  options: BullmqBackendOptions,
): BullmqContext {
  const now = options.now ?? Date.now;
  const secrets = urlSecrets(system.redis);
  const prefix = system.prefix;
  const connect = bullmqConnections(system, {
    connectTimeoutMs: options.connectTimeoutMs,
    commandTimeoutMs: options.commandTimeoutMs,
  });
  const client = connect({ connectionName: `queue-ops:${system.name}` });
  // ioredis reports why a connection failed only as an 'error' event; the promise just says
  // "closed" or times out, which tells the on-call engineer less than "connection refused".
  let lastConnectionError: unknown;
  client.on('error', (error) => {
    lastConnectionError = error;
  });
  client.on('ready', () => {
    lastConnectionError = undefined;
  });
  const counters: BullmqCommandStats = { commands: 0, roundTrips: 0 };
  let closed = false;
  const scanProgress = new Set<() => void>();

  const unavailable = (error: unknown) => toRedisUnavailable(system.name, error, secrets);

  /**
   * Runs `work` against a connected client and answers within the deadline whatever Redis does:
   * a server that accepts the TCP connection but never replies (SIGSTOP, a stuck host) would
   * otherwise leave the ready check waiting forever.
   */
  async function withRedis<T>(work: (expired: AbortSignal) => Promise<T>): Promise<T> {
    if (closed) throw unavailable(new Error('backend closed'));
    let timer: NodeJS.Timeout | undefined;
    let expire: () => void = () => {};
    // Told to the work when the caller has been answered: work of several round trips (a retry's
    // batches) must then stop before its next one, or it would go on, unaudited, once Redis is back.
    const expiry = new AbortController();
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(expire, DEADLINE_MS);
    };
    const deadline = new Promise<never>((_, reject) => {
      expire = () => {
        expiry.abort();
        reject(new Error('Command timed out'));
      };
      arm();
    });
    // A first discovery on a big keyspace is many SCAN replies (about 1 s per million keys);
    // each one proves Redis is alive, so the deadline counts silence, not total time.
    scanProgress.add(arm);
    try {
      return await Promise.race([
        (async () => {
          await ensureConnected(client);
          return await work(expiry.signal);
        })(),
        deadline,
      ]);
    } catch (error) {
      if (error instanceof OpsError) throw error;
      if (isPlainReply(error)) throw error;
      throw unavailable(isVagueConnectionError(error) && lastConnectionError ? lastConnectionError : error);
    } finally {
      scanProgress.delete(arm);
      clearTimeout(timer);
    }
  }

  /** Sends a pipeline and returns its replies, throwing the first error that is not a reply error. */
  async function exec(pipeline: ChainableCommander): Promise<[Error | null, unknown][]> {
    counters.commands += pipeline.length;
    counters.roundTrips += 1;
    const results = (await pipeline.exec()) ?? [];
    // A reply proves Redis alive: work of several pipelines (a retry's batches) is bounded by
    // silence, like a long SCAN, not by its total time.
    for (const onProgress of scanProgress) onProgress();
    for (const [error] of results) if (error && !isReplyError(error)) throw error;
    return results;
  }

  async function single<T>(send: (redis: Redis) => Promise<T>): Promise<T> {
    counters.commands += 1;
    counters.roundTrips += 1;
    return await send(client);
  }

  /** On a cluster, the master holding the prefix's one slot, where every key of the queues lives. */
  async function prefixNode(): Promise<Redis> {
    const asCluster = client as unknown as Cluster;
    if (!(asCluster instanceof Cluster)) return client;
    const slot = Number(await asCluster.call('CLUSTER', 'KEYSLOT', `${prefix}:meta`));
    const owner = asCluster.slots[slot]?.[0];
    const node = asCluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner);
    if (!node) throw new Error(`no master holds slot ${slot} of ${prefix}`);
    return node;
  }

  const queueNames = createQueueNames({
    system: system.name,
    configured: system.queues,
    patterns: system.queuePatterns,
    discover: () => scanQueues(client, prefix, single, scanProgress),
    now,
    ttlMs: DISCOVERY_TTL_MS,
  });

  return {
    system,
    now,
    prefix,
    connect,
    client,
    counters,
    queueNames,
    unavailable,
    withRedis,
    exec,
    single,
    prefixNode,
    async close() {
      closed = true;
      // disconnect, not quit: QUIT would wait on a Redis that hangs.
      client.disconnect();
    },
  };
}

/** SCAN MATCH is a glob; a prefix like `{hs}` is literal, but `*?[]\` would not be. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** The queues under the prefix, from their `meta` keys (every master of a cluster). */
async function scanQueues(
  client: Redis,
  prefix: string,
  single: BullmqContext['single'],
  scanProgress: Set<() => void>,
): Promise<string[]> {
  const pattern = `${escapeGlob(prefix)}:*:meta`;
  const head = prefix.length + 1;
  const found = new Set<string>();
  // A cluster's keys are spread over its masters: each is scanned on its own.
  const asCluster: unknown = client;
  const nodes: Redis[] = asCluster instanceof Cluster ? asCluster.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await single(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT));
      cursor = next;
      for (const onProgress of scanProgress) onProgress();
      for (const key of keys) {
        const name = key.slice(head, -':meta'.length);
        // BullMQ refuses ':' in queue names; such a key belongs to a longer prefix or is not a queue.
        if (name && !name.includes(':')) found.add(name);
      }
    } while (cursor !== '0');
  }
  return [...found].sort();
}
