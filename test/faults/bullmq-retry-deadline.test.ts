import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { RETRY_BATCH, RETRY_BATCHES_IN_FLIGHT } from '../../src/backends/bullmq/retry.js';
import type { RetrySoFar } from '../../src/backends/queue-backend.js';
import { seedFailedJobs, systemFor } from '../helpers/bullmq-jobs.js';
import { FaultyRedis } from './fault-fixture.js';

const JOBS = 1_000;

/**
 * A retry in a long-lived bot whose Redis hangs (SIGSTOP) as its second batch is sent, the first
 * not answered yet: the caller is answered at the backend's deadline, and the user is told how far
 * it got and which batches were on their way. When Redis wakes up, those may land, but nothing
 * after them: the retry's loop must not go on sending batches behind an answer already given (and
 * audited).
 */
describe('a BullMQ retry answered at its deadline while its Redis hangs', () => {
  let redis: FaultyRedis;
  let client: Redis;

  beforeAll(async () => {
    redis = await FaultyRedis.start();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => {});
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  it('sends no batch after the answer, once Redis is back', async () => {
    const base = 'hs:webhooks:';
    await seedFailedJobs(client, base, JOBS);
    // Commands may wait longer than the backend's 4.5 s deadline (a slow Redis, a long command
    // timeout): the deadline answers the caller while the batch sent is still pending.
    const backend = createBullmqBackend(systemFor(redis.url, 'hs', ['webhooks']), {
      commandTimeoutMs: 10_000,
    });
    try {
      let last: RetrySoFar | undefined;
      let paused = false;
      const retrying = backend.retry('webhooks', { all: true, limit: JOBS }, (_done, _total, sofar) => {
        last = sofar;
        // Told as the second batch goes out behind the first: Redis hangs before it arrives.
        const onTheirWay = Object.keys(sofar.unconfirmed ?? {}).length;
        if (!paused && onTheirWay === RETRY_BATCHES_IN_FLIGHT * RETRY_BATCH) {
          paused = true;
          redis.pause();
        }
      });
      // What the user is told when answered: done, and the batches on their way.
      let told: RetrySoFar | undefined;
      await expect(
        retrying.catch((error: unknown) => {
          told = last && { ...last };
          throw error;
        }),
      ).rejects.toMatchObject({
        code: 'RedisUnavailable',
        params: { reason: 'command timed out' },
      });
      redis.resume();
      // Redis works through what it was sent while stopped, and the retry's loop, had it gone
      // on, would send its next batches: wait until the count has settled.
      let waiting = -1;
      for (let settled = 0; settled < 3; ) {
        await new Promise((r) => setTimeout(r, 150));
        const now = await client.llen(`${base}wait`);
        settled = now === waiting ? settled + 1 : 0;
        waiting = now;
      }
      // The batches answered and those on their way when the answer was given, and no other.
      const onTheirWay = Object.keys(told?.unconfirmed ?? {}).length;
      expect(onTheirWay).toBeLessThanOrEqual(RETRY_BATCHES_IN_FLIGHT * RETRY_BATCH);
      expect(waiting).toBe(told!.retried + onTheirWay);
      expect(waiting).toBeLessThan(JOBS);
      expect(await client.zcard(`${base}failed`)).toBe(JOBS - waiting);
    } finally {
      await backend.close();
    }
  }, 60_000);
});
