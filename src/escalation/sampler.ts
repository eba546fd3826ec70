import type {
  QueueBackend,
  QueueThroughput,
  SystemStatus,
  ThroughputOptions,
  UnknownRate,
} from '../backends/queue-backend.js';
import type { RedisHealth } from '../backends/redis-health.js';
import type { BackendRegistry } from '../backends/registry.js';
import { askSystem } from '../backends/timeout.js';
import type { Config, EscalationRule } from '../config/schema.js';
import { isOpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { networkSample } from './network.js';
import type { QueueSample, Sample, SystemSample } from './samples.js';
import type { HeadSighting, Sightings } from './sightings.js';

/**
 * What a tick reads of every queue's throughput, in the same round trip as the counts: jobs
 * completed and failed in the last 5 minutes (a rate that one slow tick does not swing, the span
 * `status` shows too), in every sample, for `trend` and the rate rules. Only when a rule watches a
 * duration are the newest 10 finished jobs of each outcome also timed: that reads job hashes, and
 * over 1,000 busy queues costs several times the counts (`npm run bench -- throughput`), while a
 * tick is held to 1.3× `status`.
 */
export const SAMPLED_THROUGHPUT = { spanMs: 5 * 60_000, sample: 10 } as const;

/** The rule metrics only a timing of finished jobs knows. */
const DURATION_METRICS: readonly string[] = ['waitP95Seconds', 'runP95Seconds'];

/** Whether any rule watches a duration (as its metric or in `when`): only then are jobs timed. */
export function rulesNeedDurations(rules: readonly EscalationRule[] | undefined): boolean {
  return (rules ?? []).some(
    (r) =>
      DURATION_METRICS.includes(r.metric) || (r.when ?? []).some((c) => DURATION_METRICS.includes(c.metric)),
  );
}

/** What a tick asks of the throughput: always the rates, the durations only for a rule on them. */
export function sampledThroughput(rules: readonly EscalationRule[] | undefined): ThroughputOptions {
  return {
    spanMs: SAMPLED_THROUGHPUT.spanMs,
    sample: rulesNeedDurations(rules) ? SAMPLED_THROUGHPUT.sample : 0,
  };
}

export interface SamplerDeps {
  config: Pick<Config, 'systems'> & { escalation?: Pick<Config['escalation'], 'rules'> };
  backends: BackendRegistry;
}

/**
 * One sample of every system: exactly the reads `status` makes (`QueueBackend.status()`: one
 * pipelined round trip per system, plus Celery's worker inspection), in parallel, each under the
 * system's deadline. A system that fails is a sample with `ok: false`, never a failed tick.
 * `history` (oldest first) carries the Celery head sightings and worker identities forward. Beside
 * those reads, one `INFO persistence` per system (the `redis-persistence` rule).
 */
export async function takeSample(
  deps: SamplerDeps,
  history: readonly Sample[],
  now: number,
  /** Head sightings of systems `history` has no good sample of (older than the monitor reads). */
  sightings?: Sightings,
): Promise<Sample> {
  const backends = deps.backends.all();
  const throughput = sampledThroughput(deps.config.escalation?.rules);
  const reads = backends.map((backend) => {
    // New failures since the last good sample of this system, in the same round trip; Celery's
    // `stats` beside its other inspections, for the pid and uptime of each worker.
    const since = lastOkAt(history, backend.name);
    return askSystem(
      deps,
      backend.name,
      backend.status(undefined, {
        ...(since === undefined ? {} : { failedSince: since }),
        workerStats: true,
        throughput,
      }),
    );
  });
  const asked = Promise.allSettled(reads);
  // The monitor's own read beside `status`'s, at the same time: the network reading (PINGs while
  // the status is read, and one round trip of INFO and CLIENT LIST that carries the persistence
  // too), else one INFO persistence. Unknown when it fails (a user without INFO rights): that
  // costs the persistence and network rules only.
  const networkAsked = Promise.allSettled(
    backends.map((backend, i) =>
      backend.network
        ? askSystem(deps, backend.name, backend.network(reads[i]))
        : Promise.reject(new Error('not read')),
    ),
  );
  const persistedAsked = Promise.allSettled(
    backends.map((backend) =>
      backend.persistence && !backend.network
        ? askSystem(deps, backend.name, backend.persistence())
        : Promise.reject(new Error('not read')),
    ),
  );
  const [settled, networked, persisted] = await Promise.all([asked, networkAsked, persistedAsked]);
  const systems = settled.map((result, i): SystemSample => {
    const backend = backends[i]!;
    if (result.status !== 'fulfilled') return failedSample(backend, result.reason);
    const previous = lastOkWithAt(history, backend.name);
    const sample = toSystemSample(
      result.value,
      previous?.system,
      now,
      previous?.at,
      previous ? undefined : sightings?.get(backend.name),
    );
    const network = networked[i]!;
    const persistence =
      network.status === 'fulfilled'
        ? network.value.persistence
        : persisted[i]!.status === 'fulfilled'
          ? (persisted[i] as PromiseFulfilledResult<RedisHealth['persistence']>).value
          : undefined;
    if (persistence) sample.persistence = { rdb: persistence.rdbLastStatus, aof: persistence.aofLastStatus };
    if (network.status === 'fulfilled') sample.network = networkSample(network.value, sample, history, now);
    return sample;
  });
  return { at: now, systems };
}

function lastOkAt(history: readonly Sample[], system: string): number | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]!.systems.some((s) => s.name === system && s.ok)) return history[i]!.at;
  }
  return undefined;
}

