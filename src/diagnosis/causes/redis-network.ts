import type { Evidence, EvidenceLine, Outcome } from '../types.js';
import { line, whoToCall } from './common.js';

/** The window failed samples are counted in (k of n), as the `redis-network` rule's `within`. */
const WINDOW_MS = 15 * 60_000;
/** A round trip above this (ms) is slow for a Redis next to its workers. */
const SLOW_RTT_MS = 100;
/** A worker connection younger than this, on a Redis up much longer, reconnected. */
const YOUNG_SECONDS = 60;

/**
 * Zeus 6 "Redis'e bağlantı kararsız": reads of this Redis that failed between ones that worked (k
 * of n in the window, not only a run), slow round trips where the samples keep them, and worker
 * connections that stay young on a Redis that has been up far longer. Nothing to click: the
 * evidence names who to call.
 */
export function redisNetwork(e: Evidence): Outcome {
  const recent = e.history.filter((p) => p.at >= e.now - WINDOW_MS);
  const failed = recent.filter((p) => !p.ok).length;
  // Failures with a success after the first of them: a flapping link, not a Redis that is down.
  const firstFailed = recent.findIndex((p) => !p.ok);
  const flapping = firstFailed >= 0 && recent.slice(firstFailed).some((p) => p.ok);
  const lines: EvidenceLine[] = [];
  let strong = false;
  if (failed > 0 && (flapping || e.redis)) {
    lines.push(line('samplesFailed', { failed, of: recent.length, minutes: WINDOW_MS / 60_000 }));
    strong = failed >= 3;
  }
  if (!e.redis && recent.some((p) => p.ok)) lines.push(line('unreachableNow', {}));

  const rtts = recent.flatMap((p) => (p.network?.rttP95Ms !== undefined ? [p.network.rttP95Ms] : []));
  const worstRtt = Math.max(e.redis?.roundTripMs ?? 0, ...rtts);
  if (worstRtt >= SLOW_RTT_MS)
    lines.push(line('slowRoundTrip', { ms: Math.round(worstRtt), threshold: SLOW_RTT_MS }));

  const uptime = e.redis?.uptimeSeconds ?? null;
  const young = (e.workers ?? []).filter(
    (w) => w.connectionAgeSeconds !== undefined && w.connectionAgeSeconds < YOUNG_SECONDS,
  );
  if (
    uptime !== null &&
    uptime > 10 * YOUNG_SECONDS &&
    young.length >= 2 &&
    young.length === (e.workers ?? []).length
  )
    lines.push(
      line('youngConnections', { count: young.length, seconds: YOUNG_SECONDS, uptimeSeconds: uptime }),
    );

  if (lines.length === 0) {
    // What the samples do not hold cannot be said to be fine.
    if (!e.redis) return { result: 'unknown', reason: e.redisError ?? 'redisNotRead' };
    return { result: 'not-found', ...(recent.length === 0 ? { reason: 'thisReadOnly' } : {}) };
  }
  const call = whoToCall(e, e.queue ? [e.queue] : []);
  return {
    result: 'found',
    finding: {
      confidence: strong ? 'strong' : 'possible',
      queues: [],
      evidence: [...lines.slice(0, 3), ...(call ? [call] : [])],
      fixes: [],
      weight: failed,
      rule: 'redis-network',
    },
  };
}
