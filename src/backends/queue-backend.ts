import { ErrorCode, OpsError } from '../errors.js';
import type { LimitPrevious, LimitRecord, LimitValue } from '../store/store.js';
import type { BullmqJobView } from './bullmq/job.js';
import type {
  ExpireResultsOutcome,
  ExpireResultsPreview,
  ExpireResultsProgress,
} from './celery/expire-results.js';
import type { ResultsBudget, ResultsReading } from './celery/results.js';
import type { RetryLoops } from './celery/retry-loops.js';
import type { CeleryTaskView } from './celery/task.js';
import type { SystemFacts } from './facts.js';
import type { JobFilter, PurgeSelection } from './job-filter.js';
import type { KeySampleBudget, NetworkReading, RedisHealth, RedisSignals } from './redis-health.js';
/**
 * The one interface every queue system implements. Commands talk only to this; nothing above
 * `src/backends/` imports bullmq or ioredis. A third queue system is one new folder here plus the
 * contract suite in `test/backends/contract.ts`.
 */

/**
 * A system's kind, as config writes it (`bullmq`, `celery`): a name, deliberately open. Only the
 * composition root chooses by it (which factory builds the backend); everything else reads the
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

/** Depth of one queue by state. States a system does not have are 0. */
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

/** A task a worker is running right now. Never carries the task's arguments. */
export interface ActiveTask {
  id: string;
  name: string;
  /** Epoch milliseconds, when known. */
  startedAt?: number;
}

