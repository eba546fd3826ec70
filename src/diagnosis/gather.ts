import type {
  DlqSample,
  QueueBackend,
  QueuedJob,
  RunningWork,
  SystemStatus,
  WorkerInfo,
} from '../backends/queue-backend.js';
import type { RedisSignals } from '../backends/redis-health.js';
import { askSystem } from '../backends/timeout.js';
import type { Config } from '../config/schema.js';
import { isOpsError } from '../errors.js';
import { columnsOf, decodeSystemColumns, type Sample, type SystemColumns } from '../escalation/samples.js';
import { messages } from '../i18n/index.js';
import type { GroupState } from '../scalers/types.js';
import type { AuditEntry, SampleRow } from '../store/store.js';
import { groupFailures } from './error-kind.js';
import { fixOffersOf } from './offers.js';
import type { Evidence, Past, QueueNow, QueueThen, WorkerGroupNow } from './types.js';

/**
 * The monitor's samples a diagnosis compares with: the last 15 minutes (the longest window a
 * cause looks back over), at most this many (15 minutes at the default 30 s tick). Reading one
 * of 1,000 queues back costs its JSON.parse (~0.15 ms): its queues stay columns, read only for
 * the queues a cause asks about (`historyOf`), which keeps `why` within twice the `status` read
 * (`npm run bench -- why`).
 */
export const HISTORY_MS = 15 * 60_000;
export const HISTORY_SAMPLES = 30;
/** The bounded second reads: queues whose failures are read, whose next jobs are named, whose active work is listed. */
const FAILING_QUEUES = 5;
const FAILURES_READ = 20;
const NAMED_QUEUES = 3;
const NAMES_READ = 10;
const RUNNING_QUEUES = 20;
/** Audit entries looked through for who paused a queue. */
const AUDIT_READ = 500;
/** What the throughput read covers: `status`' span; durations only for one queue. */
const SPAN_MS = 5 * 60_000;
const ONE_QUEUE_SAMPLE = 50;

export interface GatherDeps {
  config: Pick<Config, 'systems' | 'escalation'> & { diagnosis?: { stuckAfterMinutes: number } };
  /** The store's samples and audit trail; absent in a read-only setup (then no history). */
  store?: {
    listAudit?(options: { limit: number; newestFirst: boolean }): Promise<AuditEntry[]>;
    escalation?: { listSamples(sinceAt: string, page?: { limit: number }): Promise<SampleRow[]> };
  };
  /** The configured worker groups' live state, for `scale current+1`. */
  groupState?: (system: string, group: string) => Promise<GroupState>;
  now: () => Date;
}

const reason = (error: unknown): string =>
  isOpsError(error)
    ? messages().errors.describe(error)
    : error instanceof Error
      ? error.message
      : String(error);

/**
 * Everything one `why` weighs, read through the backend's own methods: first one `status()` (the
 * counts, memory, workers and throughput in one pipelined round trip, as `status` reads them), one
 * `INFO`, the stored samples and the audit trail, in parallel; then, bounded by the first read, the
 * few queues that need a closer look: the newest failures of those failing most, the next jobs of
 * the deepest, the active work of the busiest. Each read that fails leaves its part empty and says
 * why, so a check that needed it answers `unknown`.
 */