function lastOkWithAt(
  history: readonly Sample[],
  system: string,
): { system: SystemSample; at: number } | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const found = history[i]!.systems.find((s) => s.name === system);
    if (found?.ok) return { system: found, at: history[i]!.at };
  }
  return undefined;
}

function failedSample(backend: QueueBackend, reason: unknown): SystemSample {
  const error = isOpsError(reason)
    ? messages().errors.describe(reason)
    : reason instanceof Error
      ? reason.message
      : String(reason);
  return { name: backend.name, type: backend.type, ok: false, error, workers: null, queues: [] };
}

/**
 * Workers consuming each queue: those listing it, plus those that list no queues (they take any).
 * One pass over the workers instead of one per queue: a tick samples 1,000s of queues.
 */
function workersPerQueue(workers: SystemStatus['workers']): (queue: string) => number {
  let anyQueue = 0;
  const listed = new Map<string, number>();
  for (const w of workers) {
    if (!w.queues) anyQueue++;
    else for (const queue of new Set(w.queues)) listed.set(queue, (listed.get(queue) ?? 0) + 1);
  }
  return (queue) => anyQueue + (listed.get(queue) ?? 0);
}

/**
 * What one `status()` says, reduced to the numbers rules look at. Built field by field, in one
 * order, rather than from spreads: a tick makes one of these per queue, and the spreads' short-lived
 * objects were a good part of its time over 1,000 queues.
 */
