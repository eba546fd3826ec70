import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { RedisMemory } from './queue-backend.js';
import { endpointSecrets, type RedisEndpoint, resolveEndpoint } from './redis-endpoint.js';
import { classifyRedisError, firstLineOf, type RedisErrorKind, SELECT_REFUSED } from './redis-errors.js';

/** Clients whose database the server refused, with its answer (see `createRedisClient`). */
const refusedSelect = new WeakMap<Redis | Cluster, Error & { db: number }>();

/** Longest pause between two background reconnect attempts. */
const RETRY_CAP_MS = 500;

export interface RedisClientOptions {
  /** Shown in CLIENT LIST, so operators can tell the bot's connections apart. */
  connectionName?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
}

/** What one connection of a backend is for: its CLIENT LIST name, and a command timeout when not the default. */
export interface ConnectionRole {
  connectionName: string;
  commandTimeoutMs?: number;
}

/** A backend's defaults with one connection's role over them (see the backends' connections.ts). */
export function roleOptions(
  defaults: Pick<RedisClientOptions, 'connectTimeoutMs' | 'commandTimeoutMs'>,
  role: ConnectionRole,
): RedisClientOptions {
  return {
    ...defaults,
    connectionName: role.connectionName,
    ...(role.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: role.commandTimeoutMs }),
  };
}

/**
 * A client for a watched Redis that fails fast instead of queueing: no offline queue, short
 * connect and command timeouts, so a Redis that is down or hangs turns into an error for that
 * system within seconds while the other systems still report.
 */
export function createRedisClient(target: string | RedisEndpoint, options: RedisClientOptions = {}): Redis {
  const endpoint = typeof target === 'string' ? { url: target } : target;
  const redisOptions: RedisOptions = {
    ...resolveEndpoint(endpoint).options,
    lazyConnect: true,
    enableOfflineQueue: false,
    connectTimeout: options.connectTimeoutMs ?? 2000,
    commandTimeout: options.commandTimeoutMs ?? 3000,
    maxRetriesPerRequest: 0,
    // Keep trying in the background, but never hold a command hostage to it. The cap is short
    // because `ensureConnected` waits for the next attempt: a Redis that is back is used within
    // half a second, and one that is still down answers that fast too.
    retryStrategy: (times) => Math.min(times * 100, RETRY_CAP_MS),
    connectionName: options.connectionName,
  };
  const client = new Redis(redisOptions);
  // ioredis emits 'error' on every failed reconnect; without a listener Node prints it with the URL.
  // One of them matters for good: a SELECT the server refused (`/99` on a Redis of 16 databases).
  // ioredis reports it here and carries on in database 0, where a status would show another
  // system's queues and a purge would take them; `ensureConnected` refuses such a client instead.
  client.on('error', (error: unknown) => {
    const message = String((error as Error)?.message);
    if (SELECT_REFUSED.test(message)) {
      refusedSelect.set(client, Object.assign(new Error(message), { db: client.options.db ?? 0 }));
    }
  });
  // Each connection selects again (a server restarted with more databases is fine next time).
  client.on('connect', () => refusedSelect.delete(client));
  if (redisOptions.sentinels) quietSentinelWatchers(client);
  return client;
}

/**
 * ioredis' failover detector opens a client to each sentinel and listens to none of their errors,
 * so a sentinel that is down (one of Celery's `sentinel://a;sentinel://b` list) prints
 * "[ioredis] Unhandled error event" to stderr on every retry: on the command line's output, and
 * with its address. The main client already turns a Redis it cannot reach into an answer; these
 * watchers' errors are nobody's business. Wraps the connector's factory for them (ioredis 5's
 * `connector.connectToSentinel`; left alone if a version lacks it).
 */
function quietSentinelWatchers(client: Redis): void {
  const connector = (
    client as unknown as { connector?: { connectToSentinel?: (...args: unknown[]) => Redis } }
  ).connector;
  const open = connector?.connectToSentinel;
  if (!connector || typeof open !== 'function') return;
  connector.connectToSentinel = (...args: unknown[]) => {
    const watcher = open.apply(connector, args);
    watcher.on('error', () => {});
    return watcher;
  };
}

/**
 * A Redis Cluster client with the same fail-fast behaviour, from startup nodes (the system's
 * `redis` URL plus `nodes`). Credentials and TLS come from the first URL and apply to every node.
 */
export function createRedisCluster(
  endpoint: RedisEndpoint,
  nodes: readonly string[],
  options: RedisClientOptions = {},
): Cluster {
  const { options: first } = resolveEndpoint(endpoint);
  const startup = [endpoint.url, ...nodes].map((url) => {
    const parsed = new URL(url);
    return { host: parsed.hostname, port: Number(parsed.port || 6379) };
  });
  const cluster = new Cluster(startup, {
    lazyConnect: true,
    enableOfflineQueue: false,
    clusterRetryStrategy: (times) => Math.min(times * 100, RETRY_CAP_MS),
    redisOptions: {
      connectTimeout: options.connectTimeoutMs ?? 2000,
      commandTimeout: options.commandTimeoutMs ?? 3000,
      maxRetriesPerRequest: 0,
      connectionName: options.connectionName,
      ...(first.username ? { username: first.username } : {}),
      ...(first.password ? { password: first.password } : {}),
      ...(first.tls ? { tls: first.tls } : {}),
    },
  });
  cluster.on('error', () => {});
  return cluster;
}

/**
 * The connection that serves `key`: the client itself, or on Redis Cluster the node client of the
 * master its slot maps to (undefined before the cluster has learned its slots). What a second
 * connection beside the client (a raw pipe) copies to reach the same keys.
 */
