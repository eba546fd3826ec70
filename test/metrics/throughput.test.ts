import type { Queue, Worker } from 'bullmq';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createBackendRegistry } from '../../src/backends/registry.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { deletePrefix, randomName, systemFor } from '../helpers/bullmq-jobs.js';
import { queueTakenByHand } from '../helpers/bullmq-libs.js';
import { parsePrometheusText } from '../helpers/prom-text.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * `/metrics`' job durations and completion counters, over a real BullMQ queue whose jobs a real
 * Worker takes and finishes by hand while the test sets the clock (Date only), so every wait and
 * run time observed is one the test chose.
 */
const url = testRedisUrl();
const prefix = randomName('mtp');
const T0 = Date.UTC(2026, 11, 3, 2, 0, 0);
const closers: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await deletePrefix(url, prefix);
});

async function finishJobs(
  queue: Queue,
  worker: Worker,
  jobs: { added: number; waitMs: number; runMs: number }[],
) {
  for (const j of jobs) {
    vi.setSystemTime(j.added);
    await queue.add('maintenance', {}, { timestamp: j.added });
    vi.setSystemTime(j.added + j.waitMs);
    const token = randomName('tok');
    const job = await worker.getNextJob(token);
    vi.setSystemTime(j.added + j.waitMs + j.runMs);
    await job!.moveToCompleted('ok', token, false);
  }
}

describe('/metrics job durations and counters', () => {
  it('observes each finished job once, and counts completions since the previous read', async () => {
    const name = 'maintenance';
    // Before anything reads the clock: the backend and the metrics take Date.now when built.
    vi.useFakeTimers({ toFake: ['Date'] });
    const { queue, worker } = queueTakenByHand(name, { url, prefix }, closers);
    const backends = createBackendRegistry([createBullmqBackend(systemFor(url, prefix, [name]))]);
    closers.push(() => backends.close());
    const metrics = createMetrics({ backends, cacheSeconds: 0, processMetrics: false });

    // Before the first read: two jobs, waits 2 s and 40 s, runs 0.3 s and 20 s.
    await finishJobs(queue, worker, [
      { added: T0, waitMs: 2000, runMs: 300 },
      { added: T0 + 1000, waitMs: 40_000, runMs: 20_000 },
    ]);
    // The first read counts the minute before it (both finished in it).
    vi.setSystemTime(T0 + 62_000);
    const body = await metrics.render();
    let families = parsePrometheusText(body);
    const value = (metric: string, labels: Record<string, string>) =>
      families
        .get(metric.replace(/_(bucket|sum|count)$/, ''))
        ?.samples.find(
          (s) => s.name === metric && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
        )?.value;
    const q = { system: backends.names()[0]!, queue: name };
    expect(families.get('queue_job_duration_seconds')?.type).toBe('histogram');
    expect(families.get('queue_jobs_completed_total')?.type).toBe('counter');
    expect(value('queue_jobs_completed_total', q)).toBe(2);
    expect(value('queue_job_duration_seconds_count', { ...q, phase: 'run' })).toBe(2);
    expect(value('queue_job_duration_seconds_sum', { ...q, phase: 'run' })).toBeCloseTo(20.3, 6);
    expect(value('queue_job_duration_seconds_sum', { ...q, phase: 'wait' })).toBeCloseTo(42, 6);
    expect(value('queue_job_duration_seconds_bucket', { ...q, phase: 'run', le: '0.5' })).toBe(1);
    expect(value('queue_job_duration_seconds_bucket', { ...q, phase: 'run', le: '30' })).toBe(2);
    expect(value('queue_job_duration_seconds_bucket', { ...q, phase: 'wait', le: '2.5' })).toBe(1);

    // Read again with nothing new: nothing is counted or observed twice.
    vi.setSystemTime(T0 + 100_000);
    families = parsePrometheusText(await metrics.render());
    expect(value('queue_jobs_completed_total', q)).toBe(2);
    expect(value('queue_job_duration_seconds_count', { ...q, phase: 'run' })).toBe(2);

    // Three more between reads: the counter and the histogram grow by exactly those.
    await finishJobs(
      queue,
      worker,
      [1, 2, 3].map((k) => ({ added: T0 + 100_000 + k * 1000, waitMs: 100, runMs: 1500 })),
    );
    vi.setSystemTime(T0 + 120_000);
    families = parsePrometheusText(await metrics.render());
    expect(value('queue_jobs_completed_total', q)).toBe(5);
    expect(value('queue_job_duration_seconds_count', { ...q, phase: 'run' })).toBe(5);
    expect(value('queue_job_duration_seconds_sum', { ...q, phase: 'run' })).toBeCloseTo(20.3 + 4.5, 6);
    expect(value('queue_job_duration_seconds_bucket', { ...q, phase: 'run', le: '2.5' })).toBe(4);
  });
});