export function toSystemSample(
  status: SystemStatus,
  previous: SystemSample | undefined,
  now: number,
  previousAt?: number,
  /** Without a previous sample: the sightings of an older one (a monitor back after a long stop). */
  storedHeads?: ReadonlyMap<string, HeadSighting>,
): SystemSample {
  const inspected = !status.warnings.some((w) => w.code === 'WorkerInspectFailed');
  const workersOf = inspected ? workersPerQueue(status.workers) : undefined;
  const heads: ReadonlyMap<string, HeadSighting> = previous
    ? new Map(previous.queues.flatMap((q) => (q.head ? [[q.name, q.head] as const] : [])))
    : (storedHeads ?? new Map());
  // Why a rate is not known is the system's (Celery) or, BullMQ, always that nothing is kept.
  let ratesRead = false;
  let unknown: UnknownRate | undefined;
  let estimated = false;
  const queues = status.queues.map((q): QueueSample => {
    const sample: QueueSample = {
      name: q.name,
      // Prioritized BullMQ jobs wait too; Celery reports 0 there.
      waiting: q.waiting + q.prioritized,
      active: q.active,
      delayed: q.delayed,
      failed: q.failed,
      oldestWaitingSeconds: q.oldestWaitingSeconds,
      workers: workersOf ? workersOf(q.name) : null,
    };
    if (q.failedSince !== undefined) sample.failedNew = q.failedSince;
    if (q.isPaused) sample.paused = true;
    const tp = q.throughput;
    if (tp) {
      ratesRead = true;
      addThroughput(sample, tp);
      if (unknown === undefined && tp.unknown)
        unknown = systemReason(tp.unknown.completed) ?? systemReason(tp.unknown.failed);
      if (tp.estimated) estimated = true;
    }
    if (q.headId !== undefined && q.waiting > 0) {
      // The same message still at the head: it has waited since the monitor first saw it there,
      // across restarts and `monitor --once` runs, because the sighting is in the stored samples.
      const seen = heads.get(q.name);
      const firstSeen = seen && seen.id === q.headId ? seen.firstSeen : now;
      sample.head = { id: q.headId, firstSeen };
      const held = Math.max(0, Math.floor((now - firstSeen) / 1000));
      sample.oldestWaitingSeconds = Math.max(q.oldestWaitingSeconds ?? 0, held);
    }
    return sample;
  });
  return {
    name: status.name,
    type: status.type,
    ok: true,
    ...(ratesRead
      ? { rates: { ...(unknown ? { unknown } : {}), ...(estimated ? { estimated: true as const } : {}) } }
      : {}),
    memory: {
      used: status.redis.usedMemoryBytes,
      max: status.redis.maxMemoryBytes,
      policy: status.redis.maxMemoryPolicy,
    },
    workers: inspected
      ? status.workers.map((w) => workerIdentity(w, previous?.workers ?? null, now, previousAt)).sort()
      : null,
    queues,
  };
}

/** A reason a rate is not known that is the system's own (Celery's), not a queue keeping nothing. */
const systemReason = (why: UnknownRate | undefined) =>
  why !== undefined && why !== 'notKept' ? why : undefined;

/**
 * Into a queue's sample: the rule metrics of its throughput, and for `trend` where the rates came
 * from when that is not the system's usual source; rates rounded so a stored sample stays small.
 */
function addThroughput(out: QueueSample, tp: QueueThroughput): void {
  if (tp.completedPerMinute !== null) out.throughput = Math.round(tp.completedPerMinute * 100) / 100;
  if (tp.failedPerMinute !== null) out.failedPerMinute = Math.round(tp.failedPerMinute * 100) / 100;
  if (tp.source === 'metrics') out.rateSource = 'metrics';
  if ('p95Ms' in tp.wait) out.waitP95Seconds = tp.wait.p95Ms / 1000;
  if ('p95Ms' in tp.run) out.runP95Seconds = tp.run.p95Ms / 1000;
}

/**
 * Name plus what a new process under the same name changes: its connection address (BullMQ) or
 * its pid (Celery, whose `celery@host` comes back under its name after a crash). So a worker
 * restarting between samples counts as churn, which is what a crash loop looks like.
 *
 * A container restarted by Compose often runs its worker under the same pid again: an uptime
 * (Celery `stats`) shorter than the time since the previous sample is a restart all the same,
 * and the identity then takes the start time (`name|pid~<epoch s>`), kept while the process
 * lives. A worker whose `stats` did not answer this time keeps the identity it had.
 */
export function workerIdentity(
  worker: SystemStatus['workers'][number],
  previous: readonly string[] | null,
  now: number,
  previousAt: number | undefined,
): string {
  const before = previous?.find((id) => id === worker.name || id.startsWith(`${worker.name}|`));
  const address = worker.details?.addr;
  if (address !== undefined) return `${worker.name}|${address}`;
  const pid = worker.details?.pid;
  if (pid === undefined) return before ?? worker.name;
  const same = `${worker.name}|${pid}`;
  const uptime = Number(worker.details?.uptimeSeconds);
  const startedAt = Number.isFinite(uptime) ? now - uptime * 1000 : undefined;
  // Celery rounds uptime to the second, and the sample is taken a moment after the reply.
  const restartedSincePrevious =
    startedAt !== undefined && previousAt !== undefined && startedAt > previousAt + 2000;
  if (before === same || before?.startsWith(`${same}~`)) {
    return restartedSincePrevious ? `${same}~${Math.round(startedAt! / 1000)}` : before;
  }
  return same;
}
