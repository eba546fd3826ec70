import type { BullmqSystemConfig } from '../../config/schema.js';
import type { PurgeSelection } from '../job-filter.js';
import type {
  FailOutcome,
  JobLockInfo,
  PauseOutcome,
  QueueBackend,
  QueuedJob,
  QueueLimitChange,
  QueueLimits,
  QueuePurger,
  RetryOutcome,
  RetryPreview,
  RetryProgress,
  RetrySelection,
  RunningWork,
} from '../queue-backend.js';
import { createBullmqActions } from './actions.js';
import { type BullmqBackendOptions, type BullmqCommandStats, createBullmqContext } from './context.js';
import { BULLMQ_FACTS } from './facts.js';
import { createBullmqReads } from './reads.js';
import { createBullmqStatus } from './status.js';

export { parseClientList, workersFromClientList } from './client-list.js';
export { type BullmqBackendOptions, type BullmqCommandStats, DISCOVERY_TTL_MS } from './context.js';
export { type BullmqMajor, majorOfVersion } from './pause.js';
export { GROUP_ERRORS_OVER } from './reads.js';

/** A `QueueBackend` over BullMQ 5.x or 6.x queues, plus counters for the bench. */
export interface BullmqBackend extends QueueBackend {
  readonly type: 'bullmq';
  /** Through BullMQ's own `Queue.pause()`, of the major the queue was written by. */
  pause(queue: string): Promise<PauseOutcome>;
  resume(queue: string): Promise<PauseOutcome>;
  /** What BullMQ's own `reprocessJob` of the queue's major does, one script per batch (see retry.ts). */
  previewRetry(queue: string, selection: RetrySelection): Promise<RetryPreview>;
  retry(queue: string, selection: RetrySelection, progress?: RetryProgress): Promise<RetryOutcome>;
  running(queues?: readonly string[]): Promise<RunningWork[]>;
  nextJobs(queue: string, limit: number): Promise<QueuedJob[]>;
  jobLock(queue: string, id: string): Promise<JobLockInfo>;
  failJob(queue: string, id: string, reason: string): Promise<FailOutcome>;
  queueLimits(queue: string): Promise<QueueLimits>;
  setQueueLimit(
    queue: string,
    change: QueueLimitChange,
    options?: { onlyIf?: QueueLimitChange['value'] },
  ): Promise<{ before: QueueLimits; after: QueueLimits; written?: boolean }>;
  /** Purge and undo of one queue, on a connection of its own (see purge.ts). */
  purger(queue: string, selection?: PurgeSelection): Promise<QueuePurger>;
  /** Cumulative since creation; take a difference around a call to cost it. */
  stats(): BullmqCommandStats;
}

/**
 * A `QueueBackend` for one BullMQ system. Reads go through one fail-fast ioredis client (no
 * offline queue, short timeouts); `status` is one pipelined round trip (INFO memory, CLIENT LIST,
 * and one read-only script per queue), and pause/resume use BullMQ's own Queue of the major the
 * queue was written by.
 */
export function createBullmqBackend(
  system: BullmqSystemConfig,
  options: BullmqBackendOptions = {},
): BullmqBackend {
  // One context (the read client behind its deadline, counters, queue names), read by the reads,
  // written by the actions.
  const ctx = createBullmqContext(system, options);
  return {
    name: system.name,
    type: 'bullmq',
    facts: BULLMQ_FACTS,
    status: createBullmqStatus(ctx),
    ...createBullmqReads(ctx),
    ...createBullmqActions(ctx),
    close: ctx.close,
    stats() {
      return { ...ctx.counters };
    },
  };
}
