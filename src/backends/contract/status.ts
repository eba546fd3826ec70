/**
 * The status read of the contract: what one `status()` counts of a system, its queues and their
 * throughput, and what it warns about.
 */

import type { QueueLimitValues } from './limits.js';
import type { WorkerInfo } from './workers.js';

/**
 * Which queue system a backend is, the `type` of its entry under `systems:` (`bullmq`, `celery`):
 * a name, deliberately open. Only the composition root chooses by it (which factory builds the backend); everything else reads the
 * backend's `facts` and optional methods, so no code depends on today's kinds being all there are.
 */
export type SystemType = string;

/** What `INFO memory` says about the Redis a system lives on. */
export interface RedisMemory {
  usedMemoryBytes: number;
  /** 0 means no limit. */
  maxMemoryBytes: number;
  maxMemoryPolicy: string;
}

/** What else one `status()` read counts, in the same round trip. */
export interface StatusOptions {
  /** Epoch ms: count each queue's failures after it (`QueueCounts.failedSince`). */
  failedSince?: number;
  /**
   * Celery: also ask the workers' `stats` (in parallel with the other inspections), so each
   * worker's `details` carries its pid and uptime. The monitor asks it every tick: a worker that
   * restarts under its name is seen only through them.
   */
  workerStats?: boolean;
  /** Also read each queue's throughput and durations (`QueueCounts.throughput`), in the same read. */
  throughput?: ThroughputOptions;
  /**
   * Also count the delayed jobs by when they are due (`QueueCounts.delayedDue`); for one queue
   * (Celery walks `unacked` for each queue asked).
   */
  delayedDue?: boolean;
}

/** What a throughput read covers. */
export interface ThroughputOptions {
  /**
   * Jobs that finished in the last `spanMs` (by the backend's clock) are counted and sampled. A
   * span, not a time, so that concurrent reads asking the same share one (coalesce.ts).
   */
  spanMs: number;
  /** Newest finished jobs read per queue and outcome for the durations (1..500). */
  sample: number;
  /** Also return each sampled job's durations (`QueueThroughput.durations`), for `/metrics`. */
  raw?: boolean;
}

/**
 * Where a queue's rates come from: `metrics`, BullMQ's own per-minute counters (only when its
 * workers collect them: `metrics.maxDataPoints`); `jobs`, the finished jobs the queue still keeps
 * (its completed and failed sets, so `removeOnComplete` hides them); `results`, Celery's result
 * backend (`date_done` of results that name their queue: `result_extended=True`).
 */
export type ThroughputSource = 'metrics' | 'jobs' | 'results';

/** Why a duration is not known (rendered by i18n), rather than a 0 that would read as "instant". */
export type UnknownDuration = 'noEnqueueTime' | 'noStartTime' | 'noFinishedJobs' | 'notSampled';

/** p50 and p95 in milliseconds, or why they are not known. */
export type DurationPercentiles = { p50Ms: number; p95Ms: number } | { unknown: UnknownDuration };

/**
 * Why a rate is not known (rendered by i18n), rather than a 0 that would read as "processing
 * nothing": `notKept`, a BullMQ queue keeps no finished job of that outcome to count
 * (`removeOnComplete`/`removeOnFail: true`, or none finished yet) and its workers collect no
 * metrics; `noResults`, a Celery result backend holds no result at all (the app stores none, or
 * keeps them elsewhere); `unattributed`, Celery results name no queue (no `result_extended`).
 */
export type UnknownRate = 'notKept' | 'noResults' | 'unattributed';

/** How fast a queue is processing, over the span the read looked at. */
export interface QueueThroughput {
  source: ThroughputSource;
  /** Milliseconds the rates are averaged over (shorter than asked when the kept jobs reach back less far). */
  spanMs: number;
  /** Null when not known: see `unknown`. */
  completedPerMinute: number | null;
  failedPerMinute: number | null;
  /** Jobs that finished in the span (completed, failed); null when not known. */
  completed: number | null;
  failed: number | null;
  /** Why a rate above is null. */
  unknown?: { completed?: UnknownRate; failed?: UnknownRate };
  /** From when the job could run (added, or its delay run out) to when a worker took it. */
  wait: DurationPercentiles;
  /** From when a worker took it to when it finished. */
  run: DurationPercentiles;
  /** Finished jobs the durations were computed from (the newest of the span, bounded). */
  sampled: number;
  /** The rates are estimated from part of the result backend (a SCAN stopped by its budget). */
  estimated?: boolean;
  /** With `ThroughputOptions.raw`: each sampled job's wait and run, in ms. */
  durations?: { waitMs: number; runMs: number }[];
  /** BullMQ metrics: the counters' running totals, for `/metrics`' counters. */
  totals?: { completed: number; failed: number };
}