export function connectionServing(client: Redis | Cluster, key: string): Redis | undefined {
  if (!(client instanceof Cluster)) return client;
  const master = client.slots[calculateSlot(key)]?.[0];
  if (master === undefined) return undefined;
  return client.nodes('master').find((node) => `${node.options.host}:${node.options.port}` === master);
}

/**
 * Connects if needed and waits until the client is ready, for at most `timeoutMs` (default: the
 * client's `connectTimeout`) in every case. A no-op on a ready client.
 *
 * ioredis' own `connectTimeout` only covers the TCP handshake: a Redis that accepts the
 * connection but never answers (SIGSTOPped, swapping, a proxy in front of a dead server) leaves
 * `connect()` waiting on the ready check with no deadline at all. So the wait here is raced
 * against one timer, whatever state the client is in. A client between reconnect attempts is not
 * failed on its last error: the wait covers its next attempt, so the first call after Redis comes
 * back succeeds instead of repeating an outdated "connection refused". An attempt that fails ends
 * the wait at once. On failure the socket's own error (ECONNREFUSED, ETIMEDOUT…) is thrown when
 * one was seen, rather than ioredis' generic "Connection is closed". A timed-out client keeps
 * connecting in the background (its retry strategy), so a Redis that comes back is used again.
 */
export async function ensureConnected(client: Redis | Cluster, timeoutMs?: number): Promise<void> {
  if (client.status !== 'ready') await waitUntilReady(client, timeoutMs);
  const refused = refusedSelect.get(client);
  if (refused !== undefined) throw refused;
}

function waitUntilReady(client: Redis | Cluster, timeoutMs?: number): Promise<void> {
  const bound =
    timeoutMs ??
    (client instanceof Cluster
      ? client.options.redisOptions?.connectTimeout
      : client.options.connectTimeout) ??
    2000;
  return new Promise<void>((resolve, reject) => {
    let lastError: unknown;
    let settled = false;
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('end', onEnd);
      client.off('connecting', onConnecting);
      client.off('reconnecting', onReconnecting);
      client.off('error', onError);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onReady = () => finish();
    const onEnd = () => finish(lastError ?? new Error('connection closed'));
    // A client found between attempts may still emit the 'reconnecting' of the attempt that
    // failed before we came: only the end of an attempt we saw start counts.
    let attempting = client.status === 'connecting' || client.status === 'connect';
    const onConnecting = () => {
      attempting = true;
    };
    const onReconnecting = () => {
      if (attempting) onEnd();
    };
    const onError = (error: unknown) => {
      lastError = error;
    };
    const timer = setTimeout(() => finish(lastError ?? new Error('connect timeout')), bound);
    client.on('ready', onReady);
    client.on('end', onEnd);
    client.on('connecting', onConnecting);
    // ioredis schedules the next attempt when one failed: this attempt is over.
    client.on('reconnecting', onReconnecting);
    client.on('error', onError);
    if (client.status === 'wait' || client.status === 'end' || client.status === 'close') {
      client.connect().catch((error: unknown) => {
        // ioredis rejects connect() on a client already connecting; that is not a failure
        if (/already connect/i.test(String((error as Error)?.message))) return;
        finish(lastError ?? error);
      });
    }
  });
}

/** `redis://:pw@host:6379/0` → `redis://***@host:6379/0`: safe for logs and messages. */
export function redactUrl(url: string): string {
  return url.replace(/(rediss?:\/\/|sentinel:\/\/)([^@/;]*)@/gi, (_m, scheme) => `${scheme}***@`);
}

/**
 * Turns whatever ioredis threw into `RedisUnavailable` for one system, with a short reason that
 * never contains a password.
 */
export function toRedisUnavailable(system: string, error: unknown, secrets: string[] = []): OpsError {
  if (error instanceof OpsError) return error;
  // In the locale of whatever is being answered (a request's, the config's).
  const said = messages().errors.redisReasons;
  const worded: Partial<Record<RedisErrorKind, () => string>> = {
    commandTimeout: () => said.commandTimedOut,
    connectTimeout: () => said.connectTimedOut,
    refused: () => said.connectionRefused,
    notConnected: () => said.notConnected,
    lost: () => said.connectionLost,
    noSuchDatabase: () => said.noSuchDatabase((error as { db?: number })?.db ?? 0),
  };
  let reason = worded[classifyRedisError(error).kind]?.() ?? firstLineOf(error);
  for (const secret of secrets) if (secret) reason = reason.split(secret).join('***');
  reason = reason.replace(/(rediss?:\/\/|sentinel:\/\/)[^@\s/]*@/gi, '$1***@');
  return new OpsError(ErrorCode.RedisUnavailable, { system, reason });
}

/**
 * `RedisForbidden` when Redis refused a command to this user (ACL: NOPERM, or a script running a
 * command the user may not), else undefined: an action tried with README's read-only user.
 */
export function toRedisForbidden(system: string, error: unknown): OpsError | undefined {
  if (classifyRedisError(error).kind !== 'forbidden') return undefined;
  const message = String((error as Error)?.message ?? error).split('\n')[0]!;
  // Redis names the command or script, never a key's value or a password.
  const reason = message.replace(/\s*script: [0-9a-f]{40}.*$/i, '').slice(0, 160);
  return new OpsError(ErrorCode.RedisForbidden, { system, reason });
}

/** The password in a Redis URL, so that it can be scrubbed from anything we print. */
export function urlSecrets(url: string): string[] {
  return endpointSecrets(url);
}

/** Parses the `INFO memory` reply. */
export function parseMemoryInfo(info: string): RedisMemory {
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  return {
    usedMemoryBytes: Number(field('used_memory') ?? 0),
    maxMemoryBytes: Number(field('maxmemory') ?? 0),
    maxMemoryPolicy: field('maxmemory_policy') ?? 'unknown',
  };
}
