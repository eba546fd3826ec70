import type { DurationPercentiles, QueueThroughput } from '../queue-backend.js';
import { THROUGHPUT_FIELDS, TRIMMED_AT_LEAST } from './throughput-script.js';

const MINUTE_MS = 60_000;

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

/** What FINISHED_LUA read of one queue: per outcome, the count, where its set begins, BullMQ's metrics. */
export interface FinishedCounts {
  completed: number;
  completedOldest: number;
  metricsCompleted: number;
  failed: number;
  failedOldest: number;
  metricsFailed: number;
}

/**
 * One outcome's rate: the finished jobs the queue keeps when they reach back past the span (exact);
 * else BullMQ's metrics where its workers collect them; else what the set keeps (a rate over it
 * when it looks trimmed). An empty set (oldest -2) without metrics is not known:
 * `removeOnComplete: true` keeps nothing, and a 0 would read as "processing nothing".
 */
function outcomeRate(
  count: number,
  oldest: number,
  metrics: number,
  window: { now: number; since: number },
): { count: number; spanMs: number; metrics: boolean } | undefined {
  const asked = Math.max(1, window.now - window.since);
  if (oldest === -1) return { count, spanMs: asked, metrics: false };
  if (metrics >= 0) return { count: metrics, spanMs: metricsSpan(window.now, window.since), metrics: true };
  if (oldest === -2) return undefined;
  return { count, spanMs: rateSpan(asked, window.now, oldest, count), metrics: false };
}

/**
 * A queue's throughput from what FINISHED_LUA counted (the status script's rate part, or
 * THROUGHPUT_BATCH's) and the durations the caller timed (or not). One object built field by
 * field: a status read makes one per queue, 1,000s a monitor tick, and spreading a partial one into
 * another made each a slow dictionary-mode object (most of a tick's allocation, by a heap profile).
 */
export function throughputOf(
  counts: FinishedCounts,
  window: { now: number; since: number },
  timed: { wait: DurationPercentiles; run: DurationPercentiles; sampled: number },
): QueueThroughput {
  const completed = outcomeRate(counts.completed, counts.completedOldest, counts.metricsCompleted, window);
  const failed = outcomeRate(counts.failed, counts.failedOldest, counts.metricsFailed, window);
  const throughput: QueueThroughput = {
    source: completed?.metrics ? 'metrics' : 'jobs',
    spanMs: completed?.spanMs ?? failed?.spanMs ?? Math.max(1, window.now - window.since),
    completedPerMinute: completed ? perMinute(completed.count, completed.spanMs) : null,
    failedPerMinute: failed ? perMinute(failed.count, failed.spanMs) : null,
    completed: completed ? completed.count : null,
    failed: failed ? failed.count : null,
    wait: timed.wait,
    run: timed.run,
    sampled: timed.sampled,
  };
  if (!completed || !failed) {
    const unknown: NonNullable<QueueThroughput['unknown']> = {};
    if (!completed) unknown.completed = 'notKept';
    if (!failed) unknown.failed = 'notKept';
    throughput.unknown = unknown;
  }
  return throughput;
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
  const metricsCompletedTotal = v(5);
  const metricsFailedTotal = v(7);
  const sampled = v(8);
  const throughput = throughputOf(
    {
      completed: v(0),
      failed: v(1),
      completedOldest: v(2),
      failedOldest: v(3),
      metricsCompleted: v(4),
      metricsFailed: v(6),
    },
    window,
    {
      wait: percentiles(v(9), v(10), window.sample > 0),
      run: percentiles(v(11), v(12), window.sample > 0),
      sampled,
    },
  );
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
