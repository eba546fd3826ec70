import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { RETRY_BATCH } from '../../src/backends/bullmq/retry.js';
import { seedFailedJobs, systemFor } from '../helpers/bullmq-jobs.js';
import { FaultyRedis } from './fault-fixture.js';

const JOBS = 1_000;

/**
 * A retry in a long-lived bot whose Redis hangs (SIGSTOP) after its first batch: the caller is
 * answered at the backend's deadline, and the user is told how far it got. When Redis wakes up,
 * the batch that was already on its way may land, but nothing after it: the retry's loop must not
 * go on sending batches behind an answer already given (and audited).
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
      const reports: number[] = [];
      const retrying = backend.retry('webhooks', { all: true, limit: JOBS }, (done) => {
        reports.push(done);
        // The first batch is back: Redis hangs before the second is answered.
        if (done === RETRY_BATCH && reports.filter((d) => d === RETRY_BATCH).length === 1) redis.pause();
      });
      await expect(retrying).rejects.toMatchObject({
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
      // The first batch, and at most the one on its way when Redis stopped.
      expect([RETRY_BATCH, 2 * RETRY_BATCH]).toContain(waiting);
      expect(await client.zcard(`${base}failed`)).toBe(JOBS - waiting);
    } finally {
      await backend.close();
    }
  }, 60_000);
});
