import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import type { QueueBackend } from '../../src/backends/queue-backend.js';
import { type BullmqSystemConfig, type CelerySystemConfig, configSchema } from '../../src/config/schema.js';
import { OpsError } from '../../src/errors.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { publishCelery, redisDbUrl, startCeleryWorker } from '../helpers/celery-worker.js';

// Every test here runs on redis-servers of its own, which it stops and starts again on the same
// port; nothing touches the shared test Redis.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
});

async function privateRedis(port?: number): Promise<PrivateRedis> {
  const redis = await startPrivateRedis(port === undefined ? {} : { port });
  cleanups.push(() => redis.stop());
  return redis;
}

function system<T>(entry: Record<string, unknown>): T {
  return configSchema.parse({ systems: [entry] }).systems[0] as T;
}

/**
 * `call` fails RedisUnavailable while Redis is down: it does not wait for Redis to come back,
 * which no test here does before this has answered (a call that waited would never settle). How
 * soon it answers is counted on stopped timers, not a wall clock, in contract.ts and
 * bullmq-failures.test.ts.
 */
async function unavailable(call: () => Promise<unknown>): Promise<void> {
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpsError);
  expect((error as OpsError).code).toBe('RedisUnavailable');
}

/**
 * Calls `read` until `done` holds, for at most 15 seconds (usually well under one; the margin is
 * for a loaded machine, where a reconnect can take seconds); returns the last value.
 */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What Celery's Redis result backend does for a failed task: SETEX the meta, PUBLISH it. */
async function storeFailure(redis: Redis, id: string, queue: string): Promise<void> {
  const meta = JSON.stringify({
    status: 'FAILURE',
    result: { exc_type: 'ValueError', exc_message: [`boom ${id}`], exc_module: 'builtins' },
    traceback: 'Traceback…',
    children: [],
    date_done: new Date().toISOString().replace('Z', ''),
    name: 'tasks.boom',
    args: [],
    kwargs: {},
    worker: 'w1@lab',
    retries: 0,
    queue,
    task_id: id,
  });
  await redis
    .multi()
    .setex(`celery-task-meta-${id}`, 86_400, meta)
    .publish(`celery-task-meta-${id}`, meta)
    .exec();
}

describe('a backend whose Redis went away and came back', () => {
  const cases: [string, (url: string) => QueueBackend][] = [
    [
      'bullmq',
      (url) =>
        createBullmqBackend(
          system<BullmqSystemConfig>({ name: 'pushizo', type: 'bullmq', redis: url, queues: ['sends'] }),
        ),
    ],
    [
      'celery',
      (url) =>
        createCeleryBackend(
          system<CelerySystemConfig>({
            name: 'zeus',
            type: 'celery',
            redis: url,
            queues: ['celery'],
            inspectTimeoutMs: 200,
          }),
        ),
    ],
  ];

  for (const [type, make] of cases) {
    it(`${type}: answers the first status call after Redis is back, not the last failure`, async () => {
      const first = await privateRedis();
      const backend = make(first.url);
      cleanups.push(() => backend.close());
      expect((await backend.status()).queues).toHaveLength(1);

      await first.stop();
      await unavailable(() => backend.status());
      // Long enough for the client to be between two background reconnect attempts.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await unavailable(() => backend.status());

      await privateRedis(first.port);
      const status = await backend.status();
      expect(status.queues.map((q) => q.name)).toHaveLength(1);
    });
  }

  it('bullmq: counts the jobs of the restarted Redis, not those it saw before', async () => {
    const first = await privateRedis();
    const backend = make();
    function make() {
      const created = createBullmqBackend(
        system<BullmqSystemConfig>({ name: 'pushizo', type: 'bullmq', redis: first.url, queues: ['sends'] }),
      );
      cleanups.push(() => created.close());
      return created;
    }
    const add = async () => {
      const connection = new Redis(first.url, { maxRetriesPerRequest: null });
      const queue = new Queue('sends', { connection });
      await queue.add('push', {});
      await queue.close();
      connection.disconnect();
    };
    await add();
    await add();
    expect((await backend.status()).queues[0]?.waiting).toBe(2);
    await first.stop();
    await unavailable(() => backend.status());
    await privateRedis(first.port);
    await add();
    expect((await backend.status()).queues[0]?.waiting).toBe(1);
  });
});

