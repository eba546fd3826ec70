/**
 * The reads of the contract beyond `status`: dead letters, work running and next, one job, and
 * the Redis behind a system.
 */

import type { KeySampleBudget, NetworkReading, RedisHealth, RedisSignals } from '../redis-health.js';
import type { RetryLoops, SystemType } from './status.js';

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

/**
 * One job (or task) as `job` shows it: what every system can say about it, never its data or
 * arguments. A system's own view extends it, in the system's folder, with the section that system
 * fills in (BullMQ: its place, attempts, times, stack and flow; Celery: a worker's word, its place
 * in the lists, its stored result).
 */
export interface JobView {
  id: string;
  /** Where it is, in the system's own words (`failed`, `active`; Celery also `queued`, `FAILURE`…). */
  state: string;
  /** Its job or task name; null when nothing names it. */
  name: string | null;
}

/**
 * A job `job` found: the view of the system that found it, `kind` saying which (its type), so the
 * command shows it as that system's view (each system's folder has the check).
 */
export interface JobFound<View extends JobView = JobView> {
  found: true;
  kind: SystemType;
  job: View;
}

/** What `job` found: the job, or nothing and where it looked (lists walked, bounds hit). */
export type JobLookup = JobFound | { found: false; looked: string[] };

/** What runs now and next, and one job by id. */
export interface JobReadAbilities {
  /**
   * What runs now, at most 1000 per queue (BullMQ) or what the workers answered (Celery). With
   * `queues`, BullMQ reads only their active lists (Celery's workers answer for all of them).
   */
  running?(queues?: readonly string[]): Promise<RunningWork[]>;
  /** The jobs a worker takes next from `queue`, the next one first, at most `limit` (1..10). */
  nextJobs?(queue: string, limit: number): Promise<QueuedJob[]>;
  /**
   * One job by id (BullMQ: in `queue`; Celery: the task wherever it is, `queue` narrowing the
   * search). `found: false` when nothing knows the id; `looked` then says where the search went.
   */
  job?(queue: string | undefined, id: string): Promise<JobLookup>;
}

/** The Redis behind the system, as `redis`, the monitor and `why` read it. */
export interface RedisReadAbilities {
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
}
