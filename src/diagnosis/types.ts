import type { SystemFacts } from '../backends/facts.js';
import type { SystemType } from '../backends/queue-backend.js';
import type { RedisSignals } from '../backends/redis-health.js';
import type { NetworkSample } from '../escalation/samples.js';

/**
 * The diagnosis' data: what the evidence gatherer (`gather.ts`) read, and what the causes
 * (`causes/*.ts`, each a pure function of it) make of it. Numbers and names only: never job data,
 * never a task's arguments. Times are epoch milliseconds.
 */

/** The runbooks' causes, by the ids `why --json` answers with (docs/runbooks.md maps them back). */
export const CAUSE_IDS = [
  'no-workers',
  'no-capacity',
  'stuck-tasks',
  'redis-memory',
  'task-burst',
  'retry-loop',
  'redis-network',
  'slow-dependency',
  'paused',
  'jobs-vanished',
] as const;
export type CauseId = (typeof CAUSE_IDS)[number];

export type Confidence = 'strong' | 'possible';

/**
 * One evidence line, coded: `code` names its wording in the catalog (`why.evidence`), `params`
 * its values. A param whose name ends in `At` is a time, in `Seconds` a duration; other numbers
 * are counts, strings are names (queues, workers, tasks), shown as code.
 */
export interface EvidenceLine {
  code: string;
  params: Record<string, string | number>;
}

/** A fix, as the command one would type after `/queue`; a button runs exactly that. */
export interface Fix {
  words: string[];
}

export interface Finding {
  id: CauseId;
  confidence: Confidence;
  /** The queues it explains; empty for a cause of the whole system (memory, network). */
  queues: string[];
  /** 2–4 lines, strongest first. */
  evidence: EvidenceLine[];
  fixes: Fix[];
  /** How much it explains (jobs waiting behind it, writes refused…), for the order among equals. */
  weight: number;
  /** The escalation rule of the same name, when there is one (`no-workers`, `redis-memory`…). */
  rule?: string;
}

export type CheckResult = 'found' | 'not-found' | 'unknown';

export interface Check {
  id: CauseId;
  result: CheckResult;
  /** Why it could not run (`unknown`), or what it looked at (`not-found`), coded for i18n. */
  reason?: string;
}

export type Verdict = 'cause' | 'unclear' | 'healthy';

export interface Diagnosis {
  verdict: Verdict;
  /** Strongest first. */
  causes: Finding[];
  checked: Check[];
}

/** What one cause's check says: a finding, nothing, or that it could not tell. */
export type Outcome =
  | { result: 'found'; finding: Omit<Finding, 'id'> }
  | { result: 'not-found'; reason?: string }
  | { result: 'unknown'; reason: string };

/** One queue as the gatherer read it now. */
export interface QueueNow {
  name: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  paused: boolean;
  /** Workers consuming it; null when the workers could not be asked. */
  workers: number | null;
  oldestWaitingSeconds: number | null;
  /** Completed and failed per minute over the last 5 minutes; null when not known. */
  completedPerMinute: number | null;
  failedPerMinute: number | null;
  /** p95 of the newest finished jobs' run time, in seconds; null when not known. */
  runP95Seconds: number | null;
}

/** One queue in one stored monitor sample. */
export interface QueueThen {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  workers: number | null;
  completedPerMinute?: number;
  runP95Seconds?: number;
}

/**
 * A sample's queues by name: a Map, or (`gather.ts`) a view of the stored columns that reads a
 * queue only when a cause asks for it.
 */
export interface QueuesThen {
  get(name: string): QueueThen | undefined;
}

/** One stored monitor sample of this system, reduced to what the causes compare with. */
export interface Past {
  at: number;
  ok: boolean;
  /** Worker identities (`name|addr`, `name|pid`); null when they could not be asked. */
  workers: string[] | null;
  queues: QueuesThen;
  /**
   * The monitor's reading of the link to Redis that tick (`escalation/network.ts`: PING round
   * trips, connection churn, young connections, workers back, silent consumers, the signals that
   * held); absent from samples that could not read it and older ones.
   */
  network?: NetworkSample;
}

