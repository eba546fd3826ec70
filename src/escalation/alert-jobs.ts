import type { QueueBackend } from '../backends/queue-backend.js';
import type { RuleMetric } from '../config/schema.js';
import type { Alert } from '../store/alert.js';

/**
 * Which jobs an alert is about, by what its rule watches: the newest failures (a queue's failed
 * set or rate), the jobs that waited longest (the next ones to be taken), or the ones running
 * longest (active too long, slow runs). Alerts on anything else (a backlog's size, memory, worker
 * churn) name no job.
 */
export type AlertJobKind = 'failed' | 'next' | 'running';

const KIND_OF: Partial<Record<RuleMetric, AlertJobKind>> = {
  failed: 'failed',
  failedIncrease: 'failed',
  failedPerMinute: 'failed',
  oldestWaitingSeconds: 'next',
  active: 'running',
  runP95Seconds: 'running',
};

export function alertJobKind(metric: RuleMetric): AlertJobKind | undefined {
  return KIND_OF[metric];
}

/** One job an alert lists: its id and name, and what says why it is listed. Never its data. */
export interface AlertJob {
  id: string;
  name: string;
  /** `failed`: the first line of its error (raw: the message builder scrubs and escapes it). */
  error?: string;
  /** `running`: when it started (epoch ms), when known. */
  startedAt?: number;
}

/**
 * The jobs an alert lists, each linked to its `job` view. `jobs` is empty when there is none (the
 * failures were retried meanwhile); `unread` says they could not be read (the Redis is slow or
 * down: the message goes out without them, never later).
 */
export interface AlertJobs {
  kind: AlertJobKind;
  jobs: AlertJob[];
  unread?: true;
}

/** Jobs an alert lists at most: enough to start from, few enough for a group of twenty. */
export const ALERT_JOBS_LISTED = 3;

/**
 * Reads the jobs an alert on a queue is about, bounded: the newest `limit` failures (no error
 * groups), the next `limit` to be taken, or the `limit` running longest on that queue (BullMQ
 * reads only its active list; Celery asks the workers, as `stuck` does). Undefined when the alert
 * names no job or the system cannot list them.
 */
export async function readAlertJobs(
  backend: QueueBackend,
  alert: Pick<Alert, 'metric' | 'queue'>,
  limit = ALERT_JOBS_LISTED,
): Promise<AlertJobs | undefined> {
  const kind = alertJobKind(alert.metric);
  const queue = alert.queue;
  if (kind === undefined || queue === undefined) return undefined;
  switch (kind) {
    case 'failed': {
      const sample = await backend.dlq(queue, limit, { newestOnly: true });
      return {
        kind,
        jobs: sample.jobs.slice(0, limit).map((j) => ({ id: j.id, name: j.name, error: j.error })),
      };
    }
    case 'next': {
      if (!backend.nextJobs) return undefined;
      const jobs = await backend.nextJobs(queue, limit);
      return { kind, jobs: jobs.slice(0, limit).map((j) => ({ id: j.id, name: j.name })) };
    }
    case 'running': {
      if (!backend.running) return undefined;
      const work = (await backend.running([queue])).filter((w) => w.queue === queue);
      // Longest running first; a job whose start is not known last.
      work.sort(
        (a, b) =>
          (a.startedAt ?? Number.POSITIVE_INFINITY) - (b.startedAt ?? Number.POSITIVE_INFINITY) ||
          a.id.localeCompare(b.id),
      );
      return {
        kind,
        jobs: work.slice(0, limit).map((w) => ({
          id: w.id,
          name: w.name,
          ...(w.startedAt === undefined ? {} : { startedAt: w.startedAt }),
        })),
      };
    }
  }
}
