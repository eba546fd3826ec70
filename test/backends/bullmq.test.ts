import type { JobType } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BullmqBackend, createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { freePort } from '../../src/lib/redis-server.js';
import {
  connectionFor,
  deletePrefix,
  ProviderError,
  randomName,
  systemFor,
  waitFor,
} from '../helpers/bullmq-jobs.js';
import { type BullmqLib, LIBS } from '../helpers/bullmq-libs.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { type BackendFixture, describeQueueBackend, type SeedQueue } from './contract.js';

const redisUrl = testRedisUrl();

/** Seeds with BullMQ's own Queue.add, and a real Worker whose processor throws each failure. */
async function makeFixture(lib: BullmqLib): Promise<BackendFixture> {
  const prefix = randomName();
  const connection = connectionFor(redisUrl);
  const backend = createBullmqBackend(systemFor(redisUrl, prefix));
  const closers: (() => Promise<void>)[] = [];
  const opened = new Map<string, InstanceType<BullmqLib['Queue']>>();
  /** BullMQ's own Queue for `name`, opened once. */
  const open = (name: string) => {
    let queue = opened.get(name);
    if (!queue) {
      queue = new lib.Queue(name, { connection, prefix });
      opened.set(name, queue);
      const closing = queue;
      closers.push(() => closing.close());
    }
    return queue;
  };
  return {
    backend,
    redis: { url: redisUrl },
    oracle: {
      async counts(name) {
        // 5.x parks a paused queue's jobs in `paused`, a state 6.x's types no longer name.
        const states = ['wait', 'paused', 'prioritized', 'delayed', 'failed'] as JobType[];
        const c = await open(name).getJobCounts(...states);
        return {
          waiting: (c.wait ?? 0) + (c.paused ?? 0),
          prioritized: c.prioritized ?? 0,
          delayed: c.delayed ?? 0,
          failed: c.failed ?? 0,
        };
      },
      async failedIds(name) {
        return (await open(name).getFailed(0, -1)).map((job) => String(job.id));
      },
      isPaused: (name) => open(name).isPaused(),
      async nextIds(name, limit) {
        // getWaiting asks for the list in ascending order: the oldest first, as a worker takes them.
        return (await open(name).getWaiting(0, limit - 1)).map((job) => String(job.id));
      },
      async retryAll(name) {
        await open(name).retryJobs({ state: 'failed' });
      },
      async retryOne(name, id) {
        const job = await open(name).getJob(id);
        await job!.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      },
      async jobFields(name, id) {
        // The job's hash as BullMQ left it: which fields a retry keeps, resets or drops.
        const redis = new Redis(redisUrl);
        try {
          return (await redis.hkeys(`${prefix}:${name}:${id}`)).sort();
        } finally {
          redis.disconnect();
        }
      },
      concurrency: (name) => open(name).getGlobalConcurrency(),
      async holdNext(name) {
        const holder = new lib.Worker(name, null, {
          connection,
          prefix,
          autorun: false,
          name: 'contract-holder',
        });
        closers.push(() => holder.close(true));
        const job = await holder.getNextJob('contract-token');
        const active = await open(name).getActive();
        return { id: String(job?.id), active: active.map((j) => String(j.id)) };
      },
    },
    async seed(queues: SeedQueue[]) {
      for (const seed of queues) {
        const queue = open(seed.name);
        if (seed.failures.length > 0) {
          for (const failure of seed.failures) {
            await queue.add(failure.taskName, { to: 'user-1' }, { attempts: 1 });
          }
          const worker = new lib.Worker(
            seed.name,
            async (job) => {
              const failure = seed.failures[Number(job.id) - 1]!;
              throw new ProviderError(failure.error);
            },
            { connection, prefix },
          );
          await waitFor('the failures', async () => (await queue.getFailedCount()) === seed.failures.length);
          await worker.close();
        }
        for (let i = 0; i < seed.waiting; i++) await queue.add('deliver', { to: `user-${i}` });
      }
    },
    unreachableBackend() {
      // A port nobody listens on; the password must never surface in the error.
      return createBullmqBackend(systemFor(`redis://:secret-password@127.0.0.1:${unreachablePort}`, prefix));
    },
    async cleanup() {
      await backend.close();
      for (const close of closers) await close();
      await deletePrefix(redisUrl, prefix);
    },
  };
}