export interface WorkerNow {
  name: string;
  queues?: string[];
  active?: number;
  /** Celery: pool size (`stats`). */
  concurrency?: number;
  reserved?: number;
  /** BullMQ: age of the worker's connection. */
  connectionAgeSeconds?: number;
  /** BullMQ: the connection's address (`ip:port`): a new one is a new connection. */
  address?: string;
}

export interface RunningNow {
  id: string;
  name: string;
  queue?: string;
  worker?: string;
  startedAt?: number;
  lockExpired?: boolean;
}

/** What one `INFO` said (every section), for memory, restarts and connections: the backend's reading. */
export type RedisNow = RedisSignals;

/** A failure group of a queue's newest failures, its error as `backends/error-groups.ts` put it. */
export interface FailureGroup {
  error: string;
  /** What the error says about the dependency: timeout, 429, 503, … (`error-kind.ts`). */
  kind: 'timeout' | 'rate-limited' | 'unavailable' | 'stalled' | 'other';
  count: number;
  /**
   * The task or job name most of the group's failures carry, and how many carry it (a name, never
   * a payload); absent when none names one (a Celery app without `result_extended`).
   */
  topName?: { name: string; count: number };
}

export interface WorkerGroupNow {
  name: string;
  /** `workers[].queues`, when the config names them. */
  queues?: string[];
  min: number;
  max: number;
  /** Replicas (or pool processes) now; null when not read. */
  current: number | null;
}

/**
 * The fixes a system can run, so a cause offers only those (`offers.ts` reads them off its
 * backend): a cause asks these, never the system's `type`.
 */
export interface FixOffers {
  /**
   * How stuck work is stopped: `revoke … --terminate` of its ids (the backend has `revoke`), or
   * `fail` of each job in its queue (it has `failJob`); null: neither.
   */
  stopStuck: 'revoke' | 'fail' | null;
  /** What `rate-limit` names there: a task, or a queue (which `concurrency` also limits). */
  limitTarget: SystemFacts['limitTarget'];
  /** `expire-results` (the backend has `expireResults`). */
  expireResults: boolean;
}

export interface Evidence {
  system: string;
  type: SystemType;
  offers: FixOffers;
  now: number;
  /** The one queue asked about, if any: the causes then speak of it alone. */
  queue?: string;
  stuckAfterMinutes: number;
  queues: QueueNow[];
  /** Null when the workers could not be asked (a Celery inspection timed out). */
  workers: WorkerNow[] | null;
  /** Running work (long ones); null when not read or not readable. */
  running: RunningNow[] | null;
  /** Celery: the retry-loop sample; null when the system has none. */
  retrying: { sampled: number; tasks: { name: string; count: number; maxRetries: number }[] } | null;
  /** Newest failures of the queues failing most, grouped by normalized error. */
  failures: { queue: string; groupedOver: number; groups: FailureGroup[]; maxAttempts: number }[];
  /** What waits next in the deepest queues: names only, from a bounded sample. */
  waitingNames: { queue: string; sampled: number; names: { name: string; count: number }[] }[];
  redis: RedisNow | null;
  /** Why `redis` is null. */
  redisError?: string;
  /** The monitor's stored samples of this system, oldest first (the last half hour at most). */
  history: Past[];
  /** Whether the store was there to ask (a read-only command line has none). */
  historyRead: boolean;
  groups: WorkerGroupNow[];
  /** Pauses recorded in the audit trail, per queue: who and when. */
  pauses: Map<string, { by: string; at: number }>;
  /** `escalation.escalateTo` and each queue's owner, for causes with nothing to click. */
  escalateTo: string[];
  owners: Map<string, string>;
}
