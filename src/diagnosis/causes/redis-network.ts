import type { Evidence, EvidenceLine, Outcome } from '../types.js';
import { line, whoToCall } from './common.js';

/** The window failed samples are counted in (k of n), as the `redis-network` rule's `within`. */
const WINDOW_MS = 15 * 60_000;
/** A round trip above this (ms) is slow for a Redis next to its workers. */
const SLOW_RTT_MS = 100;
/** A worker connection younger than this, on a Redis up much longer, reconnected. */
const YOUNG_SECONDS = 60;

/** Connections a worker reconnects this many times in the window (new addresses, same name) are unstable. */
const RECONNECTS = 3;

/**
 * Workers whose connection came back under a new address again and again (BullMQ: CLIENT LIST's
 * `addr` in the samples and now), most reconnects first. A process crashing would do the same for
 * one worker; the network does it to all of them.
 */
function reconnects(e: Evidence, recent: Evidence['history']): { name: string; times: number }[] {
  // Each sample's addresses by worker name, then now's: a worker holds several connections at
  // once (BullMQ's blocking one beside the other), so only addresses new since the read before count.
  const reads: Map<string, Set<string>>[] = recent.map((past) => {
    const byName = new Map<string, Set<string>>();
    for (const identity of past.workers ?? []) {
      const bar = identity.indexOf('|');
      if (bar <= 0) continue;
      const name = identity.slice(0, bar);
      if (!byName.has(name)) byName.set(name, new Set());
      byName.get(name)!.add(identity.slice(bar + 1));
    }
    return byName;
  });
  const current = new Map<string, Set<string>>();
  for (const w of e.workers ?? []) {
    if (!w.address) continue;
    if (!current.has(w.name)) current.set(w.name, new Set());
    current.get(w.name)!.add(w.address);
  }
  reads.push(current);
  const times = new Map<string, number>();
  for (let i = 1; i < reads.length; i++)
    for (const [name, addresses] of reads[i]!) {
      const before = reads[i - 1]!.get(name);
      if (!before) continue;
      const fresh = [...addresses].filter((a) => !before.has(a)).length;
      times.set(name, (times.get(name) ?? 0) + fresh);
    }
  const here = new Set((e.workers ?? []).map((w) => w.name));
  return [...times]
    .map(([name, n]) => ({ name, times: n }))
    .filter((w) => here.has(w.name) && w.times >= RECONNECTS)
    .sort((a, b) => b.times - a.times || a.name.localeCompare(b.name));
}

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

  // Round trips as the monitor measured them tick after tick; this one read's own is a single
  // figure a busy machine can swing, so it only supports what something else found.
  const rtts = recent.flatMap((p) => (p.network?.rttP95Ms !== undefined ? [p.network.rttP95Ms] : []));
  const worstRtt = Math.max(0, ...rtts);
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

  const reconnecting = reconnects(e, recent);
  if (reconnecting.length > 0) {
    const lead = reconnecting[0]!;
    lines.push(
      line('reconnects', {
        workers: reconnecting.length,
        of: (e.workers ?? []).length,
        worker: lead.name,
        times: lead.times,
        minutes: WINDOW_MS / 60_000,
      }),
    );
    const ages = (e.workers ?? []).flatMap((w) =>
      w.connectionAgeSeconds === undefined ? [] : [w.connectionAgeSeconds],
    );
    if (ages.length > 0) lines.push(line('oldestConnection', { ageSeconds: Math.max(...ages) }));
    // Every worker reconnecting again and again at once is the link, not one process crashing.
    if (reconnecting.length >= 2 && reconnecting.length === (e.workers ?? []).length) strong = true;
  }

  const liveRtt = e.redis?.roundTripMs ?? 0;
  if (lines.length > 0 && worstRtt < SLOW_RTT_MS && liveRtt >= SLOW_RTT_MS)
    lines.push(line('slowRoundTrip', { ms: Math.round(liveRtt), threshold: SLOW_RTT_MS }));

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
