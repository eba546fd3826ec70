/**
 * Throughput and durations, where `status` shows them (its columns, and the lines of a one-queue
 * status). Numbers and durations arrive already formatted for the locale.
 */
export const throughput = {
  columns: { perMinute: 'done/min', waitP95: 'wait p95', runP95: 'run p95' },
  /** `Throughput over the last 5m 0s: 12.4 done/min, 0.2 failed/min, from BullMQ's metrics.` */
  line: (span: string, done: string, failed: string, source: string) =>
    `Throughput over the last ${span}: ${done} done/min, ${failed} failed/min, from ${source}.`,
  source: {
    metrics: 'BullMQ’s own metrics',
    jobs: 'the finished jobs the queue keeps',
    results: 'the result backend’s `date_done`',
  } as Record<string, string>,
  estimated: ' (estimated from part of the result backend)',
  /** A rate that cannot be known, in a column or a sparkline's latest value. */
  unknownRate: '?' as string,
  /** Why a rate is `?`, one line each; `outcome` is `completed` or `failed`. */
  rateUnknown: {
    notKept: (outcome: 'completed' | 'failed'): string =>
      outcome === 'completed'
        ? 'Done/min unknown: the queue keeps no completed jobs to count (`removeOnComplete: true`, or none completed yet) and its workers collect no metrics.'
        : 'Failed/min unknown: the queue keeps no failed jobs to count (`removeOnFail: true`, or none failed yet) and its workers collect no metrics.',
    noResults: (outcome: 'completed' | 'failed') =>
      `${outcome === 'completed' ? 'Done' : 'Failed'}/min unknown: the result backend holds no task results (the app stores none, or keeps them elsewhere).`,
    unattributed: (outcome: 'completed' | 'failed') =>
      `${outcome === 'completed' ? 'Done' : 'Failed'}/min unknown: the stored results name no queue (set \`result_extended=True\` in the Celery app).`,
  },
  durations: (wait: string, run: string, sampled: string) =>
    `Wait ${wait} · run ${run} (the newest ${sampled} finished jobs).`,
  percentiles: (p50: string, p95: string) => `p50 ${p50}, p95 ${p95}`,
  unknown: {
    noEnqueueTime: 'unknown: Celery stores no enqueue time',
    noStartTime: 'unknown: Celery stores no start time',
    noFinishedJobs: 'no finished job to time',
    notSampled: 'timed for one queue: `status <system>/<queue>`',
  } as Record<string, string>,
  unknownDurations: (wait: string, run: string) => `Wait ${wait} · run ${run}.`,
  /** For a table of Celery queues: why its wait and run columns are absent. */
  celeryNote:
    'Wait and run times: unknown for Celery, which stores neither when a task was sent nor when it started.',
  delayedDue: (next5m: string, hour: string, day: string, later: string) =>
    `Delayed by due time: ${next5m} in the next 5 min · ${hour} within the hour · ${day} within the day · ${later} later.`,
  /** How much of `unacked` a walk read: all of it, or part (its bound). */
  celeryRead: {
    all: (looked: string) => `all ${looked} entries read`,
    part: (looked: string, of: string) =>
      `${looked} of its ${of} entries read; the walk is bounded, there may be more`,
  },
  /** Where Celery's delayed tasks were counted, and what that cannot see. */
  celeryDelayed: (read: string) =>
    `Delayed tasks are counted in \`unacked\`, where a worker holds an ETA / countdown task until it is due (${read}); a task a worker holds only in memory, with no entry there (as after Redis restarted without it), is not counted (\`inspect scheduled\` lists those).`,
  /** A Celery queue with no ETA / countdown task in `unacked`. */
  celeryNoDelayed: (read: string) =>
    `No delayed (ETA / countdown) task of this queue in \`unacked\`, where a worker holds one until it is due (${read}); a task a worker holds only in memory, with no entry there (as after Redis restarted without it), is not counted.`,
  /** A duration under a minute, in seconds with one decimal: `0.4s`. */
  seconds: (value: string) => `${value}s`,
  /** Under a second: `30 ms`. */
  millis: (value: string) => `${value} ms`,
};