export async function gatherEvidence(
  deps: GatherDeps,
  system: string,
  backend: QueueBackend,
  queue?: string,
): Promise<Evidence> {
  const now = deps.now().getTime();
  const config = deps.config.systems.find((s) => s.name === system);
  const byWorkers = backend.facts.runningAnsweredByWorkers;
  const ask = <T>(work: Promise<T>) => askSystem(deps, system, work);
  const [status, signals, history, pauses, workersRunning] = await Promise.all([
    ask(
      backend.status(queue === undefined ? undefined : [queue], {
        workerStats: true,
        throughput: { spanMs: SPAN_MS, sample: queue === undefined ? 0 : ONE_QUEUE_SAMPLE },
      }),
    ),
    backend.redisSignals
      ? ask(backend.redisSignals()).then(
          (value): RedisSignals | string => value,
          (error: unknown) => reason(error),
        )
      : Promise.resolve('redisNotRead'),
    readHistory(deps, system, now),
    readPauses(deps, system),
    // Work the workers answer for (Celery's pidbox `active`) names its queue only through `running()`.
    byWorkers && backend.running ? ask(backend.running()).catch(() => null) : Promise.resolve(null),
  ]);
  const queues = status.queues.map((q) => queueNow(q, status));
  const [failures, waitingNames, queuesRunning, groups] = await Promise.all([
    readFailures(ask, backend, queues),
    readNames(ask, backend, queues),
    !byWorkers && backend.running ? readRunning(ask, backend, queues) : Promise.resolve(workersRunning),
    readGroups(deps, system, config?.workers),
  ]);
  const owners = new Map<string, string>();
  for (const entry of config?.queueContext ?? []) if (entry.owner) owners.set(entry.name, entry.owner);
  const inspected = !status.warnings.some((w) => w.code === 'WorkerInspectFailed');
  return {
    system,
    type: backend.type,
    offers: fixOffersOf(backend),
    now,
    ...(queue !== undefined ? { queue } : {}),
    stuckAfterMinutes: deps.config.diagnosis?.stuckAfterMinutes ?? 30,
    queues,
    workers: inspected ? status.workers.map(workerNow) : null,
    running: byWorkers ? workersRunning : queuesRunning,
    retrying: status.retrying ? { sampled: status.retrying.sampled, tasks: status.retrying.tasks } : null,
    failures,
    waitingNames,
    redis: typeof signals === 'string' ? null : signals,
    ...(typeof signals === 'string' ? { redisError: signals } : {}),
    history: history ?? [],
    historyRead: history !== undefined,
    groups,
    pauses,
    escalateTo: deps.config.escalation.escalateTo.filter((p) => p !== '*'),
    owners,
  };
}

function queueNow(q: SystemStatus['queues'][number], status: SystemStatus): QueueNow {
  const tp = q.throughput;
  let workers: number | null = null;
  if (!status.warnings.some((w) => w.code === 'WorkerInspectFailed'))
    workers = status.workers.filter((w) => !w.queues || w.queues.includes(q.name)).length;
  return {
    name: q.name,
    waiting: q.waiting + q.prioritized,
    active: q.active,
    delayed: q.delayed,
    failed: q.failed,
    paused: q.isPaused,
    workers,
    oldestWaitingSeconds: q.oldestWaitingSeconds,
    completedPerMinute: tp?.completedPerMinute ?? null,
    failedPerMinute: tp?.failedPerMinute ?? null,
    runP95Seconds: tp && 'p95Ms' in tp.run ? tp.run.p95Ms / 1000 : null,
  };
}

function workerNow(w: WorkerInfo): Evidence['workers'] extends (infer W)[] | null ? W : never {
  const concurrency = Number(w.details?.concurrency ?? w.details?.processes);
  const age = Number(w.details?.ageSeconds);
  return {
    name: w.name,
    ...(w.queues ? { queues: w.queues } : {}),
    ...(w.active !== undefined ? { active: w.active } : {}),
    ...(Number.isFinite(concurrency) ? { concurrency } : {}),
    ...(w.reserved !== undefined ? { reserved: w.reserved } : {}),
    ...(Number.isFinite(age) ? { connectionAgeSeconds: age } : {}),
    ...(typeof w.details?.addr === 'string' ? { address: w.details.addr } : {}),
  };
}

