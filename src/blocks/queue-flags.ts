import type { QueueCounts, WorkerInfo } from '../backends/queue-backend.js';

/** What a status row can be flagged with, most severe first. */
export const QueueFlag = {
  NoWorkers: 'noWorkers',
  Backlog: 'backlog',
  Failures: 'failures',
  Paused: 'paused',
} as const;
export type QueueFlag = (typeof QueueFlag)[keyof typeof QueueFlag];

/** When a queue counts as backed up. */
export interface FlagThresholds {
  /** waiting + prioritized at or above this is a backlog. Default 1000. */
  backlogJobs: number;
  /** The oldest waiting job at or above this age (seconds) is a backlog. Default 300. */
  backlogAgeSeconds: number;
}

export const DEFAULT_FLAG_THRESHOLDS: FlagThresholds = { backlogJobs: 1000, backlogAgeSeconds: 300 };

const SEVERITY: Record<QueueFlag, number> = { noWorkers: 8, backlog: 4, failures: 2, paused: 1 };
const ORDER: QueueFlag[] = ['noWorkers', 'backlog', 'failures', 'paused'];

/**
 * The flags of one queue, most severe first:
 * - `noWorkers`: jobs wait (waiting + prioritized > 0) and no worker consumes the queue. A worker
 *   without `queues` is taken to consume every queue. Not raised for a paused queue, where nobody
 *   consuming is the point.
 * - `backlog`: waiting + prioritized ≥ `backlogJobs`, or the oldest waiting job ≥ `backlogAgeSeconds`.
 * - `failures`: failed > 0.
 * - `paused`.
 */
export function queueFlags(
  queue: QueueCounts,
  workers: readonly WorkerInfo[],
  thresholds: Partial<FlagThresholds> = {},
): QueueFlag[] {
  const t = { ...DEFAULT_FLAG_THRESHOLDS, ...thresholds };
  const ready = queue.waiting + queue.prioritized;
  const flags = new Set<QueueFlag>();
  if (ready > 0 && !queue.isPaused && !consumes(workers, queue.name)) {
    flags.add('noWorkers');
  }
  if (ready >= t.backlogJobs || (queue.oldestWaitingSeconds ?? 0) >= t.backlogAgeSeconds)
    flags.add('backlog');
  if (queue.failed > 0) flags.add('failures');
  if (queue.isPaused) flags.add('paused');
  return ORDER.filter((f) => flags.has(f));
}

// A status call asks about every queue against the same worker list: index it once per list.
// (The length check catches a caller that pushes to the same array between calls.)
const consumed = new WeakMap<readonly WorkerInfo[], { length: number; index: Set<string> | 'all' }>();

function consumes(workers: readonly WorkerInfo[], queue: string): boolean {
  let entry = consumed.get(workers);
  if (!entry || entry.length !== workers.length) {
    const index = workers.some((w) => !w.queues) ? 'all' : new Set(workers.flatMap((w) => w.queues ?? []));
    entry = { length: workers.length, index };
    consumed.set(workers, entry);
  }
  return entry.index === 'all' || entry.index.has(queue);
}

/** A number that orders queues worst first: higher is worse. */
export function flagSeverity(flags: readonly QueueFlag[]): number {
  return flags.reduce((sum, f) => sum + SEVERITY[f], 0);
}
