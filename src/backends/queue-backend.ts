/**
 * The one interface every queue system implements. Commands talk only to this; nothing above
 * `src/backends/` imports bullmq or ioredis. A third queue system is one new folder here plus the
 * contract suite in `test/backends/contract.ts`.
 */

export type SystemType = 'bullmq' | 'celery';

/** What `INFO memory` says about the Redis a system lives on. */
export interface RedisMemory {
  usedMemoryBytes: number;
  /** 0 means no limit. */
  maxMemoryBytes: number;
  maxMemoryPolicy: string;
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
  /** Seconds the connection has been idle (BullMQ CLIENT LIST), when known. */
  idleSeconds?: number;
  /** Free-form facts worth one line (pool size, pid, uptime…), already safe to show. */
  details?: Record<string, string | number>;
}

/**
 * Coded, non-fatal findings about a system (rendered by i18n). `PausedButConsumed` (Celery,
 * params `queue`, `consumers`): a queue queue-ops paused is consumed again, e.g. by a worker that
 * restarted with its `-Q`; it still reads as paused until someone resumes it.
 */
export interface SystemWarning {
  code:
    | 'EvictionPolicy'
    | 'MemoryHigh'
    | 'WorkerInspectFailed'
    | 'ResultBackendMissing'
    | 'PausedButConsumed';
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
   * Failures grouped by error (first line, with ids and numbers kept as they are), most frequent
   * first, at most 5, counted over the newest `groupedOver` failures (bounded, never the whole set).
   */
  topErrors: { error: string; count: number }[];
  groupedOver: number;
}

/** Outcome of pausing or resuming a queue. */
export interface PauseOutcome {
  queue: string;
  isPaused: boolean;
  /** Celery: the workers that acknowledged the change. */
  workersAnswered?: string[];
}

/** Optional abilities; commands check these instead of the backend's class. */
export interface BackendCaps {
  pause: boolean;
  retry: boolean;
  purge: boolean;
}

export interface QueueBackend {
  readonly name: string;
  readonly type: SystemType;
  readonly caps: BackendCaps;
  /** Queues from config, or discovered (BullMQ `<prefix>:*:meta`, Celery `_kombu.binding.*`), sorted. */
  listQueues(): Promise<string[]>;
  /**
   * Counts, memory and workers. Counts and memory are one pipelined round trip. When `queues` is
   * given only those are read.
   */
  status(queues?: string[]): Promise<SystemStatus>;
  /** Newest failures first, at most `limit` (1..100). */
  dlq(queue: string, limit: number): Promise<DlqSample>;
  workers(): Promise<WorkerInfo[]>;
  pause?(queue: string): Promise<PauseOutcome>;
  resume?(queue: string): Promise<PauseOutcome>;
  /** With `caps.purge`: a purger for one queue, on a connection of its own (close it). */
  purger?(queue: string): Promise<QueuePurger>;
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

/** One archived record: its identity (job id, message digest, result key) and its JSON line. */
export interface PurgeItem {
  identity: string;
  line: string;
}

export interface PurgePreview {
  total: number;
  byState: Partial<Record<PurgeState, number>>;
  /** The next few to go: name and age only (never data or arguments). */
  sample: { name: string; ageSeconds: number | null }[];
  /** Estimated gzip size of the archive, from a sample. */
  estimatedBytes: number;
  /** States asked for that this system does not have, with a reason code (Celery `delayed`: `EtaTasksLiveInWorkers`). */
  unsupported?: Partial<Record<PurgeState, string>>;
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
  read(place: PurgePlace, offset: number, limit: number): Promise<PurgeItem[]>;
  /** Deletes each item only where it still is; true for the ones removed. */
  remove(place: PurgePlace, items: PurgeItem[]): Promise<boolean[]>;
  /** Which place and identity an archived line belongs to. */
  parse(line: string): { place: string; identity: string };
  /** Identities among these lines that exist again in Redis (undo must not overwrite them). */
  conflicts(lines: string[]): Promise<string[]>;
  /**
   * Puts the lines back, in the order given, each where it was; one whose identity exists is
   * left alone and returned in `existing`.
   */
  restore(lines: string[]): Promise<{ restored: number; existing: string[] }>;
  /** Facts the archive manifest keeps (prefix, layout). */
  meta(): Record<string, unknown>;
  /** Entries per read and per delete call when the system needs other sizes than the defaults. */
  batch?: { read: number; delete: number };
  close(): Promise<void>;
}
