import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { connectionFor, deletePrefix, randomName, systemFor } from '../helpers/bullmq-jobs.js';
import { LIBS, queueTakenByHand } from '../helpers/bullmq-libs.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * Throughput and durations of real BullMQ queues, both majors. Jobs are taken and finished by a
 * real Worker by hand (`getNextJob`, `moveToCompleted`, `moveToFailed`) while the test sets the
 * clock BullMQ reads (`Date` only; timers and I/O run for real), so every `timestamp`,
 * `processedOn` and `finishedOn` is one the test chose, and the expected wait and run times are
 * known exactly.
 */
const redisUrl = testRedisUrl();
const T0 = Date.UTC(2026, 11, 3, 1, 0, 0);
const SECOND = 1000;

/** Adds a job at `added`, starts it at `started` and finishes it at `finished`, BullMQ doing each step. */
async function runJob(
  queue: {
    add(
      name: string,
      data: unknown,
      opts: { timestamp: number; removeOnComplete?: number },
    ): Promise<unknown>;
  },
  worker: {
    getNextJob(token: string): Promise<
      | {
          moveToFailed(error: Error, token: string, fetchNext: boolean): Promise<unknown>;
          moveToCompleted(value: string, token: string, fetchNext: boolean): Promise<unknown>;
        }
      | undefined
    >;
  },
  times: { added: number; started: number; finished: number; fail?: boolean; keep?: number },
): Promise<void> {
  vi.setSystemTime(times.added);
  await queue.add(
    'send',
    { secret: 'payload' },
    { timestamp: times.added, ...(times.keep === undefined ? {} : { removeOnComplete: times.keep }) },
  );
  vi.setSystemTime(times.started);
  const token = randomName('tok');
  const job = await worker.getNextJob(token);
  if (!job) throw new Error('no job to take');
  vi.setSystemTime(times.finished);
  if (times.fail) await job.moveToFailed(new Error('ProviderError: 503'), token, false);
  else await job.moveToCompleted('done', token, false);
}

