import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { connectionFor, deletePrefix, randomName, systemFor } from '../helpers/bullmq-jobs.js';
import { LIBS } from '../helpers/bullmq-libs.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * The oldest waiting job's age is how long it has waited to run, not how old it is: a job
 * created two hours ago whose attempt just failed and was put back has waited seconds. Real
 * BullMQ, both majors, with a worker processing by hand (BullMQ's manual `getNextJob` API).
 */
const redisUrl = testRedisUrl();
const HOUR = 3_600_000;

describe.each(LIBS)('oldestWaitingSeconds, BullMQ $major', ({ lib }) => {
  const prefix = randomName('old');
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    await deletePrefix(redisUrl, prefix);
  });

  it('counts from the last attempt of a job that was retried, and from creation for a fresh one', async () => {
    const name = randomName('q');
    const queue = new lib.Queue(name, { connection: connectionFor(redisUrl), prefix });
    closers.push(() => queue.close());
    const backend = createBullmqBackend(systemFor(redisUrl, prefix, [name]));
    closers.push(() => backend.close());

    // Created two hours ago (BullMQ's `timestamp` option), never run: it has waited two hours.
    await queue.add('send', { n: 1 }, { timestamp: Date.now() - 2 * HOUR, attempts: 2 });
    const fresh = (await backend.status()).queues[0]!;
    expect(fresh.oldestWaitingSeconds).toBeGreaterThanOrEqual(7199);

    // A worker takes it and its attempt fails: BullMQ puts it back in wait for its second attempt.
    const worker = new lib.Worker(name, null, {
      connection: connectionFor(redisUrl),
      prefix,
      autorun: false,
    });
    closers.push(() => worker.close());
    const token = 'manual-token';
    const job = await worker.getNextJob(token);
    expect(job?.name).toBe('send');
    await job!.moveToFailed(new Error('ProviderError: 503'), token, true);
    expect(await queue.getJobState(job!.id!)).toBe('waiting');

    const retried = (await backend.status()).queues[0]!;
    expect(retried.waiting).toBe(1);
    expect(retried.oldestWaitingSeconds).toBeLessThan(60);
  });
});
