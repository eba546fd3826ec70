import { createServer, type Server, type Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRedisClient, ensureConnected, toRedisUnavailable } from '../../src/backends/redis-client.js';
import { freePort, type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { withTimersFrozen } from '../helpers/frozen-timers.js';
import { testRedisUrl } from '../helpers/test-redis.js';

// Writes nothing to the shared test Redis; the SIGSTOP tests use a private redis-server of their own.

/**
 * Resolves to what `ensureConnected` did. No wall-clock bound here: the timeouts are set short
 * (`client`), the servers that hang never answer while a call waits, and the message says which
 * deadline ended the wait; a wait nothing ends shows as the test's own timeout.
 */
async function outcome(client: Redis, timeoutMs?: number): Promise<string> {
  return ensureConnected(client, timeoutMs).then(
    () => 'ready',
    (error: unknown) => `rejected: ${(error as Error).message}`,
  );
}

const clients: Redis[] = [];
function client(url: string, options: Parameters<typeof createRedisClient>[1] = {}): Redis {
  // A command timeout far above the bound: the connect deadline alone must end the wait.
  const created = createRedisClient(url, {
    connectTimeoutMs: 300,
    commandTimeoutMs: 30_000,
    connectionName: 'queue-ops-test',
    ...options,
  });
  clients.push(created);
  return created;
}
afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect();
});

describe('ensureConnected', () => {
  let silent: Server;
  let silentPort: number;
  const sockets: Socket[] = [];
  let stopped: PrivateRedis;

  beforeAll(async () => {
    silent = createServer((socket) => {
      sockets.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as { port: number }).port;
    stopped = await startPrivateRedis();
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
    if (stopped?.pid) process.kill(stopped.pid, 'SIGCONT');
    await stopped?.stop();
  });

  it('connects a lazy client to a live Redis, and is a no-op once it is ready', async () => {
    const redis = client(testRedisUrl());
    expect(redis.status).toBe('wait');
    expect(await outcome(redis)).toBe('ready');
    expect(redis.status).toBe('ready');
    expect(await outcome(redis)).toBe('ready');
    expect(await redis.ping()).toBe('PONG');
  });

  it('lets two callers wait for the same connect', async () => {
    const redis = client(testRedisUrl());
    expect(await Promise.all([outcome(redis), outcome(redis)])).toEqual(['ready', 'ready']);
  });

  it('gives up on a server that accepts the connection and never writes, after connectTimeout', async () => {
    const redis = client(`redis://127.0.0.1:${silentPort}`);
    expect(await outcome(redis)).toBe('rejected: connect timeout');
    // Still bounded on the next call, when the client is already half-connected.
    expect(['connect', 'connecting', 'reconnecting']).toContain(redis.status);
    expect(await outcome(redis)).toBe('rejected: connect timeout');
    expect(sockets.length).toBeGreaterThan(0);
  });

  it('gives up on a SIGSTOPped redis-server, and connects once it runs again', async () => {
    expect(stopped.pid).toBeDefined();
    process.kill(stopped.pid!, 'SIGSTOP');
    const redis = client(stopped.url);
    try {
      expect(await outcome(redis)).toBe('rejected: connect timeout');
      expect(toRedisUnavailable('zeus', new Error('connect timeout')).params.reason).toBe(
        'connect timed out',
      );
    } finally {
      process.kill(stopped.pid!, 'SIGCONT');
    }
    // The client kept its connection attempt alive in the background: the next call gets through.
    expect(await outcome(redis)).toBe('ready');
    expect(await redis.ping()).toBe('PONG');
  });

  it('fails at once with the socket error on a closed port, not with "Connection is closed"', async () => {
    const redis = client(`redis://127.0.0.1:${await freePort()}`);
    // At once: with timers stopped, only the refusal itself can end the wait.
    const result = await withTimersFrozen(() => outcome(redis));
    expect(result).toMatch(/^rejected: .*ECONNREFUSED/);
    expect(toRedisUnavailable('zeus', new Error(result)).params.reason).toBe('connection refused');
  });

  it('honours an explicit bound shorter than connectTimeout', async () => {
    // connectTimeout (60 s) is beyond the test's own timeout: only the 200 ms bound can end it.
    const redis = client(`redis://127.0.0.1:${silentPort}`, { connectTimeoutMs: 60_000 });
    expect(await outcome(redis, 200)).toBe('rejected: connect timeout');
  });
});