export interface WorkerInfo {
  name: string;
  /** Queues the worker consumes, when known. */
  queues?: string[];
  /** Number of tasks running now, when the system reports it. */
  active?: number;
  activeTasks?: ActiveTask[];
  /**
   * Celery: tasks the worker took from the queue and holds, not started yet (`inspect reserved`),
   * in the order it will run them; ids and names only.
   */
  reserved?: number;
  reservedTasks?: { id: string; name: string }[];
  /** Seconds the connection has been idle (BullMQ CLIENT LIST), when known. */
  idleSeconds?: number;
  /** Free-form facts worth one line (pool size, pid, uptime…), already safe to show. */
  details?: Record<string, string | number>;
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

/** One dead letter. Never carries the job's data or arguments. */
export interface FailedJob {
  id: string;
  name: string;
  /** First line of the failure reason (Celery: `ExcType: message`). */
  error: string;
  attempts: number;
  /** Epoch milliseconds, or null when unknown. */
  failedAt: number | null;
}

export interface DlqSample {
  queue: string;
  /** How many failures the queue holds in total. */
  total: number;
  /** Newest first, at most the requested limit. */
  jobs: FailedJob[];
  /**
   * Failures grouped by error group (the first line normalized: numbers, ids, hex, UUIDs, tokens,
   * e-mail addresses and URL paths put in words, error-groups.ts), most frequent first, at most 5,
   * counted over the newest `groupedOver` failures (bounded, never the whole set), each with one
   * real first line as its `example`.
   */
  topErrors: { error: string; count: number; example?: string }[];
  groupedOver: number;
  /** Celery: this queue's tasks in a retry loop, from a bounded sample of its messages' headers. */
  retrying?: RetryLoops;
}

/** What `dlq` reads beside the newest failures. */
export interface DlqOptions {
  /**
   * The newest failures only: no error groups, no retry loops (an alert listing its jobs), so the
   * read is the few jobs asked for.
   */
  newestOnly?: boolean;
}

/** A job waiting to be taken (`nextJobs`): its id and name only, never its data or arguments. */
export interface QueuedJob {
  id: string;
  name: string;
}

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

/**
 * Work that is running now (`stuck`). Never carries the job's data or the task's arguments.
 */
export interface RunningWork {
  id: string;
  name: string;
  /** Celery: the delivery's routing key; BullMQ: the queue. */
  queue?: string;
  /** Celery: the node name; BullMQ: the Worker's name (`pb`), when it had one. */
  worker?: string;
  /** Epoch milliseconds, when known. */
  startedAt?: number;
  /** BullMQ: still active but its lock is gone, so no live worker holds it (a stalled candidate). */
  lockExpired?: boolean;
}

/** One Celery worker's pool (`stats`), for `workers` and the `celery-pool` scaler. */
export interface WorkerPool {
  worker: string;
  /** Pool processes now (`stats.pool.processes`). */
  processes: number;
  /** Present when the worker runs `--autoscale max,min`. */
  autoscale?: { min: number; max: number };
}

/** What one worker answered to a pool change, and its pool afterwards. */
export interface PoolChange {
  worker: string;
  before: number;
  /** Pool processes after the change settled; null when the worker stopped answering. */
  after: number | null;
  /** The worker's own words (`pool will grow`, `autoscale now max=8 min=4`, an error). */
  answer: string;
  ok: boolean;
  autoscale?: { before: { min: number; max: number }; after: { min: number; max: number } | null };
}

/** A worker seen answering, for the check after a restart that it came back. */
export interface LiveWorker {
  name: string;
  /** Seconds since it started (Celery: its process, `stats.uptime`; BullMQ: its connection's age). */
  upSeconds?: number;
  /** Celery: the pids of its pool processes (`pool_restart` replaces them all). */
  poolPids?: number[];
}

/** What one Celery worker was sent for `restart`, and what it answered. */
export interface WorkerRestart {
  worker: string;
  method: 'pool_restart' | 'shutdown';
  /** Its own words (`reload started`), or for a shutdown (which never answers) that it was sent. */
  answer: string;
  ok: boolean;
  /** It answered that pool restarts are not enabled (`worker_pool_restarts` is off). */
  poolRestartsOff?: boolean;
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
  stored?: NonNullable<CeleryTaskView['result']> & { name: string | null };
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

/**
 * One queue system's reads and actions. What a system can do beyond reading is declared one way:
 * an optional method is there exactly when the system has the ability (`retry`, `purger`,
 * `revoke`…); callers and the contract suite ask the method, never a separate flag.
 */
export interface QueueBackend {
  readonly name: string;
  readonly type: SystemType;
  /** How this system differs from others beyond its abilities (`facts.ts`). */
  readonly facts: SystemFacts;
  /**
   * Queues from config, or discovered (BullMQ `<prefix>:*:meta`, Celery `_kombu.binding.*`), sorted.
   * A name in `lookingFor` that the last discovery did not see is looked for at once (a fresh
   * discovery, at most once every few seconds): a queue created since is found by the first
   * command that names it, not 5 minutes later.
   */
  listQueues(lookingFor?: readonly string[]): Promise<string[]>;
  /**
   * Counts, memory and workers. Counts and memory are one pipelined round trip. When `queues` is
   * given only those are read.
   */
  status(queues?: string[], options?: StatusOptions): Promise<SystemStatus>;
  /** Newest failures first, at most `limit` (1..100). */
  dlq(queue: string, limit: number, options?: DlqOptions): Promise<DlqSample>;
  workers(): Promise<WorkerInfo[]>;
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
  /**
   * What runs now, at most 1000 per queue (BullMQ) or what the workers answered (Celery). With
   * `queues`, BullMQ reads only their active lists (Celery's workers answer for all of them).
   */
  running?(queues?: readonly string[]): Promise<RunningWork[]>;
  /** The jobs a worker takes next from `queue`, the next one first, at most `limit` (1..10). */
  nextJobs?(queue: string, limit: number): Promise<QueuedJob[]>;
  /** Celery: the pool of every worker consuming this system's queues. */
  pool?(): Promise<WorkerPool[]>;
  /** Celery: `pool_grow`/`pool_shrink` (or `autoscale`) so that every such worker has `processes`. */
  resizePool?(processes: number): Promise<PoolChange[]>;
  /** Celery: who answers `ping`, with their uptime and pool pids (`stats`). */
  liveWorkers?(): Promise<LiveWorker[]>;
  /** Celery: per worker that answered `inspect conf`, whether it runs with `worker_pool_restarts`. */
  poolRestartsEnabled?(workers: readonly string[]): Promise<Map<string, boolean>>;
  /** Celery: `pool_restart` or `shutdown` (a cast: a worker shutting down never answers) per worker. */
  restartWorkers?(
    targets: readonly { worker: string; method: 'pool_restart' | 'shutdown' }[],
  ): Promise<WorkerRestart[]>;
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
  /**
   * A purger for one queue (on systems that can purge), on a connection of its own (close it). With a
   * selection that takes part of a state, its places are what the selection picks (a system that
   * cannot pick says `NotSupported`, never purges more).
   */
  purger?(queue: string, selection?: PurgeSelection): Promise<QueuePurger>;
  /** The Redis behind the system (Celery: the broker), for `redis`: memory, clients, slow log, keys. */
  redisHealth?(budget?: KeySampleBudget): Promise<RedisHealth>;
  /** The persistence of the Redis behind the system (one `INFO persistence`), for the monitor. */
  persistence?(): Promise<RedisHealth['persistence']>;
  /** One whole `INFO` of the Redis behind the system, for `why`: memory, OOM refusals, restarts, connections. */
  redisSignals?(): Promise<RedisSignals>;
  /**
   * The monitor's network reading of the Redis behind the system (`readNetwork`): PINGs on the
   * bot's connection while `during` runs, and one round trip of counters, clients and persistence.
   */
  network?(during?: Promise<unknown>): Promise<NetworkReading>;
  /** Celery: what the result backend holds (`celery-task-meta-*`), from a bounded SCAN. */
  results?(budget?: ResultsBudget): Promise<ResultsReading>;
  /** Celery: the exact count of result keys without a TTL (`expire-results`' preview). */
  previewExpireResults?(budget?: { maxMillis?: number }): Promise<ExpireResultsPreview>;
  /** Celery: gives every result key still without a TTL `ttlSeconds`, in bounded batches. */
  expireResults?(ttlSeconds: number, progress?: ExpireResultsProgress): Promise<ExpireResultsOutcome>;
  /**
   * One job by id (BullMQ: in `queue`; Celery: the task wherever it is, `queue` narrowing the
   * search). Undefined when nothing knows the id; `looked` then says where the search went.
   */
  job?(queue: string | undefined, id: string): Promise<JobLookup>;
  close(): Promise<void>;
}

/** What `purge` may take: `all` is every state the system has. */
export type PurgeState = 'waiting' | 'failed' | 'delayed';

/**
 * One Redis structure a purge empties, in the order it is walked. `list` and `zset` are read from
 * where workers take next (offset = entries read and not yet deleted); `keys` is a fixed set of
 * keys listed when the purge starts (Celery's result backend).
 */
export interface PurgePlace {
  state: PurgeState;
  /** As stored in each archived line (BullMQ: the key suffix `wait`; Celery: the list's key). */
  name: string;
  kind: 'list' | 'zset' | 'keys';
  /** Entries when the purge started. */
  size: number;
}

/**
 * One archived record: its identity (job id, message digest, result key), and where the delete
 * compares more than that, `check`: what it compares (a Celery result's value digest, a
 * message's own bytes).
 */
export interface PurgeItem {
  identity: string;
  check?: string | Buffer;
}

/**
 * What one read returns: the records in the order they go, and their archive lines (UTF-8 JSON,
 * one per record, each ending with a newline) in blocks of whole lines, as the archive file
 * stores them: a purge does no per-record string or JSON work on its way to the archive.
 */
export interface PurgeBatch {
  items: PurgeItem[];
  lines: Buffer[];
}

export interface PurgePreview {
  total: number;
  byState: Partial<Record<PurgeState, number>>;
  /** The next few to go: name and age only (never data or arguments). */
  sample: { name: string; ageSeconds: number | null }[];
  /** Estimated gzip size of the archive, from a sample. */
  estimatedBytes: number;
  /** With a selection (a filter, `--keep`): what the states hold in all, so `outOf - total` are left. */
  outOf?: number;
  /** States asked for that this system does not have, with a reason code (Celery `delayed`: `EtaTasksLiveInWorkers`). */
  unsupported?: Partial<Record<PurgeState, string>>;
}

/**
 * How far an undo has put its archive back: `position` lines of its restore sequence (the
 * archive's files last to first, each file's lines last to first, moved ones left out) are
 * handled, `restored` of them were put back. Kept in the watched Redis itself, written by the
 * same script that writes the jobs, so the two can never disagree: a Redis restarted without
 * its data lost both, and the undo starts over; one restarted from its append-only file kept both.
 * Dropped once the undo is done.
 */
export interface UndoProgress {
  position: number;
  restored: number;
}

/** One step of an undo: the marker must be at `from` (else `UndoMarkerMoved`), and moves past these lines. */
export interface UndoStep {
  purgeId: string;
  from: number;
  /** `restored` before these lines (the marker keeps the running total). */
  restoredBefore: number;
}

/**
 * A purge's access to one queue, over a connection of its own. Every method is bounded: reads
 * and deletes take at most `limit` entries, and each Redis call stays in the low milliseconds
 * so the workers and producers on that Redis keep running. Nothing here needs Redis memory:
 * deletes are EVAL (no shebang), LREM/ZREM/LTRIM/UNLINK, which a Redis at maxmemory still runs.
 */
export interface QueuePurger {
  preview(states: PurgeState[]): Promise<PurgePreview>;
  places(states: PurgeState[]): Promise<PurgePlace[]>;
  read(place: PurgePlace, offset: number, limit: number): Promise<PurgeBatch>;
  /**
   * Deletes each item only where it still is; true for the ones removed. The command is sent
   * before this returns (on the connection `read` uses), so a read called after it runs after it.
   */
  remove(place: PurgePlace, items: PurgeItem[]): Promise<boolean[]>;
  /** Which place an archived line belongs to, and its record (identity and check). */
  parse(line: string): PurgeItem & { place: string };
  /** Identities among these lines that exist again in Redis (undo must not overwrite them). */
  conflicts(lines: string[]): Promise<string[]>;
  /**
   * Puts the lines back, in the order given, each where it was; one whose identity exists is
   * left alone and returned in `existing`. With `step`, each Redis call that puts lines back also
   * moves the undo's marker (see {@link UndoStep}) in the same atomic step, and only if the marker
   * still says `step.from`: an undo cut short by a lost Redis or a killed process resumes exactly
   * where Redis says it stopped, and two processes can never both put one line back.
   */
  restore(lines: string[], step?: UndoStep): Promise<{ restored: number; existing: string[] }>;
  /** Where an undo of `purgeId` stands in Redis (zero when none began or Redis lost it all). */
  undoProgress(purgeId: string): Promise<UndoProgress>;
  /**
   * Drops the undo's marker, once the store says the undo is done (never before: a marker gone
   * while the undo could still resume would start it over). It has no ttl: an undo may wait for
   * its Redis, or be resumed after a refusal, for as long as the archive is kept.
   */
  clearUndoProgress(purgeId: string): Promise<void>;
  /** Facts the archive manifest keeps (prefix, layout). */
  meta(): Record<string, unknown>;
  /** Entries per read and per delete call when the system needs other sizes than the defaults. */
  batch?: { read: number; delete: number };
  close(): Promise<void>;
}

/** What `job` found: the job, or nothing and where it looked (lists walked, bounds hit). */
export type JobLookup =
  | { found: true; kind: 'bullmq'; job: BullmqJobView }
  | { found: true; kind: 'celery'; task: CeleryTaskView }
  | { found: false; looked: string[] };

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
