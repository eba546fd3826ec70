/**
 * The actions of the contract: pause and resume, retry (its selection, preview, progress and
 * outcome), revoke, and failing a stuck job.
 */

import type { JobFilter } from '../job-filter.js';
import type { StoredResult } from './results.js';

/** Outcome of pausing or resuming a queue. */
export interface PauseOutcome {
  queue: string;
  isPaused: boolean;
  /** Celery: the workers that acknowledged the change. */
  workersAnswered?: string[];
}

/** The most failed jobs one retry takes: the runbooks' "at most 1000 at a time". */
export const RETRY_MAX = 1000;

/**
 * Which failed jobs a retry takes: one by id, or the newest `limit` (1..RETRY_MAX), of those the
 * filter matches when there is one (the cap applies to what matches).
 */
export type RetrySelection =
  | { jobId: string }
  | { all: true; limit: number; filter?: JobFilter; pinned?: RetryPinned };

/**
 * What an approved `retry … all` runs: the ids its preview showed, and nothing else. Those still
 * failed are retried; failures that arrived after the preview are only counted (`newSincePreview`).
 */
export interface RetryPinned {
  /** The previewed ids, newest failure first, at most the limit. */
  ids: string[];
  /** The newest failure's time (epoch ms) when the preview was read: what failed later is new. */
  since: number;
}

/** What a retry would do, read now for the approvers. Never carries job data or arguments. */
export interface RetryPreview {
  queue: string;
  /** Jobs the retry would take. */
  count: number;
  /** Failures the queue holds in total. */
  failed: number;
  /** With a filter: how many failures it matches, exactly (the retry takes the newest `count` of them). */
  matched?: number;
  /** The jobs the retry takes, newest failure first (at most the limit): what an approval runs. */
  ids?: string[];
  /** The newest failure's time (epoch ms) as the preview read it; see {@link RetryPinned}. */
  newestAt?: number;
  /** The selected jobs' error groups (error-groups.ts), most frequent first, at most 5, each with a real example. */
  topErrors: { error: string; count: number; example?: string }[];
}

/** What a retry did. */
export interface RetryOutcome {
  queue: string;
  /** Jobs put back to be run. */
  retried: number;
  /**
   * Old id → id it runs under now: BullMQ retries a job in place (each id maps to itself);
   * Celery's retry is a new task with a new id.
   */
  ids: Record<string, string>;
  /** Selected but no longer failed when the retry reached them (retried or removed meanwhile). */
  skipped: number;
  /**
   * A retry of previewed ids: failures the selection matches that arrived after the preview, left
   * for a request of their own.
   */
  newSincePreview?: number;
}

/** What a retry has done so far, as its {@link RetryProgress} is told. */
export interface RetrySoFar extends RetryOutcome {
  /**
   * The batch on its way: sent to Redis and not answered yet (old id → id it would run under). A
   * retry whose Redis goes away now may have put all of it back or none of it (Celery on one
   * Redis: one transaction; BullMQ: one script call a batch); only that Redis can tell.
   */
  unconfirmed?: Record<string, string>;
}

/**
 * Told how far a retry has come: before each batch is sent (`sofar.unconfirmed` is that batch) and
 * after its answer; cheap to call. `sofar` is a copy, which later batches leave as it is, so a
 * retry that Redis cuts short can still say which jobs it put back.
 */
export type RetryProgress = (done: number, total: number, sofar: RetrySoFar) => void;

/** `outcome` as it stands now, and the batch on its way if there is one, for a {@link RetryProgress}. */
export function outcomeSoFar(outcome: RetryOutcome, unconfirmed?: Record<string, string>): RetrySoFar {
  return { ...outcome, ids: { ...outcome.ids }, ...(unconfirmed ? { unconfirmed: { ...unconfirmed } } : {}) };
}

/** Where a Celery task id is known (`revoke`'s preview); none of the three: nothing knows it. */
export interface TaskLocation {
  id: string;
  /** A worker holds it (`inspect query_task`): `active`, `reserved` or `scheduled`. */
  worker?: { name: string; state: string; task?: string };
  /** Its message waits in this queue's lists, or `unacked` (delivered, not yet acknowledged). */
  queue?: string;
  /** Its task name, as its message names it (never its arguments). */
  task?: string;
  /** Waiting: the priority list holding it, its priority step, and how many messages workers take first. */
  place?: { list: string; priority: number; position: number };
  /** The result backend has it, in this state (`SUCCESS`, `FAILURE`, `REVOKED`…). */
  result?: string;
  /** The stored result's fields that may be shown (status, when, retries, error, traceback's end, name). */
  stored?: StoredResult & { name: string | null };
}

/** Outcome of a Celery revoke broadcast. */
export interface RevokeOutcome {
  ids: string[];
  terminate: boolean;
  signal?: 'TERM' | 'KILL';
  /** Every worker that answered, with its answer (`terminate: <id>`, `tasks … flagged as revoked`). */
  answers: { worker: string; answer: string }[];
  /** Ids still in some worker's `active` list after a terminate settled (none, normally). */
  stillRunning: string[];
}

/** A BullMQ job as `fail` sees it, before and after. Never carries its data. */
export interface JobLockInfo {
  queue: string;
  id: string;
  name: string;
  /** BullMQ's own `Job.getState()`: active, waiting, failed, … or `unknown` when there is no job. */
  state: string;
  worker?: string;
  startedAt?: number;
  /** Milliseconds left on the job's lock; null when no lock is held (expired or never taken). */
  lockTtlMs: number | null;
}

/** Outcome of `fail`. */
export interface FailOutcome extends JobLockInfo {
  /** The state before the move (active). */
  before: string;
  reason: string;
  /** A live worker held the lock when the job was failed; its own result will be refused. */
  lockWasHeld: boolean;
}

/** What a system can change of its queues and jobs, and the previews the approvers read first. */
export interface ActionAbilities {
  pause?(queue: string): Promise<PauseOutcome>;
  resume?(queue: string): Promise<PauseOutcome>;
  /**
   * Counts and groups what `retry` would take, without changing anything. Throws `UnknownJob`
   * for an id that is not a failed job of the queue, `NothingToRetry` when it has none.
   */
  previewRetry?(queue: string, selection: RetrySelection): Promise<RetryPreview>;
  /**
   * Puts failed jobs back to be run, newest failure first, with the system's own retry semantics
   * (attempts start again), in bounded batches: never one round trip per job.
   */
  retry?(queue: string, selection: RetrySelection, progress?: RetryProgress): Promise<RetryOutcome>;
  /** Celery: where each task id is known (workers, queue lists and unacked, the result backend). */
  locateTasks?(ids: readonly string[]): Promise<TaskLocation[]>;
  /** Celery: `revoke` broadcast, like `celery control revoke [--terminate]`. */
  revoke?(
    ids: readonly string[],
    options: { terminate: boolean; signal?: 'TERM' | 'KILL' },
  ): Promise<RevokeOutcome>;
  /** BullMQ: the job's state and lock, for the preview of `fail`. */
  jobLock?(queue: string, id: string): Promise<JobLockInfo>;
  /** BullMQ: moves an active job to failed with `reason`, the way `Job.moveToFailed` does. */
  failJob?(queue: string, id: string, reason: string): Promise<FailOutcome>;
}
