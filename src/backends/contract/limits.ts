/**
 * The limits of the contract: a queue's own concurrency and rate limit (BullMQ) and a task's rate
 * limit on each worker (Celery), read and set, and what an approved limit did.
 */

import { ErrorCode, OpsError } from '../../errors.js';
import type { LimitPrevious, LimitRecord, LimitValue } from '../../store/store.js';

/** A BullMQ queue's global limits; null where none is set. */
export interface QueueLimitValues {
  concurrency: number | null;
  rateLimit: { max: number; durationMs: number } | null;
}

/** A BullMQ queue's limits and the BullMQ that last wrote its meta (`bullmq:6.7.0`; null: none). */
export interface QueueLimits extends QueueLimitValues {
  queue: string;
  version: string | null;
  /**
   * The limits this queue's BullMQ does not have, and why: its meta has no version, it is not
   * OSS BullMQ, or that release is older than `since` (the first one whose workers honour it).
   */
  unsupported: Partial<
    Record<QueueLimitChange['kind'], { reason: 'noVersion' | 'otherLibrary' | 'tooOld'; since: string }>
  >;
}

/** `NotSupported`, in one line, for a limit the queue's BullMQ does not have; undefined when it does. */
export function limitRefusal(
  system: string,
  limits: QueueLimits,
  kind: QueueLimitChange['kind'],
): OpsError | undefined {
  const refused = limits.unsupported[kind];
  if (!refused) return undefined;
  return new OpsError(ErrorCode.NotSupported, {
    system,
    type: 'bullmq',
    what: `limit.${kind}.${refused.reason}`,
    queue: limits.queue,
    version: limits.version ?? '',
    since: refused.since,
  });
}

/** What `setQueueLimit` changes: the concurrency, or the rate limit; null removes it. */
export type QueueLimitChange =
  | { kind: 'concurrency'; value: number | null }
  | { kind: 'rate-limit'; value: { max: number; durationMs: number } | null };

/** One Celery worker's rate limit for one task, as `inspect registered` reports it (null: none). */
export interface WorkerRateLimit {
  worker: string;
  rate: string | null;
}

/** What one worker answered to `rate_limit`, and its rate before and after (read back). */
export interface RateLimitAnswer {
  worker: string;
  before: string | null;
  /** As `inspect registered` reports it afterwards; undefined when the worker did not say. */
  after?: string | null;
  /** The worker's own words (`new rate limit set successfully`, an error), or `unchanged`. */
  answer: string;
  ok: boolean;
}

/** Which limit: a rate (Celery task, BullMQ queue) or a BullMQ queue's global concurrency. */
export type LimitKind = LimitRecord['kind'];

/** What an approved limit did, as its request's result and the audit entry keep it. */
export interface LimitOutcome {
  system: string;
  target: string;
  kind: LimitKind;
  value: LimitValue | null;
  /**
   * What was in force just before this change: a BullMQ queue's value of that kind, or each
   * Celery worker's rate (as `inspect registered` reported it), so an undo is exact.
   */
  previous: LimitPrevious;
  /** BullMQ: the value in force afterwards, read back from the meta hash. */
  now?: LimitValue | null;
  /** Celery: every worker's answer and its rate read back. */
  answers?: RateLimitAnswer[];
  /** Set with `--for`: when the monitor lifts it. */
  expiresAt?: string;
  /** `off` of a limit queue-ops had set: that limit's request id. */
  lifted?: string;
}

/** Reading and setting limits: a queue's own (BullMQ) and a task's on each worker (Celery). */
export interface LimitAbilities {
  /** BullMQ: the queue's global concurrency and rate limit, and the BullMQ version of its meta. */
  queueLimits?(queue: string): Promise<QueueLimits>;
  /**
   * BullMQ: sets or removes the queue's global concurrency or rate limit by writing the meta fields
   * exactly as `Queue.setGlobalConcurrency` / `setGlobalRateLimit` (and their `remove…`) do, so
   * BullMQ's own workers honour it. Refuses (`NotSupported`) to set one the queue's BullMQ lacks.
   * With `onlyIf`, writes only while the queue's limit of that kind is still exactly that value,
   * checked and written in one step (`written: false` otherwise): a limit that runs out puts back
   * what was before it only if nobody changed the queue since.
   */
  setQueueLimit?(
    queue: string,
    change: QueueLimitChange,
    options?: { onlyIf?: QueueLimitChange['value'] },
  ): Promise<{ before: QueueLimits; after: QueueLimits; written?: boolean }>;
  /**
   * Celery: every worker that has `task` registered, with its rate limit now (`inspect registered`
   * asking for `rate_limit`), sorted by worker; empty when no worker knows the task.
   */
  taskRateLimits?(task: string): Promise<{ workers: WorkerRateLimit[]; tasks: string[] }>;
  /**
   * Celery: `rate_limit` (as `celery control rate_limit`) to each named worker with its own rate
   * (null: none), then the rates read back through `inspect registered`.
   */
  setTaskRateLimit?(task: string, rates: readonly WorkerRateLimit[]): Promise<RateLimitAnswer[]>;
}