let unreachablePort = 1;
beforeEach(async () => {
  unreachablePort = await freePort();
});

// Each major is its own system for the suite: BullMQ 5 and 6 keep a queue's state differently
// (5 parks a paused queue's jobs in `paused`), and the backend must answer as each one does.
for (const { major, lib } of LIBS) describeQueueBackend(`bullmq ${major}.x`, () => makeFixture(lib));

for (const { major, lib, version } of LIBS)
  describe(`BullMQ ${major}.x queues`, () => {
    let prefix: string;
    let queueName: string;
    const connection = connectionFor(redisUrl);
    const closers: (() => Promise<void>)[] = [];
    let backend: BullmqBackend;
    let clock = Date.now();

    beforeEach(() => {
      prefix = randomName();
      queueName = randomName('q');
      clock = Date.now();
      backend = createBullmqBackend(systemFor(redisUrl, prefix), { now: () => clock });
    });

    afterEach(async () => {
      await backend.close();
      while (closers.length > 0) await closers.pop()!();
      await deletePrefix(redisUrl, prefix);
    });

    function open(name: string) {
      const queue = new lib.Queue(name, { connection, prefix });
      closers.push(() => queue.close());
      return queue;
    }

    /**
     * One queue holding jobs in every state, each put there by BullMQ itself: a Worker completes and
     * fails jobs, a manual Worker holds one active, a FlowProducer leaves a parent waiting for its
     * children, and Queue.add makes waiting, prioritized and delayed jobs.
     */
    async function buildEveryState() {
      const queue = open(queueName);
      await queue.add('send-push', { token: 'a' });
      await queue.add('send-push', { token: 'b' });
      await queue.add('send-push', { token: 'c' }, { attempts: 2, backoff: 0 });
      await queue.add('render', { template: 'x' });
      await queue.add('noop', {});
      await queue.add('noop', {});
      const worker = new lib.Worker(
        queueName,
        async (job) => {
          if (job.name === 'send-push')
            throw new ProviderError('ProviderError: APNs 503 Service Unavailable');
          if (job.name === 'render')
            throw new TypeError("Cannot read properties of undefined (reading 'title')");
          return 'ok';
        },
        { connection, prefix },
      );
      await waitFor(
        'completed and failed jobs',
        async () => (await queue.getFailedCount()) === 4 && (await queue.getCompletedCount()) === 2,
      );
      await worker.close();

      await queue.add('hold', {});
      const holder = new lib.Worker(queueName, null, { connection, prefix, autorun: false });
      closers.push(() => holder.close(true));
      const held = await holder.getNextJob('holder-token');
      expect(held?.name).toBe('hold');

      const first = await queue.add('deliver', { n: 1 });
      await queue.add('deliver', { n: 2 });
      await queue.add('deliver', { n: 3 });
      await queue.add('urgent', { n: 4 }, { priority: 1 });
      await queue.add('later', { n: 5 }, { priority: 5 });
      await queue.add('scheduled', { n: 6 }, { delay: 3_600_000 });
      await queue.add('scheduled', { n: 7 }, { delay: 7_200_000 });

      const flows = new lib.FlowProducer({ connection, prefix });
      closers.push(() => flows.close());
      await flows.add({
        name: 'digest',
        queueName,
        data: {},
        children: [{ name: 'collect', queueName: `${queueName}-children`, data: {} }],
      });
      return { queue, first };
    }

    function ours(counts: Record<string, number>) {
      return {
        waiting: (counts.waiting ?? 0) + (counts.paused ?? 0),
        active: counts.active,
        delayed: counts.delayed,
        prioritized: counts.prioritized,
        failed: counts.failed,
        completed: counts.completed,
        waitingChildren: counts['waiting-children'],
      };
    }

    it('counts every state exactly as Queue.getJobCounts does', async () => {
      const { queue } = await buildEveryState();
      const status = await backend.status([queueName]);
      const counts = await queue.getJobCounts();
      expect(status.queues).toHaveLength(1);
      const row = status.queues[0]!;
      expect(row).toMatchObject(ours(counts));
      // Not a vacuous equality: every state holds something.
      expect(row).toMatchObject({
        name: queueName,
        waiting: 3,
        active: 1,
        prioritized: 2,
        delayed: 2,
        failed: 4,
        completed: 2,
        waitingChildren: 1,
        isPaused: false,
      });
    });

    it('ages the backlog by the next job to be picked', async () => {
      const { first } = await buildEveryState();
      clock = first.timestamp + 90_500;
      const row = (await backend.status([queueName])).queues[0]!;
      expect(row.oldestWaitingSeconds).toBe(90);
    });

    it('falls back to the most urgent prioritized job when nothing else waits, and to null when nothing does', async () => {
      const queue = open(queueName);
      await queue.add('low', {}, { priority: 9 });
      const urgent = await queue.add('urgent', {}, { priority: 1 });
      const empty = open(randomName('q'));
      await empty.add('x', {}, { delay: 60_000 });
      clock = urgent.timestamp + 12_000;
      const row = (await backend.status([queueName])).queues[0]!;
      expect(row).toMatchObject({ waiting: 0, prioritized: 2, oldestWaitingSeconds: 12 });

      const quiet = (await backend.status([empty.name])).queues[0]!;
      expect(quiet).toMatchObject({ waiting: 0, delayed: 1, oldestWaitingSeconds: null });
    });

    it('follows a pause and resume made with BullMQ, and keeps counting the waiting jobs', async () => {
      const { queue, first } = await buildEveryState();
      await queue.pause();
      clock = first.timestamp + 5_000;
      let row = (await backend.status([queueName])).queues[0]!;
      expect(row).toMatchObject({ ...ours(await queue.getJobCounts()), isPaused: true, waiting: 3 });
      expect(row.oldestWaitingSeconds).toBe(5);
      await queue.resume();
      row = (await backend.status([queueName])).queues[0]!;
      expect(row).toMatchObject({ ...ours(await queue.getJobCounts()), isPaused: false, waiting: 3 });
    });

    it(`pauses and resumes through BullMQ ${major}.x, leaving the queue's version alone`, async () => {
      const queue = open(queueName);
      await queue.add('deliver', {});
      await queue.add('deliver', {});
      const admin = new Redis(redisUrl);
      closers.push(async () => admin.disconnect());
      const versionBefore = await admin.hget(`${prefix}:${queueName}:meta`, 'version');
      expect(versionBefore).toMatch(new RegExp(`^${version.replace('.', '\\.')}`));

      await expect(backend.pause(queueName)).resolves.toEqual({ queue: queueName, isPaused: true });
      expect(await queue.isPaused()).toBe(true);
      // Each major parks waiting jobs in its own place: 5.x renames wait to paused, 6.x leaves them.
      const parked = await admin.llen(`${prefix}:${queueName}:paused`);
      expect(parked).toBe(major === 5 ? 2 : 0);
      expect((await backend.status([queueName])).queues[0]).toMatchObject({ isPaused: true, waiting: 2 });

      await expect(backend.resume(queueName)).resolves.toEqual({ queue: queueName, isPaused: false });
      expect(await queue.isPaused()).toBe(false);
      expect(await admin.llen(`${prefix}:${queueName}:wait`)).toBe(2);
      expect(await admin.hget(`${prefix}:${queueName}:meta`, 'version')).toBe(versionBefore);
    });

    it('lists each worker by its name, like Queue.getWorkers', async () => {
      const queue = open(queueName);
      const named = new lib.Worker(queueName, async () => 'ok', { connection, prefix, name: 'w-alpha' });
      const unnamed = new lib.Worker(queueName, async () => 'ok', { connection, prefix });
      const events = new lib.QueueEvents(queueName, { connection, prefix });
      closers.push(
        () => named.close(),
        () => unnamed.close(),
        () => events.close(),
      );
      await Promise.all([named.waitUntilReady(), unnamed.waitUntilReady(), events.waitUntilReady()]);
      await waitFor('both workers to register', async () => (await queue.getWorkers()).length === 2);

      const workers = await backend.workers();
      expect(workers).toHaveLength((await queue.getWorkers()).length);
      const alpha = workers.find((w) => w.name === 'w-alpha');
      expect(alpha).toMatchObject({ name: 'w-alpha', queues: [queueName] });
      expect(alpha?.idleSeconds).toBeGreaterThanOrEqual(0);
      const other = workers.find((w) => w.name !== 'w-alpha');
      expect(other?.name).toMatch(/^127\.0\.0\.1:\d+$/);

      const status = await backend.status();
      expect(status.workers.map((w) => w.name).sort()).toEqual(workers.map((w) => w.name).sort());
    });
  });
