import type { Evidence, Outcome } from '../types.js';
import { goodPast, inScope, line, sum, whoToCall } from './common.js';

/** Jobs gone unexplained, at least this many and this share of what was there. */
const MIN_LOST = 10;
const MIN_SHARE = 0.1;
/** A Redis up for less than this may have lost what it held before. */
const RECENT_RESTART_SECONDS = 15 * 60;

/**
 * Pushizo §3 "Redis kaybı/temizlenmesi": the depth fell with no completions to explain it, and
 * Redis restarted (an older snapshot loaded), evicted or was flushed. Nothing to click: the
 * evidence names the runbook's recovery, who to call and the queues' owners.
 */
export function jobsVanished(e: Evidence): Outcome {
  const redis = e.redis;
  if (!redis) return { result: 'unknown', reason: e.redisError ?? 'redisNotRead' };
  const last = goodPast(e).at(-1);
  const restartedAt = redis.uptimeSeconds === null ? undefined : e.now - redis.uptimeSeconds * 1000;
  const recentRestart =
    restartedAt !== undefined && (redis.uptimeSeconds ?? Infinity) < RECENT_RESTART_SECONDS;
  if (!last) {
    if (!recentRestart) return { result: 'not-found', reason: 'noSamples' };
    return {
      result: 'found',
      finding: {
        confidence: 'possible',
        queues: [],
        evidence: [
          line('redisRestarted', { sinceAt: restartedAt!, keys: redis.keysLoaded ?? 0 }),
          line('noSamplesToCompare', {}),
        ],
        fixes: [],
        weight: 0,
      },
    };
  }
  const minutes = (e.now - last.at) / 60_000;
  const lost: { queue: string; before: number; now: number; gone: number }[] = [];
  for (const q of inScope(e)) {
    const then = last.queues.get(q.name);
    if (!then) continue;
    const before = then.waiting + then.delayed + then.active + then.failed;
    const now = q.waiting + q.delayed + q.active + q.failed;
    const done = Math.ceil((q.completedPerMinute ?? 0) * minutes);
    const gone = before - now - done;
    if (gone >= MIN_LOST && gone >= MIN_SHARE * before) lost.push({ queue: q.name, before, now, gone });
  }
  const restartedSinceLast = restartedAt !== undefined && restartedAt > last.at;
  if (lost.length === 0) return { result: 'not-found' };
  lost.sort((a, b) => b.gone - a.gone);
  const lead = lost[0]!;
  const evidence = [
    line('depthFell', { queue: lead.queue, before: lead.before, now: lead.now, beforeAt: last.at }),
  ];
  if (restartedSinceLast)
    evidence.push(line('redisRestarted', { sinceAt: restartedAt!, keys: redis.keysLoaded ?? 0 }));
  const evicted = redis.evictedKeys ?? 0;
  if (evicted > 0) evidence.push(line('keysEvicted', { count: evicted, policy: redis.policy }));
  evidence.push(line('recover', {}));
  const call = whoToCall(
    e,
    lost.map((l) => l.queue),
  );
  if (call) evidence.push(call);
  return {
    result: 'found',
    finding: {
      confidence: restartedSinceLast || evicted > 0 ? 'strong' : 'possible',
      queues: lost.map((l) => l.queue).slice(0, 20),
      evidence: evidence.slice(0, 4),
      fixes: [],
      weight: sum(lost.map((l) => l.gone)),
    },
  };
}
