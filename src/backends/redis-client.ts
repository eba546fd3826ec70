import { Redis, type RedisOptions } from 'ioredis';
import { ErrorCode, OpsError } from '../errors.js';
import type { RedisMemory } from './queue-backend.js';

export interface RedisClientOptions {
  /** Shown in CLIENT LIST, so operators can tell the bot's connections apart. */
  connectionName?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
}

/**
 * A client for a watched Redis that fails fast instead of queueing: no offline queue, short
 * connect and command timeouts, so a Redis that is down or hangs turns into an error for that
 * system within seconds while the other systems still report.
 */
export function createRedisClient(url: string, options: RedisClientOptions = {}): Redis {
  const redisOptions: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    connectTimeout: options.connectTimeoutMs ?? 2000,
    commandTimeout: options.commandTimeoutMs ?? 3000,
    maxRetriesPerRequest: 0,
    // Keep trying in the background, but never hold a command hostage to it.
    retryStrategy: (times) => Math.min(times * 200, 2000),
    connectionName: options.connectionName,
  };
  const client = new Redis(url, redisOptions);
  // ioredis emits 'error' on every failed reconnect; without a listener Node prints it with the URL.
  client.on('error', () => {});
  return client;
}

/** Connects if needed; a no-op on a ready client. */
export async function ensureConnected(client: Redis): Promise<void> {
  if (client.status === 'ready') return;
  if (client.status === 'wait' || client.status === 'end' || client.status === 'close') {
    await client.connect().catch((error: unknown) => {
      // ioredis rejects connect() on a client already connecting; that is not a failure
      if (!/already connect/i.test(String((error as Error)?.message))) throw error;
    });
  }
  if ((client.status as string) !== 'ready') {
    await new Promise<void>((resolve, reject) => {
      const onReady = () => {
        cleanup();
        resolve();
      };
      const onEnd = () => {
        cleanup();
        reject(new Error('connection closed'));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error('connect timeout'));
      }, client.options.connectTimeout ?? 2000);
      const cleanup = () => {
        clearTimeout(timer);
        client.off('ready', onReady);
        client.off('end', onEnd);
      };
      client.once('ready', onReady);
      client.once('end', onEnd);
    });
  }
}

/** `redis://:pw@host:6379/0` → `redis://***@host:6379/0`: safe for logs and messages. */
export function redactUrl(url: string): string {
  return url.replace(/^(rediss?:\/\/)([^@/]*)@/i, (_m, scheme) => `${scheme}***@`);
}

/**
 * Turns whatever ioredis threw into `RedisUnavailable` for one system, with a short reason that
 * never contains a password.
 */
export function toRedisUnavailable(system: string, error: unknown, secrets: string[] = []): OpsError {
  if (error instanceof OpsError) return error;
  let reason = String((error as Error)?.message ?? error)
    .split('\n')[0]!
    .slice(0, 200);
  if (/Command timed out/i.test(reason)) reason = 'command timed out';
  else if (/connect timeout|ETIMEDOUT/i.test(reason)) reason = 'connect timed out';
  else if (/ECONNREFUSED/i.test(reason)) reason = 'connection refused';
  else if (/Stream isn't writeable|enableOfflineQueue/i.test(reason)) reason = 'not connected';
  for (const secret of secrets) if (secret) reason = reason.split(secret).join('***');
  reason = reason.replace(/(rediss?:\/\/)[^@\s/]*@/gi, '$1***@');
  return new OpsError(ErrorCode.RedisUnavailable, { system, reason });
}

/** The password in a Redis URL, so that it can be scrubbed from anything we print. */
export function urlSecrets(url: string): string[] {
  try {
    const parsed = new URL(url);
    return [decodeURIComponent(parsed.password), parsed.password].filter(Boolean);
  } catch {
    return [];
  }
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