/** The stored samples of this system, oldest first; undefined when there is no store to ask. */
async function readHistory(deps: GatherDeps, system: string, now: number): Promise<Past[] | undefined> {
  const list = deps.store?.escalation?.listSamples;
  if (!list) return undefined;
  let rows: SampleRow[];
  try {
    rows = await deps.store!.escalation!.listSamples(new Date(now - HISTORY_MS).toISOString());
  } catch {
    return undefined;
  }
  return historyOf(rows.slice(-HISTORY_SAMPLES), system);
}

/**
 * Stored samples as the causes compare with them: this system's part of each, its queues read
 * from the stored columns (`decodeSystemColumns`) only when a cause asks for one. A row that
 * cannot be read, or has no such system, is left out.
 */
export function historyOf(rows: readonly Pick<SampleRow, 'data'>[], system: string): Past[] {
  const positions = positionsByName();
  return rows.flatMap((row) => {
    let columns: SystemColumns | undefined;
    try {
      columns = decodeSystemColumns(row.data, system);
    } catch {
      return [];
    }
    return columns ? [pastOfColumns(columns, positions)] : [];
  });
}

/** One monitor sample of this system as the causes compare with it; undefined when it has none. */
export function pastOf(sample: Sample, system: string): Past | undefined {
  const mine = sample.systems.find((s) => s.name === system);
  return mine ? pastOfColumns(columnsOf(sample.at, mine), positionsByName()) : undefined;
}

/**
 * One system of a sample as the causes compare with it. A queue is read from the columns when a
 * cause asks for it (the causes look at a few of 1,000 queues, and of each at a few fields), by
 * its position, which consecutive samples share while the system's queues stay the same.
 */
function pastOfColumns(columns: SystemColumns, positions: PositionsByName): Past {
  const { at, system } = columns;
  const index = positions(columns.names);
  const waiting = columns.column('waiting');
  const active = columns.column('active');
  const delayed = columns.column('delayed');
  const failed = columns.column('failed');
  const workers = columns.column('workers');
  const throughput = columns.column('throughput');
  const runP95Seconds = columns.column('runP95Seconds');
  return {
    at,
    ok: system.ok,
    workers: system.workers,
    queues: {
      get(name: string): QueueThen | undefined {
        const i = index.get(name);
        if (i === undefined) return undefined;
        const completed = throughput(i);
        const run = runP95Seconds(i);
        return {
          waiting: waiting(i)!,
          active: active(i)!,
          delayed: delayed(i)!,
          failed: failed(i)!,
          workers: workers(i)!,
          ...(completed !== undefined ? { completedPerMinute: completed } : {}),
          ...(run !== undefined ? { runP95Seconds: run } : {}),
        };
      },
    },
    ...(system.network ? { network: system.network } : {}),
  };
}

/** A queue's position by its name, for one sample's names (the last name wins, as in a Map). */
type PositionsByName = (names: readonly string[]) => Map<string, number>;

