/** The workers of the contract: who consumes a system's queues, their pools, and restarts. */

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

/** Sizing and restarting the workers' pools, and who answers. */
export interface WorkerAbilities {
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
}
