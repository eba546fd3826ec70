import type { QueueBackend, SystemStatus } from '../backends/queue-backend.js';
import type { BackendRegistry } from '../backends/registry.js';
import { askSystem } from '../backends/timeout.js';
import type { Config } from '../config/schema.js';
import { isOpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { QueueSample, Sample, SystemSample } from './samples.js';

export interface SamplerDeps {
  config: Pick<Config, 'systems'>;
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
  const settled = await Promise.allSettled(
    backends.map((backend) => {
      // New failures since the last good sample of this system, in the same round trip.
      const since = lastOkAt(history, backend.name);
      return askSystem(
        deps,
        backend.name,
        backend.status(undefined, since === undefined ? undefined : { failedSince: since }),
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

/**
 * Name plus what a new process under the same name changes: its connection address (BullMQ) or
 * its pid (Celery, whose `celery@host` comes back under its name after a crash). So a worker
 * restarting between samples counts as churn, which is what a crash loop looks like.
 */
function workerIdentity(worker: SystemStatus['workers'][number]): string {
  const incarnation = worker.details?.addr ?? worker.details?.pid;
  return incarnation === undefined ? worker.name : `${worker.name}|${incarnation}`;
}
