/**
 * The result backend of the contract: what a system stores of finished tasks, read in a bounded
 * walk, and given a TTL where it has none.
 */

/**
 * A finished task's record in a system's result backend, reduced to what may be shown: never the
 * result of a success, its arguments or keyword arguments (Celery: `celery-task-meta-<id>`).
 */
export interface StoredResult {
  /** As the result backend says it (`SUCCESS`, `FAILURE`, `RETRY`, `REVOKED`, `STARTED`). */
  status: string;
  /** When it finished, as stored (Celery: ISO 8601, naive UTC); null when not stored. */
  dateDone: string | null;
  retries: number | null;
  /** The traceback's last lines. */
  traceback: string[];
  /** `ExcType: message` of a failure. */
  error: string | null;
  /** The queue it came from, when the record names it (Celery: `result_extended`). */
  queue: string | null;
}

/**
 * What a system's result backend holds: how many results, the ones Redis will never expire, and
 * how much memory they take, from a SCAN bounded in keys and time (Celery: the runbook's
 * `KEYS "celery-task-meta-*"` count).
 */
export interface ResultsReading {
  /** Result keys found by the walk. */
  count: number;
  /** Of those, keys without a TTL (Celery's `result_expires` off, or set by hand). */
  withoutTtl: number;
  /** MEMORY USAGE of the keys found, in bytes. */
  bytes: number;
  /** The oldest `date_done` found, ms since the epoch, and its task id. */
  oldest: { at: number; id: string } | null;
  /** How the walk went: keys it looked at (all keys, not only results), of how many, and why it stopped. */
  sample: { scanned: number; total: number; complete: boolean; stoppedBy: 'done' | 'keys' | 'time' };
  /** When the walk was partial: the counts above scaled to the whole keyspace, else null. */
  estimate: { count: number; withoutTtl: number; bytes: number } | null;
}

/** How far one `results` walk may go. */
export interface ResultsBudget {
  /** Keys SCAN may walk (every key, not only results). Default 1,000,000. */
  maxKeys?: number;
  /** Our time for the walk. Default 3 s. */
  maxMillis?: number;
}

/** What the approvers of `expire-results` see: the exact count, unless the walk ran out of time. */
export interface ExpireResultsPreview {
  /** Result keys without a TTL found by the walk. */
  withoutTtl: number;
  /** Result keys found, with or without a TTL. */
  results: number;
  /** The walk covered the whole keyspace: `withoutTtl` is exact. Otherwise it is a lower bound. */
  complete: boolean;
  /** Keys in the database (DBSIZE), for the progress of the run. */
  total: number;
}

/** What `expire-results` did. */
export interface ExpireResultsOutcome {
  /** Keys given the TTL: those still without one when their batch ran. */
  expired: number;
  /** Result keys the walk met (with or without a TTL). */
  results: number;
  ttlSeconds: number;
}

/** Told after each batch: keys the walk has looked at (all keys, not only results) of DBSIZE. */
export type ExpireResultsProgress = (scanned: number, total: number, expired: number) => void;

/** Reading the result backend, and giving its results a TTL. */
export interface ResultAbilities {
  /** Celery: what the result backend holds (`celery-task-meta-*`), from a bounded SCAN. */
  results?(budget?: ResultsBudget): Promise<ResultsReading>;
  /** Celery: the exact count of result keys without a TTL (`expire-results`' preview). */
  previewExpireResults?(budget?: { maxMillis?: number }): Promise<ExpireResultsPreview>;
  /** Celery: gives every result key still without a TTL `ttlSeconds`, in bounded batches. */
  expireResults?(ttlSeconds: number, progress?: ExpireResultsProgress): Promise<ExpireResultsOutcome>;
}