/** Delayed jobs by when they are due, counted from now; overdue ones are in `next5m`. */
export interface DelayedDue {
  next5m: number;
  nextHour: number;
  nextDay: number;
  later: number;
}

/** Depth of one queue by state. States a system does not have are 0. */
export interface QueueCounts {
  name: string;
  /** Ready to be picked up (BullMQ: wait + legacy paused list; Celery: Σ LLEN over priority lists). */
  waiting: number;
  /** Being processed (BullMQ: active list; Celery: unacked messages routed to this queue). */
  active: number;
  delayed: number;
  prioritized: number;
  failed: number;
  completed: number;
  waitingChildren: number;
  isPaused: boolean;
  /** Age of the next job to be picked up, or null when nothing waits or the age is unknown. */
  oldestWaitingSeconds: number | null;
  /**
   * Where `oldestWaitingSeconds` counts from, when it is known: `due`, when the job became due
   * (BullMQ; a Celery message with a past ETA), or `firstSeen`, when the monitor first saw the
   * message at the head of the queue (Celery, whose messages carry no enqueue time): a lower bound.
   */
  oldestWaitingFrom?: 'due' | 'firstSeen';
  /** With `oldestWaitingFrom: 'firstSeen'`: when the monitor first saw that message (epoch ms). */
  waitingSeenSince?: number;
  /**
   * Jobs that failed after `StatusOptions.failedSince`, counted by when they failed, when that
   * was asked: a failed set capped by `removeOnFail` keeps its size while new failures arrive,
   * so only this shows them (the monitor's `failedIncrease`).
   */
  failedSince?: number;
  /**
   * An id of the message a worker would take next, when the system's messages carry no enqueue
   * time (Celery's delivery tag), so a caller that outlives this process (the monitor, through
   * its stored samples) can measure how long the same message has been at the head.
   */
  headId?: string;
  /** With `StatusOptions.throughput`: undefined when the system cannot tell. */
  throughput?: QueueThroughput;
  /**
   * With `StatusOptions.delayedDue`: BullMQ from its delayed set; Celery from a bounded walk of
   * `unacked`, where a worker holds an ETA / countdown task until it is due (`delayedScan`).
   */
  delayedDue?: DelayedDue;
  /**
   * Celery, with `delayedDue`: how far the walk of `unacked` looked (entries examined, of how many,
   * whether all). A task a worker holds only in memory, with no entry in `unacked`, is not counted.
   */
  delayedScan?: { looked: number; of: number; complete: boolean };
  /**
   * BullMQ: the queue's global concurrency and rate limit as its meta hash holds them (what
   * `rate-limit` and `concurrency` set, and `Queue.setGlobalConcurrency` / `setGlobalRateLimit`),
   * read by the same script as the counts. Absent for systems without them.
   */
  limits?: QueueLimitValues;
}

/**
 * Coded, non-fatal findings about a system (rendered by i18n). `PausedButConsumed` (Celery,
 * params `queue`, `consumers`): a queue queue-ops paused is consumed again, e.g. by a worker that
 * restarted with its `-Q`; it still reads as paused until someone resumes it.
 * `ThroughputUnattributed` (Celery, param `results`): results finished in the throughput span
 * name no queue (the app does not set `result_extended=True`), so no queue's rate is known.
 */
export interface SystemWarning {
  code:
    | 'EvictionPolicy'
    | 'MemoryHigh'
    | 'WorkerInspectFailed'
    | 'ResultBackendMissing'
    | 'PausedButConsumed'
    | 'ThroughputUnattributed';
  params?: Record<string, string | number>;
}

export interface SystemStatus {
  name: string;
  type: SystemType;
  redis: RedisMemory;
  queues: QueueCounts[];
  workers: WorkerInfo[];
  /** Celery: messages delivered to workers but not yet acknowledged, over the whole broker. */
  unacked?: number;
  /** Celery: tasks in a retry loop (`retries` ≥ 1 in their message's headers), from a bounded sample. */
  retrying?: RetryLoops;
  warnings: SystemWarning[];
}

/**
 * Jobs in a retry loop, from a bounded sample of the messages a system holds (Celery: the `retries`
 * header of queued and delivered messages, as celery/retry-loops.ts reads it, the way the runbook
 * finds them in the worker's log with `grep "Retry in" | sort | uniq -c`).
 */
export interface RetryLoops {
  /** Messages looked at. */
  sampled: number;
  /** The sample was every message the system held (Celery: the lists and `unacked`). */
  complete: boolean;
  /** Of those, messages retried at least once (Celery: `retries` ≥ 1). */
  retrying: number;
  /** By task name, most messages first, at most a few: how many, and the most retries seen. */
  tasks: { name: string; count: number; maxRetries: number }[];
}