/** Positions by name that reuse the last sample's when its names are the same, in the same order. */
function positionsByName(): PositionsByName {
  let last: { names: readonly string[]; index: Map<string, number> } | undefined;
  return (names) => {
    if (last && sameNames(last.names, names)) return last.index;
    const index = new Map<string, number>();
    for (let i = 0; i < names.length; i++) index.set(names[i]!, i);
    last = { names, index };
    return index;
  };
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Who paused each queue and when, from the newest audit entries (`action.pause` done). */
async function readPauses(deps: GatherDeps, system: string): Promise<Evidence['pauses']> {
  const pauses: Evidence['pauses'] = new Map();
  if (!deps.store?.listAudit) return pauses;
  let entries: AuditEntry[];
  try {
    entries = await deps.store.listAudit({ limit: AUDIT_READ, newestFirst: true });
  } catch {
    return pauses;
  }
  const resumed = new Set<string>();
  for (const entry of entries) {
    const target = entry.target ?? '';
    if (!target.startsWith(`${system}/`)) continue;
    const queue = target.slice(system.length + 1);
    // The action's own entry once it ran (`done`), or the command's when no approval was needed.
    const ran = entry.outcome === 'done' || entry.outcome === 'ok';
    if (!ran) continue;
    if (entry.action === 'action.resume' || entry.action === 'command.resume') resumed.add(queue);
    if (
      (entry.action === 'action.pause' || entry.action === 'command.pause') &&
      !resumed.has(queue) &&
      !pauses.has(queue)
    )
      pauses.set(queue, { by: entry.actorName ?? entry.actorId, at: Date.parse(entry.at) });
  }
  return pauses;
}

type Ask = <T>(work: Promise<T>) => Promise<T>;

/** The newest failures of the queues failing most (by rate, then by count), grouped by normalized error. */
async function readFailures(
  ask: Ask,
  backend: QueueBackend,
  queues: QueueNow[],
): Promise<Evidence['failures']> {
  const failing = queues
    .filter((q) => q.failed > 0)
    .sort((a, b) => (b.failedPerMinute ?? 0) - (a.failedPerMinute ?? 0) || b.failed - a.failed)
    .slice(0, FAILING_QUEUES);
  const read = await Promise.all(
    failing.map((q) => ask(backend.dlq(q.name, FAILURES_READ, { newestOnly: true })).catch(() => null)),
  );
  return read.flatMap((sample: DlqSample | null) => {
    if (!sample) return [];
    return [
      {
        queue: sample.queue,
        groupedOver: sample.jobs.length,
        groups: groupFailures(sample.jobs.map((j) => ({ error: j.error, name: j.name }))),
        maxAttempts: Math.max(0, ...sample.jobs.map((j) => j.attempts)),
      },
    ];
  });
}

/** Names of what waits next in the deepest queues (a bounded sample, names only). */
async function readNames(
  ask: Ask,
  backend: QueueBackend,
  queues: QueueNow[],
): Promise<Evidence['waitingNames']> {
  if (!backend.nextJobs) return [];
  const deepest = queues
    .filter((q) => q.waiting > 0 && !q.paused)
    .sort((a, b) => b.waiting - a.waiting)
    .slice(0, NAMED_QUEUES);
  const read = await Promise.all(
    deepest.map((q) => ask(backend.nextJobs!(q.name, NAMES_READ)).catch((): QueuedJob[] => [])),
  );
  return deepest.map((q, i) => {
    const counts = new Map<string, number>();
    for (const job of read[i]!) counts.set(job.name, (counts.get(job.name) ?? 0) + 1);
    return {
      queue: q.name,
      sampled: read[i]!.length,
      names: [...counts].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count),
    };
  });
}

/** BullMQ: the active jobs of the busiest queues (their lock and start), bounded. */
async function readRunning(
  ask: Ask,
  backend: QueueBackend,
  queues: QueueNow[],
): Promise<RunningWork[] | null> {
  const busy = queues
    .filter((q) => q.active > 0)
    .sort((a, b) => b.active - a.active)
    .slice(0, RUNNING_QUEUES)
    .map((q) => q.name);
  if (busy.length === 0) return [];
  return await ask(backend.running!(busy)).catch(() => null);
}

/** The system's worker groups, their `queues` and replicas now (null when they could not be read). */
async function readGroups(
  deps: GatherDeps,
  system: string,
  workers: Record<string, { min: number; max: number; queues?: string[] }> | undefined,
): Promise<WorkerGroupNow[]> {
  const entries = Object.entries(workers ?? {});
  return await Promise.all(
    entries.map(async ([name, spec]) => {
      let current: number | null = null;
      if (deps.groupState) {
        try {
          const state = await askSystem(deps, system, deps.groupState(system, name));
          const counts = state.targets.map((t) => t.desired ?? t.current);
          current =
            counts.every((c) => c !== null) && counts.length > 0 ? Math.max(...(counts as number[])) : null;
        } catch {
          current = null;
        }
      }
      return { name, ...(spec.queues ? { queues: spec.queues } : {}), min: spec.min, max: spec.max, current };
    }),
  );
}