describe.each(LIBS)('throughput and durations, BullMQ $major', ({ lib }) => {
  const prefix = randomName('tp');
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    await deletePrefix(redisUrl, prefix);
  });

  const open = (name: string, workerOptions: Record<string, unknown> = {}) =>
    queueTakenByHand(name, { url: redisUrl, prefix, lib }, closers, workerOptions);

  it('rates, and wait and run p50/p95, are those of the jobs the test timed', async () => {
    const name = randomName('q');
    const { queue, worker } = open(name);
    vi.useFakeTimers({ toFake: ['Date'] });
    // Ten completed jobs: job k waited k seconds and ran 100·k ms; two failed ones.
    for (let k = 1; k <= 10; k++) {
      const added = T0 + k * 10 * SECOND;
      await runJob(queue, worker, {
        added,
        started: added + k * SECOND,
        finished: added + k * SECOND + 100 * k,
      });
    }
    for (let k = 1; k <= 2; k++) {
      const added = T0 + 200 * SECOND + k * SECOND;
      await runJob(queue, worker, {
        added,
        started: added + 50 * SECOND,
        finished: added + 50 * SECOND + 5 * SECOND,
        fail: true,
      });
    }
    const now = T0 + 5 * 60 * SECOND;
    const backend = createBullmqBackend(systemFor(redisUrl, prefix, [name]), { now: () => now });
    closers.push(() => backend.close());

    const status = await backend.status(undefined, {
      throughput: { spanMs: 5 * 60 * SECOND, sample: 100 },
    });
    const tp = status.queues[0]!.throughput!;
    expect(tp.source).toBe('jobs');
    expect(tp.completed).toBe(10);
    expect(tp.failed).toBe(2);
    // Ten jobs are too few to be a trimmed set: the rate is over the 5 minutes asked for.
    expect(tp.spanMs).toBe(5 * 60 * SECOND);
    expect(tp.completedPerMinute).toBe(2);
    expect(tp.failedPerMinute).toBeCloseTo(0.4, 9);
    expect(tp.sampled).toBe(12);
    // Waits: 1..10 s and 50 s twice (12 values): p50 is the 6th, p95 the 12th.
    expect(tp.wait).toEqual({ p50Ms: 6 * SECOND, p95Ms: 50 * SECOND });
    // Runs: 100..1000 ms and 5 s twice.
    expect(tp.run).toEqual({ p50Ms: 600, p95Ms: 5 * SECOND });

    // A sample of 3 per set reads the newest three completed and both failed jobs only.
    const small = await backend.status(undefined, {
      throughput: { spanMs: 5 * 60 * SECOND, sample: 3, raw: true },
    });
    const few = small.queues[0]!.throughput!;
    expect(few.sampled).toBe(5);
    expect(few.durations).toEqual([
      { waitMs: 10 * SECOND, runMs: 1000 },
      { waitMs: 9 * SECOND, runMs: 900 },
      { waitMs: 8 * SECOND, runMs: 800 },
      { waitMs: 50 * SECOND, runMs: 5 * SECOND },
      { waitMs: 50 * SECOND, runMs: 5 * SECOND },
    ]);

    // Only what finished after `since` counts: the last 30 s hold nothing (the last job finished at 257 s).
    const lastMinute = await backend.status(undefined, {
      throughput: { spanMs: 30 * SECOND, sample: 100 },
    });
    expect(lastMinute.queues[0]!.throughput).toMatchObject({
      completed: 0,
      failed: 0,
      completedPerMinute: 0,
      sampled: 0,
      wait: { unknown: 'noFinishedJobs' },
      run: { unknown: 'noFinishedJobs' },
    });
    // Plain status reads no throughput at all.
    expect((await backend.status()).queues[0]!.throughput).toBeUndefined();
  });

  // 60 kept is a small set (a listpack in Redis), 200 a big one (a skiplist): the script counts
  // them in a different order, to the same result.
  it.each([
    [60, 60 * SECOND],
    [200, 199.5 * SECOND],
  ])(
    'a completed set trimmed to its newest %i is a rate over what it keeps, not the whole span',
    async (keep, span) => {
      const name = randomName('q');
      const { queue, worker } = open(name);
      vi.useFakeTimers({ toFake: ['Date'] });
      // One a second for keep + 40 s, each kept among the newest `keep` only: the oldest kept
      // finished 40.5 s after the first, `keep` − 0.5 s before now.
      const jobs = keep + 40;
      const now = T0 + jobs * SECOND;
      for (let k = 0; k < jobs; k++) {
        const finished = T0 + k * SECOND + 500;
        await runJob(queue, worker, { added: finished - 300, started: finished - 200, finished, keep });
      }
      const backend = createBullmqBackend(systemFor(redisUrl, prefix, [name]), { now: () => now });
      closers.push(() => backend.close());
      expect((await queue.getJobCounts('completed')).completed).toBe(keep);
      const status = await backend.status(undefined, { throughput: { spanMs: 5 * 60 * SECOND, sample: 20 } });
      const tp = status.queues[0]!.throughput!;
      expect(tp.completed).toBe(keep);
      // Under a minute, the floor of a minute applies.
      expect(tp.spanMs).toBe(span);
      expect(tp.completedPerMinute).toBeCloseTo(keep / (span / 60_000), 6);
      expect(tp.sampled).toBe(20);
      expect(tp.wait).toEqual({ p50Ms: 100, p95Ms: 100 });
      expect(tp.run).toEqual({ p50Ms: 200, p95Ms: 200 });
    },
  );

  it("uses BullMQ's own metrics when the workers collect them, and says so", async () => {
    const name = randomName('q');
    // removeOnComplete: the completed set keeps nothing; only the metrics know how many finished.
    const { queue, worker } = open(name, { metrics: { maxDataPoints: 60 }, removeOnComplete: { count: 0 } });
    vi.useFakeTimers({ toFake: ['Date'] });
    // 3 jobs in minute 0, 5 in minute 2, 2 in minute 3 (each finished 1 s after it started).
    const plan = [...Array(3).fill(0), ...Array(5).fill(2), ...Array(2).fill(3)] as number[];
    for (const [i, minute] of plan.entries()) {
      const added = T0 + minute * 60 * SECOND + i * 100;
      await runJob(queue, worker, { added, started: added + 10, finished: added + 1010 });
    }
    const now = T0 + 3 * 60 * SECOND + 30 * SECOND;
    const backend = createBullmqBackend(systemFor(redisUrl, prefix, [name]), { now: () => now });
    closers.push(() => backend.close());
    const metrics = await queue.getMetrics('completed');

    const status = await backend.status(undefined, {
      throughput: { spanMs: 3 * 60 * SECOND, sample: 50 },
    });
    const tp = status.queues[0]!.throughput!;
    expect(tp.source).toBe('metrics');
    expect(tp.totals?.completed).toBe(metrics.meta.count);
    expect(metrics.meta.count).toBe(10);
    // Three whole minutes cover the last 3: minutes 1, 2 and the open minute 3, i.e. 0 + 5 + 2
    // jobs over the 2.5 minutes from minute 1's start to now.
    expect(tp.completed).toBe(7);
    expect(tp.spanMs).toBe(2 * 60 * SECOND + 30 * SECOND);
    expect(tp.completedPerMinute).toBeCloseTo(7 / 2.5, 6);
    // Nothing kept to time: the durations are unknown, not 0.
    expect(tp.sampled).toBe(0);
    expect(tp.run).toEqual({ unknown: 'noFinishedJobs' });
  });

  it.each([
    ['the status read (rates only)', 0],
    ['the throughput read (jobs timed)', 50],
  ])("%s reads BullMQ's metrics for the one queue of several that collects them", async (_, sample) => {
    // One read over three queues: the first keeps its jobs (no metrics needed), the second keeps
    // nothing and collects no metrics, the third keeps nothing and collects them.
    const keeps = randomName('q1');
    const nothing = randomName('q2');
    const counted = randomName('q3');
    const kept = open(keeps);
    const bare = open(nothing, { removeOnComplete: { count: 0 } });
    const metered = open(counted, { metrics: { maxDataPoints: 60 }, removeOnComplete: { count: 0 } });
    vi.useFakeTimers({ toFake: ['Date'] });
    // The first queue's jobs in minute 0, the others' in minute 2; the last minute is asked.
    for (let i = 0; i < 4; i++) {
      const added = T0 + i * SECOND;
      await runJob(kept.queue, kept.worker, { added, started: added + 10, finished: added + 510 });
      for (const { queue, worker } of [bare, metered]) {
        const later = added + 2 * 60 * SECOND;
        await runJob(queue, worker, { added: later, started: later + 10, finished: later + 510 });
      }
    }
    const now = T0 + 2 * 60 * SECOND + 30 * SECOND;
    const backend = createBullmqBackend(systemFor(redisUrl, prefix, [keeps, nothing, counted]), {
      now: () => now,
    });
    closers.push(() => backend.close());

    const status = await backend.status([keeps, nothing, counted], {
      throughput: { spanMs: 60 * SECOND, sample },
    });
    const byName = new Map(status.queues.map((q) => [q.name, q.throughput!]));
    // The kept jobs finished before the span: the set reaches back, the count (0) is exact.
    expect(byName.get(keeps)).toMatchObject({ source: 'jobs', completed: 0, completedPerMinute: 0 });
    expect(byName.get(nothing)).toMatchObject({ completedPerMinute: null });
    expect(byName.get(nothing)!.unknown?.completed).toBeDefined();
    expect(byName.get(counted)).toMatchObject({ source: 'metrics', completed: 4 });
  });

  it('counts delayed jobs by when they are due', async () => {
    const name = randomName('q');
    const queue = new lib.Queue(name, { connection: connectionFor(redisUrl), prefix });
    closers.push(() => queue.close());
    const now = Date.now();
    const delays = [60_000, 4 * 60_000, 10 * 60_000, 2 * 3_600_000, 3_600_000 * 30, 3_600_000 * 40];
    for (const delay of delays) await queue.add('campaign', {}, { delay, timestamp: now });
    // Many in the same millisecond: BullMQ's counter in the score's low bits keeps them apart.
    for (let i = 0; i < 20; i++) await queue.add('same-minute', {}, { delay: 30 * 60_000, timestamp: now });
    const backend = createBullmqBackend(systemFor(redisUrl, prefix, [name]), { now: () => now });
    closers.push(() => backend.close());
    const status = await backend.status([name], { delayedDue: true });
    const q = status.queues[0]!;
    expect(q.delayed).toBe(26);
    expect(q.delayedDue).toEqual({ next5m: 2, nextHour: 21, nextDay: 1, later: 2 });
  });
});
