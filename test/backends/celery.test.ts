import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import { createPidboxClient } from '../../src/backends/celery/pidbox.js';
import type { QueueBackend } from '../../src/backends/queue-backend.js';
import { statusMessage } from '../../src/blocks/status.js';
import { type CelerySystemConfig, configSchema } from '../../src/config/schema.js';
import { OpsError } from '../../src/errors.js';
import {
  assertCeleryInstalled,
  type CeleryTarget,
  type CeleryWorker,
  publishCelery,
  redisDbUrl,
  startCeleryWorker,
} from '../helpers/celery-worker.js';
import { redisMonitor } from '../helpers/redis-monitor.js';
import { testRedisUrl } from '../helpers/test-redis.js';

// This file owns Redis DBs 5 (broker and results, one shared worker) and 9 (global_keyprefix).
// Pub/sub channels carry the DB number, so workers here never answer another file's backend.
const DB = 5;
const PREFIX_DB = 9;
const SEP = '\x06\x16';

const base = testRedisUrl();
const brokerUrl = redisDbUrl(base, DB);
const target: CeleryTarget = { brokerUrl };

function celerySystem(overrides: Record<string, unknown> = {}): CelerySystemConfig {
  const config = configSchema.parse({
    systems: [{ name: 'zeus', type: 'celery', redis: brokerUrl, inspectTimeoutMs: 1500, ...overrides }],
  });
  return config.systems[0] as CelerySystemConfig;
}

async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Where queue-ops records its pauses in this broker (no global_keyprefix here). */
const PAUSE_MARKS = 'queue-ops:paused';

/**
 * Celery's own remote control, as `celery control add_consumer` would send it: changes a
 * worker's queues behind queue-ops' back. Answers the workers that replied.
 */
async function control(method: 'add_consumer' | 'cancel_consumer', queue: string, to?: string[]) {
  const client = new Redis(brokerUrl);
  const pidbox = createPidboxClient({
    client,
    createBlockingClient: () => new Redis(brokerUrl),
    layout: { globalKeyprefix: '', prioritySteps: [0, 3, 6, 9], separator: SEP, fanoutPrefix: true, db: DB },
  });
  try {
    const { replies } = await pidbox.broadcast(method, { queue }, { timeoutMs: 2000, destination: to });
    return replies.map((r) => r.worker).sort();
  } finally {
    await pidbox.close();
    client.disconnect();
  }
}

/** Queues the named worker consumes right now, as it tells Celery's own `active_queues`. */
async function consumedBy(zeus: QueueBackend, name: string): Promise<string[] | undefined> {
  return (await zeus.workers()).find((w) => w.name === name)?.queues;
}

let redis: Redis;
let worker: CeleryWorker;
const backends: QueueBackend[] = [];
function backend(overrides: Record<string, unknown> = {}, options = {}) {
  const created = createCeleryBackend(celerySystem(overrides), options);
  backends.push(created);
  return created;
}

beforeAll(async () => {
  assertCeleryInstalled();
  redis = new Redis(brokerUrl);
  await redis.flushdb();
  worker = await startCeleryWorker({
    ...target,
    name: 'qo-main',
    queues: ['celery', 'celery:alarm_processing'],
    concurrency: 2,
  });
});

afterEach(async () => {
  await Promise.all(backends.splice(0).map((b) => b.close()));
});

afterAll(async () => {
  await worker?.stop();
  await redis?.flushdb();
  await redis?.quit();
});

