import type { ActionAbilities } from './contract/actions.js';
import type { LimitAbilities } from './contract/limits.js';
import type { PurgeAbilities } from './contract/purge.js';
import type { DlqOptions, DlqSample, JobReadAbilities, RedisReadAbilities } from './contract/reads.js';
import type { ResultAbilities } from './contract/results.js';
import type { StatusOptions, SystemStatus, SystemType } from './contract/status.js';
import type { WorkerAbilities, WorkerInfo } from './contract/workers.js';
import type { SystemFacts } from './facts.js';

/**
 * The one interface every queue system implements. Commands talk only to this; nothing above
 * `src/backends/` imports bullmq or ioredis. A third queue system is one new folder here plus the
 * contract suite in `test/backends/contract.ts`.
 *
 * The contract is written by concern in `contract/` (status, reads, actions, workers, limits,
 * purge, results), each with the types it answers in and the optional methods of its abilities;
 * this file composes `QueueBackend` from them and re-exports them, so callers import from here. It
 * is neutral: nothing in it imports a system's folder. A system's own types (its view of one job)
 * extend the contract's in that system's folder (test/architecture/imports.test.ts holds to it).
 */

/**
 * One queue system's reads and actions. What a system can do beyond reading is declared one way:
 * an optional method is there exactly when the system has the ability (`retry`, `purger`,
 * `revoke`…); callers and the contract suite ask the method, never a separate flag.
 */
export interface QueueBackend
  extends JobReadAbilities,
    RedisReadAbilities,
    ActionAbilities,
    WorkerAbilities,
    LimitAbilities,
    PurgeAbilities,
    ResultAbilities {
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
  close(): Promise<void>;
}

export * from './contract/actions.js';
export * from './contract/limits.js';
export * from './contract/purge.js';
export * from './contract/reads.js';
export * from './contract/results.js';
export * from './contract/status.js';
export * from './contract/workers.js';