describe('the Celery failure index across a Redis restart', () => {
  it('rescans when its subscription reconnects and keeps following what Celery publishes', async () => {
    const first = await privateRedis();
    const writer = new Redis(first.url, { maxRetriesPerRequest: 1 });
    writer.on('error', () => {});
    cleanups.push(async () => writer.disconnect());
    const backend = createCeleryBackend(
      system<CelerySystemConfig>({
        name: 'zeus',
        type: 'celery',
        redis: first.url,
        queues: ['celery'],
        inspectTimeoutMs: 200,
      }),
      // Only the reconnect may explain a rescan within this test.
      { rescanIntervalMs: 3_600_000 },
    );
    cleanups.push(() => backend.close());
    const failed = async () => (await backend.status()).queues[0]!.failed;

    await storeFailure(writer, 'before-restart', 'celery');
    expect(await eventually(failed, (n) => n === 1)).toBe(1);

    await first.stop();
    await unavailable(() => backend.status());
    await privateRedis(first.port);
    // Stored before the subscriber is back (its next attempt is up to half a second away), so
    // only a rescan can find it; the restarted Redis no longer holds the first failure.
    await writer.set(
      'celery-task-meta-while-away',
      JSON.stringify({
        status: 'FAILURE',
        result: { exc_type: 'KeyError' },
        queue: 'celery',
        task_id: 'while-away',
      }),
    );
    // Under load the subscriber can be back before that write; dropping its connection now makes
    // its reconnect (and so the rescan under test) come after the write in every run.
    await writer.client('KILL', 'TYPE', 'pubsub');
    const ids = async () => (await backend.dlq('celery', 10)).jobs.map((j) => j.id).join(',');
    expect(await eventually(ids, (v) => v === 'while-away')).toBe('while-away');
    expect(await failed()).toBe(1);

    // And the subscription itself came back: a published failure counts without any rescan.
    await storeFailure(writer, 'after-restart', 'celery');
    expect(await eventually(failed, (n) => n === 2)).toBe(2);
  });
});

describe('the Celery failure index next to another app on the same Redis', () => {
  it("counts a real worker's failures only in the DB they were stored in, though Redis publishes them to every DB", async () => {
    const redis = await privateRedis();
    const ours = redisDbUrl(redis.url, 1);
    const theirs = redisDbUrl(redis.url, 2);
    const make = (url: string) => {
      const backend = createCeleryBackend(
        system<CelerySystemConfig>({
          name: 'zeus',
          type: 'celery',
          redis: url,
          queues: ['celery'],
          inspectTimeoutMs: 200,
        }),
        { rescanIntervalMs: 3_600_000 },
      );
      cleanups.push(() => backend.close());
      return backend;
    };
    const zeus = make(ours);
    const neighbour = make(theirs);
    // Both indexes are built (scanned and subscribed) before the failure happens.
    expect((await zeus.status()).queues[0]?.failed).toBe(0);
    expect((await neighbour.status()).queues[0]?.failed).toBe(0);

    const worker = await startCeleryWorker({ brokerUrl: theirs, queues: ['celery'], name: 'w-neighbour' });
    cleanups.push(() => worker.stop());
    await publishCelery({ brokerUrl: theirs }, [
      { task: 'tasks.boom', args: ['not ours'], queue: 'celery', wait: true },
    ]);

    const failed = async (backend: QueueBackend) => (await backend.status()).queues[0]!.failed;
    expect(
      await eventually(
        () => failed(neighbour),
        (n) => n === 1,
      ),
    ).toBe(1);
    // Give a wrongly counted message the same time to show up.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await failed(zeus)).toBe(0);
    expect((await zeus.dlq('celery', 10)).jobs).toEqual([]);
  });
});