describe('celery backend, queue depth', () => {
  it('sums waiting messages over the priority lists exactly as kombu counts them', async () => {
    const queue = 'celery:ota_processing';
    const published = await publishCelery(
      target,
      [
        ...Array.from({ length: 3 }, () => ({ task: 'tasks.add', args: [1, 1], queue, priority: 0 })),
        ...Array.from({ length: 2 }, () => ({ task: 'tasks.add', args: [2, 2], queue, priority: 5 })),
        ...Array.from({ length: 4 }, () => ({ task: 'tasks.add', args: [3, 3], queue, priority: 9 })),
      ],
      [queue],
    );
    // The messages really are spread over three of kombu's lists, so the base list alone is not enough.
    expect(await redis.llen(queue)).toBe(3);
    expect(await redis.llen(`${queue}${SEP}3`)).toBe(2);
    expect(await redis.llen(`${queue}${SEP}9`)).toBe(4);

    const status = await backend().status([queue]);
    expect(status.queues).toHaveLength(1);
    expect(status.queues[0]).toMatchObject({ name: queue, waiting: 9, active: 0 });
    expect(status.queues[0]?.waiting).toBe(published.lengths[queue]);
    await redis.del(queue, `${queue}${SEP}3`, `${queue}${SEP}9`);
  });

  it('discovers queues from kombu bindings, leaving out pidbox, reply and event plumbing', async () => {
    await publishCelery(target, [
      { task: 'tasks.add', args: [1, 2], queue: 'celery:measurement_processing' },
    ]);
    const queues = await backend().listQueues();
    expect(queues).toEqual(
      expect.arrayContaining(['celery', 'celery:alarm_processing', 'celery:measurement_processing']),
    );
    expect(queues.some((q) => q.endsWith('.pidbox') || q.startsWith('celeryev'))).toBe(false);
    expect(queues).toEqual([...queues].sort());
    await redis.del('celery:measurement_processing');
  });

  it('uses the configured queue list instead of discovery when one is given', async () => {
    const queues = await backend({ queues: ['celery:notification_sending', 'celery'] }).listQueues();
    expect(queues).toEqual(['celery', 'celery:notification_sending']);
  });

  it('names the valid queues and the likely one for an unknown queue', async () => {
    const error = await backend()
      .status(['celery:alarm_procesing'])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpsError);
    expect((error as OpsError).code).toBe('UnknownQueue');
    expect((error as OpsError).params).toMatchObject({
      system: 'zeus',
      queue: 'celery:alarm_procesing',
      suggestion: 'celery:alarm_processing',
    });
    expect((error as OpsError).params.valid).toEqual(
      expect.arrayContaining(['celery', 'celery:alarm_processing']),
    );
  });

  it("reports the head message and its past ETA; the wait since a sighting is the monitor's to tell", async () => {
    const queue = 'celery:default';
    let clock = Date.now();
    const watched = backend({}, { now: () => clock });
    await publishCelery(target, [{ task: 'tasks.add', args: [1, 1], queue }]);
    const first = await watched.status([queue]);
    // Celery messages carry no enqueue time: the broker alone cannot know the age.
    expect(first.queues[0]?.oldestWaitingSeconds).toBeNull();
    expect(first.queues[0]?.headId).toBeTruthy();
    clock += 42_000;
    // Nor does this process remember a sighting of its own: one source, the monitor's stored one.
    const later = await watched.status([queue]);
    expect(later.queues[0]?.oldestWaitingSeconds).toBeNull();
    expect(later.queues[0]?.headId).toBe(first.queues[0]?.headId);
    await redis.del(queue);

    await publishCelery(target, [{ task: 'tasks.add', args: [1, 1], queue, etaSeconds: -600 }]);
    const overdue = await backend().status([queue]);
    expect(overdue.queues[0]?.oldestWaitingSeconds).toBeGreaterThanOrEqual(590);
    expect(overdue.queues[0]?.oldestWaitingFrom).toBe('due');
    await redis.del(queue);
  });
});

