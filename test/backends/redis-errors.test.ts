import { Redis, ReplyError } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRedisClient,
  ensureConnected,
  toRedisForbidden,
  toRedisUnavailable,
} from '../../src/backends/redis-client.js';
import { classifyRedisError, isConnectionFailure, isPlainReply } from '../../src/backends/redis-errors.js';
import { ErrorCode, OpsError } from '../../src/errors.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';

/**
 * The one classifier of Redis errors (src/backends/redis-errors.ts), fed what a real Redis 7 and
 * ioredis throw: which ones mean "Redis cannot serve us now" (RedisUnavailable, resumable), which
 * are a refusal of this user (RedisForbidden), and which are an answer to what was sent.
 */
describe('classifyRedisError, on what a real Redis answers', () => {
  let server: PrivateRedis;
  let admin: Redis;
  const failureOf = async (work: () => Promise<unknown>): Promise<unknown> =>
    work().then(
      () => {
        throw new Error('expected a failure');
      },
      (error: unknown) => error,
    );

  beforeAll(async () => {
    server = await startPrivateRedis();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  it('OOM at maxmemory: a reply, not Redis going away', async () => {
    await admin.config('SET', 'maxmemory', '1');
    try {
      const error = await failureOf(() => admin.set('k', 'v'));
      expect(classifyRedisError(error)).toEqual({ kind: 'oom', replied: true, unavailable: false });
      expect(isPlainReply(error)).toBe(true);
      expect(isConnectionFailure(error)).toBe(false);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
  });

  it('NOPERM of an ACL user: forbidden, named as RedisForbidden', async () => {
    await admin.call('ACL', 'SETUSER', 'reader', 'on', '>pw', '~*', '+get');
    const reader = new Redis(`redis://reader:pw@127.0.0.1:${server.port}`, { enableReadyCheck: false });
    try {
      const error = await failureOf(() => reader.set('k', 'v'));
      expect(classifyRedisError(error)).toMatchObject({
        kind: 'forbidden',
        replied: true,
        unavailable: false,
      });
      expect(toRedisForbidden('pushizo', error)?.code).toBe(ErrorCode.RedisForbidden);
      expect(
        toRedisForbidden('pushizo', new ReplyError('WRONGTYPE Operation against a key')),
      ).toBeUndefined();
    } finally {
      reader.disconnect();
    }
  });

  it('BUSY while a script runs past the threshold: Redis cannot serve us now', async () => {
    await admin.config('SET', 'busy-reply-threshold', '10');
    const runner = new Redis(server.url);
    const looping = runner.eval('while true do end', 0).catch(() => undefined);
    try {
      let error: unknown;
      for (let i = 0; i < 200 && error === undefined; i++) {
        error = await admin.ping().then(
          () => undefined,
          (e: unknown) => e,
        );
      }
      expect(String((error as Error).message)).toMatch(/^BUSY/);
      expect(classifyRedisError(error)).toEqual({ kind: 'busy', replied: true, unavailable: true });
      expect(isConnectionFailure(error)).toBe(true);
      expect(isPlainReply(error)).toBe(false);
    } finally {
      await admin.call('SCRIPT', 'KILL').catch(() => undefined);
      await looping;
      runner.disconnect();
      await admin.config('SET', 'busy-reply-threshold', '5000');
    }
  });

  it('a connection refused, and LOADING: unavailable, worded for the user', async () => {
    // As the backends meet it: their client, whose wait for ready throws the socket's own error.
    const nobody = createRedisClient('redis://127.0.0.1:1');
    const refused = await failureOf(() => ensureConnected(nobody));
    nobody.disconnect();
    expect(classifyRedisError(refused)).toEqual({ kind: 'refused', replied: false, unavailable: true });
    expect(toRedisUnavailable('pushizo', refused).params.reason).toBe('connection refused');
    const loading = new ReplyError('LOADING Redis is loading the dataset in memory');
    expect(classifyRedisError(loading)).toEqual({ kind: 'loading', replied: true, unavailable: true });
  });

  it('a bug of ours and a coded error are neither a reply nor Redis going away', () => {
    expect(classifyRedisError(new TypeError("Cannot read properties of undefined (reading 'id')"))).toEqual({
      kind: 'ours',
      replied: false,
      unavailable: true,
    });
    expect(isConnectionFailure(new TypeError('x'))).toBe(false);
    const coded = new OpsError(ErrorCode.UnknownJob, {});
    expect(classifyRedisError(coded)).toEqual({ kind: 'coded', replied: false, unavailable: false });
    expect(isConnectionFailure(coded)).toBe(false);
  });
});
