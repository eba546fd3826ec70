import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import type { QueueBackend } from '../../src/backends/queue-backend.js';
import { statusMessage } from '../../src/blocks/status.js';
import { toStatusData } from '../../src/commands/status.js';
import type { CelerySystemConfig } from '../../src/config/schema.js';
import { configSchema } from '../../src/config/schema.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';

/**
 * Celery throughput from a real worker's results: the rates are the results it stored (their
 * `date_done`, attributed by the `queue` field of `result_extended`), and the durations Celery
 * cannot know are said to be unknown, never shown as 0.
 */
const ALARM = 'tp_alarm';
const OTA = 'tp_ota';
let redis: PrivateRedis;
let worker: CeleryWorker;
let backend: QueueBackend;
let brokerUrl: string;

beforeAll(async () => {
  redis = await startPrivateRedis();
  brokerUrl = `${redis.url}/0`;
  worker = await startCeleryWorker({ brokerUrl, queues: [ALARM, OTA], name: 'zeus-tp' });
  await publishCelery({ brokerUrl }, [
    ...[1, 2, 3].map((n) => ({ task: 'tasks.add', args: [n, 1], queue: ALARM, wait: true })),
    ...[1, 2].map((n) => ({ task: 'tasks.boom', args: [`gateway ${n} down`], queue: OTA, wait: true })),
  ]);
  const config = configSchema.parse({
    systems: [
      { name: 'zeus', type: 'celery', redis: brokerUrl, queues: [ALARM, OTA], inspectTimeoutMs: 1500 },
    ],
  });
  backend = createCeleryBackend(config.systems[0] as CelerySystemConfig);
}, 60_000);

afterAll(async () => {
  await backend?.close();
  await worker?.stop();
  await redis?.stop();
});

describe('Celery throughput', () => {
  it('counts the results the worker stored in the span, per queue, and says wait and run are unknown', async () => {
    const raw = new Redis(brokerUrl);
    const stored = (await raw.keys('celery-task-meta-*')).length;
    raw.disconnect();
    expect(stored).toBe(5);

    const status = await backend.status(undefined, { throughput: { spanMs: 5 * 60_000, sample: 20 } });
    const alarm = status.queues.find((q) => q.name === ALARM)!.throughput!;
    const ota = status.queues.find((q) => q.name === OTA)!.throughput!;
    expect(alarm).toMatchObject({ source: 'results', completed: 3, failed: 0, sampled: 0 });
    expect(alarm.completedPerMinute).toBeCloseTo(3 / 5, 6);
    expect(ota).toMatchObject({ completed: 0, failed: 2 });
    expect(alarm.wait).toEqual({ unknown: 'noEnqueueTime' });
    expect(alarm.run).toEqual({ unknown: 'noStartTime' });
    expect(alarm.estimated).toBeUndefined();

    // A span that ends before they ran counts none of them.
    const later = await backend.status(undefined, { throughput: { spanMs: 1, sample: 20 } });
    expect(later.queues.find((q) => q.name === ALARM)!.throughput!.completed).toBe(0);

    // --json: the unknowns are named, not zeros.
    const data = toStatusData([{ name: 'zeus', type: 'celery', ok: true, status }]);
    expect(data.systems[0]!.queues.find((q) => q.name === ALARM)!.throughput).toEqual({
      source: 'results',
      spanSeconds: 300,
      completedPerMinute: 0.6,
      failedPerMinute: 0,
      completed: 3,
      failed: 0,
      sampled: 0,
      wait: { unknown: 'noEnqueueTime' },
      run: { unknown: 'noStartTime' },
      estimated: false,
    });

    // The table gets a done/min column and no duration columns, and says why.
    const view = {
      scope: 'zeus',
      generatedAt: new Date(),
      systems: [{ name: 'zeus', type: 'celery' as const, ok: true as const, status }],
    };
    const text = JSON.stringify(statusMessage(view, 'en').blocks);
    expect(text).toContain('done/min');
    expect(text).not.toContain('wait p95');
    expect(text).toContain('Celery, which stores neither when a task was sent nor when it started');
    const tr = JSON.stringify(statusMessage(view, 'tr').blocks);
    expect(tr).toContain('biten/dk');

    // One queue: its rates in words, and each unknown with its reason.
    const one = await backend.status([ALARM], { throughput: { spanMs: 5 * 60_000, sample: 200 } });
    const oneText = JSON.stringify(
      statusMessage(
        { ...view, scope: `zeus/${ALARM}`, systems: [{ ...view.systems[0]!, status: one }] },
        'en',
      ).blocks,
    );
    expect(oneText).toContain('0.6 done/min, 0.0 failed/min, from the result backend’s `date_done`');
    expect(oneText).toContain(
      'Wait unknown: Celery stores no enqueue time · run unknown: Celery stores no start time',
    );
  }, 30_000);
});
