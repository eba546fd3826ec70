import type { DurationPercentiles, QueueThroughput } from '../queue-backend.js';
import { THROUGHPUT_FIELDS } from './throughput-script.js';

const MINUTE_MS = 60_000;

/**
 * A set of at least this many finished jobs, all inside the span, is taken to be trimmed (by
 * `removeOnComplete`/`removeOnFail` with a count); a smaller one is a quiet or young queue.
 */
export const TRIMMED_AT_LEAST = 50;

/**
 * What a rate is averaged over: the span asked for, or, for a set that looks trimmed (see
 * {@link TRIMMED_AT_LEAST}), back to its oldest job, since the jobs before it are gone: a queue
 * keeping its newest 1,000 at 10,000 a minute would otherwise read 200 a minute. Never under a
 * minute.
 */
export function rateSpan(askedMs: number, now: number, oldest: number, count: number): number {
  if (oldest < 0 || count < TRIMMED_AT_LEAST) return askedMs;
  return Math.min(askedMs, Math.max(MINUTE_MS, now - oldest));
}

/** The whole minutes BullMQ's metrics count cover for a span ending now (the open one included). */
export function metricsSpan(now: number, since: number): number {
  const minutes = Math.max(1, Math.ceil((now - since) / MINUTE_MS));
  const first = Math.floor(now / MINUTE_MS) - minutes + 1;
  return now - first * MINUTE_MS;
}

const perMinute = (count: number, spanMs: number) => (spanMs > 0 ? (count * MINUTE_MS) / spanMs : 0);

function percentiles(p50: number, p95: number, sampling: boolean): DurationPercentiles {
  if (!sampling) return { unknown: 'notSampled' };
  return p50 < 0 ? { unknown: 'noFinishedJobs' } : { p50Ms: p50, p95Ms: p95 };
}

/**
 * One queue's part of a THROUGHPUT_BATCH reply, from `at`; returns it and where the next queue
 * starts (raw durations make the parts differ in length).
 */
export function readThroughput(
  reply: readonly number[],
  at: number,
  window: { now: number; since: number; raw: boolean; sample: number },
): { throughput: QueueThroughput; next: number } {
  const v = (i: number) => reply[at + i]!;
  const [completed, failed, completedOldest, failedOldest] = [v(0), v(1), v(2), v(3)];
  const [metricsCompleted, metricsCompletedTotal, metricsFailed, metricsFailedTotal] = [
    v(4),
    v(5),
    v(6),
    v(7),
  ];
  const sampled = v(8);
  const asked = Math.max(1, window.now - window.since);
  const fromMetrics = metricsCompleted >= 0;
  const completedSpan = fromMetrics
    ? metricsSpan(window.now, window.since)
    : rateSpan(asked, window.now, completedOldest, completed);
  const completedCount = fromMetrics ? metricsCompleted : completed;
  const failedFromMetrics = metricsFailed >= 0;
  const failedSpan = failedFromMetrics
    ? metricsSpan(window.now, window.since)
    : rateSpan(asked, window.now, failedOldest, failed);
  const failedCount = failedFromMetrics ? metricsFailed : failed;
  const throughput: QueueThroughput = {
    source: fromMetrics ? 'metrics' : 'jobs',
    spanMs: completedSpan,
    completedPerMinute: perMinute(completedCount, completedSpan),
    failedPerMinute: perMinute(failedCount, failedSpan),
    completed: completedCount,
    failed: failedCount,
    wait: percentiles(v(9), v(10), window.sample > 0),
    run: percentiles(v(11), v(12), window.sample > 0),
    sampled,
  };
  if (metricsCompletedTotal >= 0 || metricsFailedTotal >= 0)
    throughput.totals = {
      completed: Math.max(0, metricsCompletedTotal),
      failed: Math.max(0, metricsFailedTotal),
    };
  let next = at + THROUGHPUT_FIELDS;
  if (window.raw) {
    const durations: { waitMs: number; runMs: number }[] = [];
    for (let k = 0; k < sampled; k++)
      durations.push({ waitMs: reply[next + 2 * k]!, runMs: reply[next + 2 * k + 1]! });
    throughput.durations = durations;
    next += 2 * sampled;
  }
  return { throughput, next };
}
