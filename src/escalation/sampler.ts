import type { QueueBackend, QueueThroughput, SystemStatus } from '../backends/queue-backend.js';
import type { BackendRegistry } from '../backends/registry.js';
import { askSystem } from '../commands/timeout.js';
import type { Config, EscalationRule } from '../config/schema.js';
import { isOpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { QueueSample, Sample, SystemSample } from './samples.js';

/**
 * What a tick reads of every queue's throughput, in the same round trip as the counts: the last 5
 * minutes (a rate that one slow tick does not swing), timed over the newest 10 finished jobs of
 * each outcome (what keeps a tick over 1,000 busy queues bounded).
 */
export const SAMPLED_THROUGHPUT = { spanMs: 5 * 60_000, sample: 10 } as const;

/** The rule metrics only a throughput read knows. */
const THROUGHPUT_METRICS: readonly string[] = [
  'throughput',
  'failedPerMinute',
  'waitP95Seconds',
  'runP95Seconds',
];

/**
 * Whether any rule watches a throughput metric (as its metric or in `when`). Only then does a
 * tick read throughput: over 1,000 busy queues the read costs several times the counts
 * (`npm run bench -- throughput`), and a tick is held to 1.3× `status`.
 */
export function rulesNeedThroughput(rules: readonly EscalationRule[] | undefined): boolean {
  return (rules ?? []).some(
    (r) =>
      THROUGHPUT_METRICS.includes(r.metric) ||
      (r.when ?? []).some((c) => THROUGHPUT_METRICS.includes(c.metric)),
  );
}

export interface SamplerDeps {
  config: Pick<Config, 'systems'> & { escalation?: Pick<Config['escalation'], 'rules'> };
  backends: BackendRegistry;
}

/**
 * One sample of every system: exactly the reads `status` makes (`QueueBackend.status()`: one
 * pipelined round trip per system, plus Celery's worker inspection), in parallel, each under the
 * system's deadline. A system that fails is a sample with `ok: false`, never a failed tick.
 * `history` (oldest first) carries the Celery head sightings forward.
 */
export async function takeSample(
  deps: SamplerDeps,
  history: readonly Sample[],
  now: number,
): Promise<Sample> {
  const backends = deps.backends.all();
  const throughput = rulesNeedThroughput(deps.config.escalation?.rules) ? SAMPLED_THROUGHPUT : undefined;
  const settled = await Promise.allSettled(
    backends.map((backend) => {
      // New failures since the last good sample of this system, in the same round trip.
      const since = lastOkAt(history, backend.name);
      return askSystem(
        deps,
        backend.name,
        backend.status(undefined, {
          ...(since === undefined ? {} : { failedSince: since }),
          ...(throughput ? { throughput } : {}),
        }),
      );
    }),
  );
  const systems = settled.map((result, i): SystemSample => {
    const backend = backends[i]!;
    if (result.status === 'fulfilled')
      return toSystemSample(result.value, lastOk(history, backend.name), now);
    return failedSample(backend, result.reason);
  });
  return { at: now, systems };
}

function lastOkAt(history: readonly Sample[], system: string): number | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]!.systems.some((s) => s.name === system && s.ok)) return history[i]!.at;
  }
  return undefined;
}

function lastOk(history: readonly Sample[], system: string): SystemSample | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const found = history[i]!.systems.find((s) => s.name === system);
    if (found?.ok) return found;
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

/** What one `status()` says, reduced to the numbers rules look at. */
export function toSystemSample(
  status: SystemStatus,
  previous: SystemSample | undefined,
  now: number,
): SystemSample {
  const inspected = !status.warnings.some((w) => w.code === 'WorkerInspectFailed');
  const heads = new Map(previous?.queues.flatMap((q) => (q.head ? [[q.name, q.head] as const] : [])));
  const queues = status.queues.map((q): QueueSample => {
    const sample: QueueSample = {
      name: q.name,
      // Prioritized BullMQ jobs wait too; Celery reports 0 there.
      waiting: q.waiting + q.prioritized,
      active: q.active,
      delayed: q.delayed,
      failed: q.failed,
      ...(q.failedSince === undefined ? {} : { failedNew: q.failedSince }),
      ...(q.isPaused ? { paused: true } : {}),
      oldestWaitingSeconds: q.oldestWaitingSeconds,
      workers: inspected ? status.workers.filter((w) => !w.queues || w.queues.includes(q.name)).length : null,
    };
    Object.assign(sample, throughputSample(q.throughput));
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
    memory: {
      used: status.redis.usedMemoryBytes,
      max: status.redis.maxMemoryBytes,
      policy: status.redis.maxMemoryPolicy,
    },
    workers: inspected ? status.workers.map(workerIdentity).sort() : null,
    queues,
  };
}

/** The rule metrics of a queue's throughput; rates rounded so a stored sample stays small. */
function throughputSample(tp: QueueThroughput | undefined): Partial<QueueSample> {
  if (!tp) return {};
  const out: Partial<QueueSample> = {
    throughput: Math.round(tp.completedPerMinute * 100) / 100,
    failedPerMinute: Math.round(tp.failedPerMinute * 100) / 100,
  };
  if ('p95Ms' in tp.wait) out.waitP95Seconds = tp.wait.p95Ms / 1000;
  if ('p95Ms' in tp.run) out.runP95Seconds = tp.run.p95Ms / 1000;
  return out;
}

/**
 * Name plus what a new process under the same name changes: its connection address (BullMQ) or
 * its pid (Celery, whose `celery@host` comes back under its name after a crash). So a worker
 * restarting between samples counts as churn, which is what a crash loop looks like.
 */
function workerIdentity(worker: SystemStatus['workers'][number]): string {
  const incarnation = worker.details?.addr ?? worker.details?.pid;
  return incarnation === undefined ? worker.name : `${worker.name}|${incarnation}`;
}