describe('celery backend, failures from the result backend', () => {
  it('counts and samples FAILURE results per queue, newest first, as ExcType and first line only', async () => {
    const queue = 'celery:alarm_processing';
    await publishCelery(target, [
      { task: 'tasks.boom', args: ['sensor 7 offline\nTraceback-ish detail'], queue, wait: true },
      { task: 'tasks.boom', args: ['sensor 7 offline\nother detail'], queue, wait: true },
      {
        task: 'tasks.boom',
        args: ['broker reset'],
        kwargs: { exc_type: 'ConnectionError' },
        queue,
        wait: true,
      },
      { task: 'tasks.add', args: [2, 2], queue, wait: true },
    ]);
    const zeus = backend();
    const status = await zeus.status(['celery:alarm_processing', 'celery']);
    const byName = new Map(status.queues.map((q) => [q.name, q]));
    expect(byName.get(queue)?.failed).toBe(3);
    expect(byName.get('celery')?.failed).toBe(0);

    const sample = await zeus.dlq(queue, 2);
    expect(sample.total).toBe(3);
    expect(sample.jobs).toHaveLength(2);
    expect(sample.jobs[0]).toMatchObject({
      name: 'tasks.boom',
      error: 'ConnectionError: broker reset',
      attempts: 1,
    });
    expect(sample.jobs[1]?.error).toBe('ValueError: sensor 7 offline');
    expect(Object.keys(sample.jobs[0]!).sort()).toEqual(['attempts', 'error', 'failedAt', 'id', 'name']);
    expect(Math.abs((sample.jobs[0]?.failedAt ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(sample.jobs[0]!.failedAt!).toBeGreaterThanOrEqual(sample.jobs[1]!.failedAt!);
    expect(sample.topErrors).toEqual([
      { error: 'ValueError: sensor <n> offline', count: 2, example: 'ValueError: sensor 7 offline' },
      { error: 'ConnectionError: broker reset', count: 1, example: 'ConnectionError: broker reset' },
    ]);
    expect(sample.groupedOver).toBe(3);
  });

  it('keeps failure counts fresh from what Celery publishes, without scanning again', async () => {
    const queue = 'celery:alarm_processing';
    const zeus = backend();
    const before = (await zeus.status([queue])).queues[0]!.failed;

    const { monitor, close: closeMonitor } = await redisMonitor(brokerUrl);
    const scans: string[] = [];
    monitor.on('monitor', (_time: string, args: string[], _source: string, database: string) => {
      if (Number(database) === DB && String(args[0]).toLowerCase() === 'scan') scans.push(args.join(' '));
    });
    try {
      await publishCelery(target, [{ task: 'tasks.boom', args: ['late failure'], queue, wait: true }]);
      const after = await waitFor(
        () => zeus.status([queue]),
        (s) => s.queues[0]!.failed === before + 1,
      );
      expect(after.queues[0]?.failed).toBe(before + 1);
      expect((await zeus.dlq(queue, 1)).jobs[0]?.error).toBe('ValueError: late failure');
      expect(scans.filter((s) => s.includes('celery-task-meta'))).toEqual([]);
    } finally {
      closeMonitor();
    }
  });
});

describe('celery backend, workers over pidbox', () => {
  it('lists the worker with its queues, pool facts and running task, never its arguments', async () => {
    const { ids } = await publishCelery(target, [
      { task: 'tasks.sleepy', args: [4], kwargs: {}, queue: 'celery', priority: 0 },
    ]);
    const zeus = backend();
    const workers = await waitFor(
      () => zeus.workers(),
      (ws) => (ws.find((w) => w.name === worker.name)?.activeTasks ?? []).some((t) => t.id === ids[0]),
    );
    const me = workers.find((w) => w.name === worker.name);
    expect(me).toBeDefined();
    expect(me?.queues).toEqual(['celery', 'celery:alarm_processing']);
    expect(me?.details).toMatchObject({ concurrency: 2, processes: 2 });
    expect(me?.details?.pid).toEqual(expect.any(Number));
    expect(me?.details?.uptimeSeconds).toEqual(expect.any(Number));
    const task = me?.activeTasks?.find((t) => t.id === ids[0]);
    expect(task?.name).toBe('tasks.sleepy');
    expect(Object.keys(task ?? {}).sort()).toEqual(['id', 'name', 'startedAt']);
    expect(Math.abs((task?.startedAt ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(JSON.stringify(workers)).not.toMatch(/args|kwargs/);

    const status = await zeus.status(['celery', 'celery:alarm_processing']);
    expect(status.queues.find((q) => q.name === 'celery')?.active).toBe(1);
    expect(status.queues.find((q) => q.name === 'celery:alarm_processing')?.active).toBe(0);
    expect(status.workers.find((w) => w.name === worker.name)?.active).toBe(1);
    expect(status.warnings).toEqual([]);
    // The reply queues and their bindings are gone once the replies are in.
    expect(await redis.keys('*reply.celery.pidbox*')).toEqual([]);
  });

  it('shows the tasks a worker reserved and has not started (inspect reserved), ids and names only', async () => {
    // Two pool processes busy, and the worker prefetches more than it runs: those wait reserved.
    const { ids } = await publishCelery(
      target,
      Array.from({ length: 5 }, () => ({
        task: 'tasks.sleepy',
        args: [2],
        queue: 'celery:alarm_processing',
      })),
    );
    const zeus = backend();
    const workers = await waitFor(
      () => zeus.workers(),
      (ws) => (ws.find((w) => w.name === worker.name)?.reserved ?? 0) > 0,
    );
    const me = workers.find((w) => w.name === worker.name)!;
    expect(me.reservedTasks!.length).toBe(me.reserved);
    for (const task of me.reservedTasks!) {
      expect(ids).toContain(task.id);
      expect(Object.keys(task).sort()).toEqual(['id', 'name']);
      expect(task.name).toBe('tasks.sleepy');
    }
    expect(JSON.stringify(me)).not.toMatch(/args|kwargs/);
    // The tests after this one pause that queue: let the sleepers finish first.
    await waitFor(
      () => zeus.workers(),
      (ws) => {
        const w = ws.find((x) => x.name === worker.name);
        return (w?.reserved ?? 0) === 0 && !(w?.activeTasks ?? []).some((t) => ids.includes(t.id));
      },
    );
  });

  it('does not call a queue paused just because no worker consumes it', async () => {
    const status = await backend({ queues: ['celery', 'celery:ota_processing'] }).status();
    expect(status.queues.find((q) => q.name === 'celery')?.isPaused).toBe(false);
    // Nobody paused it: it has no consumer, which the worker list says (and status flags as "no workers").
    expect(status.queues.find((q) => q.name === 'celery:ota_processing')?.isPaused).toBe(false);
    expect(status.workers.find((w) => w.name === worker.name)?.queues).not.toContain('celery:ota_processing');
    expect(status.warnings).toEqual([]);
  });

  it('pauses a queue by cancelling its consumer on every worker, and resumes it', async () => {
    const queue = 'celery:alarm_processing';
    const zeus = backend();
    const paused = await zeus.pause!(queue);
    expect(paused).toEqual({ queue, isPaused: true, workersAnswered: [worker.name] });
    expect((await zeus.status([queue])).queues[0]?.isPaused).toBe(true);

    const { ids } = await publishCelery(target, [{ task: 'tasks.add', args: [20, 22], queue }]);
    // The worker is alive and polling: a task on a queue it still consumes runs.
    await publishCelery(target, [{ task: 'tasks.add', args: [1, 1], queue: 'celery', wait: true }]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await zeus.status([queue])).queues[0]?.waiting).toBe(1);
    expect(await redis.get(`celery-task-meta-${ids[0]}`)).toBeNull();

    const resumed = await zeus.resume!(queue);
    expect(resumed).toEqual({ queue, isPaused: false, workersAnswered: [worker.name] });
    const result = await waitFor(
      () => redis.get(`celery-task-meta-${ids[0]}`),
      (value) => value !== null,
    );
    expect(JSON.parse(result ?? '{}')).toMatchObject({ status: 'SUCCESS', result: 42 });
    expect((await zeus.status([queue])).queues[0]).toMatchObject({ waiting: 0, isPaused: false });
  });

  it('records a pause in the broker, so another replica sees it and can lift it', async () => {
    const queue = 'celery:alarm_processing';
    const before = Date.now();
    await backend().pause!(queue);
    const mark = JSON.parse((await redis.hget(PAUSE_MARKS, queue)) ?? 'null');
    expect(mark).toEqual({ at: expect.any(String), workers: [worker.name] });
    expect(Date.parse(mark.at)).toBeGreaterThanOrEqual(before - 1000);

    // A fresh backend, as in another bot replica or the CLI: no memory of the pause but the record.
    const replica = backend();
    const status = await replica.status([queue, 'celery']);
    expect(status.queues.map((q) => [q.name, q.isPaused])).toEqual([
      [queue, true],
      ['celery', false],
    ]);
    expect(status.warnings).toEqual([]);

    expect(await replica.resume!(queue)).toEqual({ queue, isPaused: false, workersAnswered: [worker.name] });
    expect(await redis.hexists(PAUSE_MARKS, queue)).toBe(0);
    expect((await backend().status([queue])).queues[0]?.isPaused).toBe(false);
    expect(await consumedBy(replica, worker.name)).toContain(queue);
  });

  it('keeps a queue paused but warns when a worker started later consumes it again', async () => {
    const queue = 'celery:alarm_processing';
    const zeus = backend();
    await zeus.pause!(queue);
    // A worker (re)started with its usual -Q subscribes to the queue whatever queue-ops recorded.
    const restarted = await startCeleryWorker({ ...target, name: 'qo-restarted', queues: [queue] });
    try {
      const status = await zeus.status([queue]);
      expect(status.queues[0]?.isPaused).toBe(true);
      expect(status.warnings).toEqual([{ code: 'PausedButConsumed', params: { queue, consumers: 1 } }]);
      const text = JSON.stringify(
        statusMessage(
          {
            scope: 'zeus',
            generatedAt: new Date(),
            systems: [{ name: 'zeus', type: 'celery', ok: true, status }],
          },
          'en',
        ),
      );
      expect(text).toContain('was paused through queue-ops, but 1 worker consumes it again');

      // Resume restarts the worker that was paused; the restarted one already consumes.
      const resumed = await zeus.resume!(queue);
      expect(resumed.workersAnswered).toEqual([worker.name]);
      const after = await zeus.status([queue]);
      expect(after.queues[0]?.isPaused).toBe(false);
      expect(after.warnings).toEqual([]);
    } finally {
      await restarted.stop();
    }
  });

  it('resumes only the workers that consumed the queue when it was paused', async () => {
    const queue = 'celery:ota_processing';
    const zeus = backend();
    // Every live worker acknowledges the cancel, but none was consuming this queue.
    expect((await zeus.pause!(queue)).workersAnswered).toEqual([worker.name]);
    expect(JSON.parse((await redis.hget(PAUSE_MARKS, queue)) ?? 'null')?.workers).toEqual([]);
    expect((await zeus.status([queue])).queues[0]?.isPaused).toBe(true);

    expect(await zeus.resume!(queue)).toEqual({ queue, isPaused: false, workersAnswered: [] });
    expect(await consumedBy(zeus, worker.name)).not.toContain(queue);
    expect((await zeus.status([queue])).queues[0]?.isPaused).toBe(false);
  });

  it('resumes a queue without a pause record on every worker, as before', async () => {
    const queue = 'celery:notification_sending';
    const zeus = backend({ queues: ['celery', queue] });
    try {
      expect(await consumedBy(zeus, worker.name)).not.toContain(queue);
      expect(await zeus.resume!(queue)).toEqual({ queue, isPaused: false, workersAnswered: [worker.name] });
      expect(await consumedBy(zeus, worker.name)).toContain(queue);
    } finally {
      await control('cancel_consumer', queue, [worker.name]);
      await waitFor(
        () => consumedBy(zeus, worker.name),
        (queues) => !queues?.includes(queue),
      );
    }
  });

  it('falls back to every worker when the workers it paused are gone', async () => {
    const queue = 'celery:notification_sending';
    const zeus = backend({ queues: ['celery', queue] });
    await redis.hset(
      PAUSE_MARKS,
      queue,
      JSON.stringify({ at: new Date().toISOString(), workers: ['celery@scaled-down'] }),
    );
    try {
      expect((await zeus.status([queue])).queues[0]?.isPaused).toBe(true);
      expect(await zeus.resume!(queue)).toEqual({ queue, isPaused: false, workersAnswered: [worker.name] });
      expect(await redis.hexists(PAUSE_MARKS, queue)).toBe(0);
    } finally {
      await redis.hdel(PAUSE_MARKS, queue);
      await control('cancel_consumer', queue, [worker.name]);
      await waitFor(
        () => consumedBy(zeus, worker.name),
        (queues) => !queues?.includes(queue),
      );
    }
  });

  it('refuses to call a pause done when no worker answered', async () => {
    const lonely = backend({ redis: redisDbUrl(base, PREFIX_DB), queues: ['celery'] });
    const error = await lonely.pause!('celery').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpsError);
    expect((error as OpsError).code).toBe('NoWorkersAnswered');
    expect((error as OpsError).params).toMatchObject({ system: 'zeus', queue: 'celery', action: 'pause' });
  });
});

describe('celery backend, kombu global_keyprefix', () => {
  it('finds queues, depth, failures and workers under the prefix, and nothing without it', async () => {
    const prefixedUrl = redisDbUrl(base, PREFIX_DB);
    const prefixed: CeleryTarget = { brokerUrl: prefixedUrl, globalKeyprefix: 'pfx:' };
    const db = new Redis(prefixedUrl);
    await db.flushdb();
    const prefixWorker = await startCeleryWorker({ ...prefixed, name: 'qo-prefixed', queues: ['celery'] });
    try {
      const { lengths } = await publishCelery(
        prefixed,
        [
          { task: 'tasks.add', args: [1, 1], queue: 'celery:ota_processing', priority: 0 },
          { task: 'tasks.add', args: [1, 1], queue: 'celery:ota_processing', priority: 9 },
          { task: 'tasks.boom', args: ['prefixed failure'], queue: 'celery', wait: true },
        ],
        ['celery:ota_processing'],
      );
      expect(await db.llen(`pfx:celery:ota_processing${SEP}9`)).toBe(1);

      const zeus = backend({ redis: prefixedUrl, globalKeyprefix: 'pfx:' });
      expect(await zeus.listQueues()).toEqual(expect.arrayContaining(['celery', 'celery:ota_processing']));
      const status = await zeus.status(['celery', 'celery:ota_processing']);
      expect(status.queues.find((q) => q.name === 'celery:ota_processing')?.waiting).toBe(
        lengths['celery:ota_processing'],
      );
      expect(lengths['celery:ota_processing']).toBe(2);
      expect(status.queues.find((q) => q.name === 'celery')?.failed).toBe(1);
      expect(status.workers.map((w) => w.name)).toEqual([prefixWorker.name]);

      // The pause record lives under the prefix too, beside the app's own keys.
      await zeus.pause!('celery');
      expect(await db.hexists('pfx:queue-ops:paused', 'celery')).toBe(1);
      expect(await db.exists('queue-ops:paused')).toBe(0);
      expect((await zeus.status(['celery'])).queues[0]?.isPaused).toBe(true);
      await zeus.resume!('celery');
      expect(await db.exists('pfx:queue-ops:paused')).toBe(0);

      const unprefixed = backend({ redis: prefixedUrl });
      expect(await unprefixed.listQueues()).toEqual([]);
      expect(await unprefixed.workers()).toEqual([]);
    } finally {
      await prefixWorker.stop();
      await db.flushdb();
      await db.quit();
    }
  });
});
