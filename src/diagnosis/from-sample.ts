import type { Config } from '../config/schema.js';
import type { Sample, SystemSample } from '../escalation/samples.js';
import { HISTORY_MS, HISTORY_SAMPLES, pastOf } from './gather.js';
import type { Evidence, FixOffers, Past, QueueNow, RedisNow } from './types.js';

/** A worker identity's name (`celery@host|pid` → `celery@host`). */
const nameOf = (identity: string) => identity.split('|', 1)[0]!;

/**
 * Redis as the tick read it: the memory figures and the PING round trip. What the tick does not
 * read (restarts, evictions, refused writes) stays unknown (null), never guessed.
 */
function redisOf(system: SystemSample): RedisNow | null {
  if (!system.memory) return null;
  return {
    usedBytes: system.memory.used,
    maxBytes: system.memory.max,
    policy: system.memory.policy,
    uptimeSeconds: null,
    evictedKeys: null,
    oomRejections: null,
    connectionsReceived: system.network?.received ?? null,
    rejectedConnections: system.network?.rejected ?? null,
    connectedClients: system.network?.clients ?? null,
    loading: false,
    keysLoaded: null,
    roundTripMs: system.network?.rttMaxMs ?? 0,
  };
}

/**
 * The Evidence of one system from what a monitor tick already holds: its own sample (the `status`
 * read, reduced) and the samples before it. No Redis round trip of its own: the failures, the
 * next jobs' names, the running work and the worker groups' replicas are not read, so the causes
 * that need them answer from less, or `unknown`. `why` reads them all (`gather.ts`).
 */
export function evidenceFromSample(
  config: Pick<Config, 'escalation'> & { diagnosis?: { stuckAfterMinutes: number } } & {
    systems: readonly {
      name: string;
      workers?: Record<string, { min: number; max: number; queues?: string[] }>;
    }[];
  },
  system: SystemSample,
  past: readonly Sample[],
  now: number,
  offers: FixOffers,
): Evidence {
  const queues: QueueNow[] = system.queues.map((q) => ({
    name: q.name,
    waiting: q.waiting,
    active: q.active,
    delayed: q.delayed,
    failed: q.failed,
    paused: q.paused === true,
    workers: q.workers,
    oldestWaitingSeconds: q.oldestWaitingSeconds,
    completedPerMinute: q.throughput ?? null,
    failedPerMinute: q.failedPerMinute ?? null,
    runP95Seconds: q.runP95Seconds ?? null,
  }));
  const history: Past[] = past
    .filter((s) => s.at >= now - HISTORY_MS && s.at < now)
    .slice(-HISTORY_SAMPLES)
    .flatMap((s) => {
      const p = pastOf(s, system.name);
      return p ? [p] : [];
    });
  const redis = redisOf(system);
  const spec = config.systems.find((s) => s.name === system.name);
  return {
    system: system.name,
    type: system.type,
    offers,
    now,
    stuckAfterMinutes: config.diagnosis?.stuckAfterMinutes ?? 30,
    queues,
    workers: system.workers === null ? null : system.workers.map((id) => ({ name: nameOf(id) })),
    running: null,
    retrying: null,
    failures: [],
    waitingNames: [],
    redis,
    ...(redis ? {} : { redisError: 'redisNotRead' }),
    history,
    historyRead: true,
    groups: Object.entries(spec?.workers ?? {}).map(([name, g]) => ({
      name,
      ...(g.queues ? { queues: g.queues } : {}),
      min: g.min,
      max: g.max,
      current: null,
    })),
    pauses: new Map(),
    escalateTo: config.escalation.escalateTo.filter((p) => p !== '*'),
    owners: new Map(),
  };
}
