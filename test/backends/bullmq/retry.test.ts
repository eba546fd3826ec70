import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BullmqBackend, createBullmqBackend } from '../../../src/backends/bullmq/index.js';
import { RETRY_BATCH } from '../../../src/backends/bullmq/retry.js';
import {
  connectionFor,
  deletePrefix,
  ProviderError,
  randomName,
  seedFailedJobs,
  systemFor,
  waitFor,
} from '../../helpers/bullmq-jobs.js';
import { LIBS } from '../../helpers/bullmq-libs.js';
import { testRedisUrl } from '../../helpers/test-redis.js';

const redisUrl = testRedisUrl();

describe.each(LIBS)('retry of failed jobs on BullMQ $major', ({ lib, version }) => {
  let prefix: string;
  let queueName: string;
  let backend: BullmqBackend;
  let queue: InstanceType<typeof lib.Queue>;
  let redis: Redis;

  beforeEach(async () => {
    prefix = randomName('rt');
    queueName = randomName('q');
    queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix });
    backend = createBullmqBackend(systemFor(redisUrl, prefix, [queueName]));
    redis = new Redis(redisUrl);
  });

  afterEach(async () => {
    await backend.close();
    await queue.close();
    redis.disconnect();
    await deletePrefix(redisUrl, prefix);
  });

  /** `count` jobs that a real worker of this major fails `attempts` times each, oldest first. */
  async function failJobs(count: number, attempts = 2): Promise<string[]> {
    const jobs = await queue.addBulk(
      Array.from({ length: count }, (_, n) => ({
        name: 'send',
        data: { n, secret: 'token-never-shown' },
        opts: { attempts, ...(n === 0 ? { priority: 5 } : {}) },
      })),
    );
    const worker = new lib.Worker(
      queueName,
      async (job) => {
        throw new ProviderError(job.data.n % 3 === 0 ? 'APNs 429 TooManyRequests' : 'ECONNRESET by <peer>');
      },
      { connection: connectionFor(redisUrl), prefix, concurrency: 1 },
    );
    try {
      await waitFor('every job to fail', async () => (await queue.getJobCounts('failed')).failed === count);
    } finally {
      await worker.close();
    }
    return jobs.map((j) => j.id!);
  }

  it('previews how many and which errors without changing anything, newest first, never the data', async () => {
    await failJobs(12);
    expect(await redis.hget(`${prefix}:${queueName}:meta`, 'version')).toContain(version);
    const preview = await backend.previewRetry(queueName, { all: true, limit: 5 });
    expect(preview.count).toBe(5);
    expect(preview.failed).toBe(12);
    expect(preview.topErrors.reduce((sum, e) => sum + e.count, 0)).toBe(5);
    expect(preview.topErrors.map((e) => e.error).sort()).toEqual(
      expect.arrayContaining([expect.stringMatching(/APNs 429|ECONNRESET/)]),
    );
    expect(JSON.stringify(preview)).not.toContain('token-never-shown');
    expect((await queue.getJobCounts('failed')).failed).toBe(12);
  });

  it('retries one job in place: same id and data, attempts reset, off the failed set, and a worker runs it', async () => {
    const ids = await failJobs(3);
    const id = ids[1]!;
    expect((await lib.Job.fromId(queue, id))?.attemptsMade).toBe(2);
    const outcome = await backend.retry(queueName, { jobId: id });
    expect(outcome).toEqual({ queue: queueName, retried: 1, ids: { [id]: id }, skipped: 0 });
    const job = await lib.Job.fromId(queue, id);
    expect(await job!.getState()).toBe('waiting');
    expect(job!.attemptsMade).toBe(0);
    expect(job!.failedReason ?? null).toBeNull();
    expect(job!.data).toMatchObject({ n: 1 });
    expect((await queue.getJobCounts('failed')).failed).toBe(2);

    // all its attempts again: a worker that fails once more retries it (attempts: 2) before failing
    let runs = 0;
    const worker = new lib.Worker(
      queueName,
      async (j) => {
        if (j.id !== id) throw new Error('only the retried job may run');
        runs++;
        if (runs === 1) throw new Error('still failing');
        return 'ok';
      },
      { connection: connectionFor(redisUrl), prefix },
    );
    try {
      await waitFor('the retried job to complete', async () => (await job!.getState()) === 'completed');
    } finally {
      await worker.close();
    }
    expect(runs).toBe(2);
  });

  it('retries all up to the limit, newest failures first, in a few round trips, and reports progress', async () => {
    await failJobs(40);
    const newest = await redis.zrevrange(`${prefix}:${queueName}:failed`, 0, 24);
    const before = backend.stats();
    const seen: [number, number][] = [];
    const outcome = await backend.retry(queueName, { all: true, limit: 25 }, (done, total) =>
      seen.push([done, total]),
    );
    const cost = backend.stats().roundTrips - before.roundTrips;
    expect(outcome.retried).toBe(25);
    expect(outcome.skipped).toBe(0);
    expect(Object.keys(outcome.ids).sort()).toEqual([...newest].sort());
    expect(Object.entries(outcome.ids).every(([from, to]) => from === to)).toBe(true);
    // head (ZCARD, version, ZREVRANGE) + options + one batch of scripts (+ at most one EVAL retry)
    expect(cost).toBeLessThanOrEqual(5);
    expect(seen[0]).toEqual([0, 25]);
    expect(seen.at(-1)).toEqual([25, 25]);
    const counts = await queue.getJobCounts('failed', 'waiting', 'prioritized');
    expect(counts.failed).toBe(15);
    expect((counts.waiting ?? 0) + (counts.prioritized ?? 0)).toBe(25);
    for (const id of newest) {
      const job = await lib.Job.fromId(queue, id);
      expect(job!.attemptsMade).toBe(0);
    }
  });

  it('keeps two batches on their way, reports both as on their way, and puts the jobs back in order', async () => {
    const base = `${prefix}:${queueName}:`;
    await seedFailedJobs(redis, base, 1_000);
    const newest = await redis.zrevrange(`${base}failed`, 0, -1);
    // Each report: done, and the ids on their way (sent, not answered), which it lists in full.
    const seen: [number, number][] = [];
    const named: boolean[] = [];
    const outcome = await backend.retry(queueName, { all: true, limit: 1_000 }, (done, _total, sofar) => {
      const onTheirWay = Object.keys(sofar.unconfirmed ?? {}).sort();
      named.push(
        Object.keys(sofar.ids).length === done &&
          JSON.stringify(onTheirWay) === JSON.stringify(newest.slice(done, done + onTheirWay.length).sort()),
      );
      seen.push([done, onTheirWay.length]);
    });
    expect(named.every(Boolean)).toBe(true);
    expect(outcome.retried).toBe(1_000);
    // The second batch goes out before the first is answered, each next one as the oldest answers.
    const B = RETRY_BATCH;
    expect(seen).toEqual([
      [0, 0],
      [0, B],
      [0, 2 * B],
      [B, B],
      [B, 2 * B],
      [2 * B, B],
      [2 * B, 2 * B],
      [3 * B, B],
      [4 * B, 0],
    ]);
    // Redis ran them in the order sent: each batch pushed after the one before it.
    expect(await redis.lrange(`${base}wait`, 0, -1)).toEqual([...newest].reverse());
    expect(await redis.zcard(`${base}failed`)).toBe(0);
  });

  it('takes the newest of a big failed set off it by rank, and leaves exactly the older ones', async () => {
    const base = `${prefix}:${queueName}:`;
    await seedFailedJobs(redis, base, 1_000);
    const newest = await redis.zrevrange(`${base}failed`, 0, -1);
    // A whole batch, then part of one: each a run of the set from its newest end.
    const outcome = await backend.retry(queueName, { all: true, limit: 300 });
    expect(outcome).toMatchObject({ retried: 300, skipped: 0 });
    expect(await redis.zrevrange(`${base}failed`, 0, -1)).toEqual(newest.slice(300));
    expect(await redis.lrange(`${base}wait`, 0, -1)).toEqual(newest.slice(0, 300).reverse());
  });

  it('says which job ids are valid, and that there is nothing to retry', async () => {
    await expect(backend.retry('no-such-queue', { jobId: '1' })).rejects.toMatchObject({
      code: 'UnknownQueue',
    });
    const ids = await failJobs(1);
    await expect(backend.retry(queueName, { jobId: 'nope' })).rejects.toMatchObject({
      code: 'UnknownJob',
      params: { id: 'nope' },
    });
    await backend.retry(queueName, { jobId: ids[0]! });
    await expect(backend.previewRetry(queueName, { all: true, limit: 10 })).rejects.toMatchObject({
      code: 'NothingToRetry',
    });
    await expect(backend.retry(queueName, { all: true, limit: 1001 })).rejects.toMatchObject({
      code: 'BadArgument',
    });
  });
});
