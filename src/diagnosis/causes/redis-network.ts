import { SLOW_RTT_MS } from '../../escalation/network.js';
import type { NetworkSample } from '../../escalation/samples.js';
import type { Evidence, EvidenceLine, Outcome } from '../types.js';
import { line, sum, whoToCall } from './common.js';

/** The window failed samples are counted in (k of n), as the `redis-network` rule's `within`. */
const WINDOW_MS = 15 * 60_000;
/** A worker connection younger than this, on a Redis up much longer, reconnected. */
const YOUNG_SECONDS = 60;
/** Samples unreadable or showing the link drop (k of the window's n) that make the cause strong. */
const UNSTABLE_SAMPLES = 3;
/**
 * The monitor's signals that only a link dropping connections gives: connections refused, ones
 * replaced as they leave, workers gone from `ping` and back. A slow PING or a silent consumer
 * alone has other causes (a loaded Redis, stuck tasks), so those two support, never decide.
 */
const LINK_SIGNALS = new Set(['rejected', 'reconnects', 'returned']);

/** The newest of `items` that has `pick`'s answer (ES2022 has no `findLast`). */
function newestWith<T, R>(items: readonly T[], pick: (item: T) => R | undefined): R | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const found = pick(items[i]!);
    if (found !== undefined) return found;
  }
  return undefined;
}

const held = (n: NetworkSample | undefined, signals: ReadonlySet<string>) =>
  n?.signals.some((s) => signals.has(s)) ?? false;

/** The monitor's network readings of the window as evidence lines, and how many samples showed the link drop. */
function sampledLink(
  recent: Evidence['history'],
  minutes: number,
): { lines: EvidenceLine[]; dropped: number } {
  const nets = recent.flatMap((p) => (p.network ? [p.network] : []));
  const lines: EvidenceLine[] = [];
  const dropped = nets.filter((n) => held(n, LINK_SIGNALS)).length;
  const reconnects = sum(nets.map((n) => n.reconnects ?? 0));
  if (reconnects > 0) {
    const newest = newestWith(nets, (n) =>
      n.young !== undefined && n.others !== undefined ? { young: n.young, others: n.others } : undefined,
    );
    lines.push(
      line('reconnects', {
        count: reconnects,
        samples: nets.filter((n) => n.signals.includes('reconnects')).length,
        of: nets.length,
        minutes,
        ...(newest && newest.young > 0 ? newest : {}),
      }),
    );
  }
  const returned = sum(nets.map((n) => n.returned ?? 0));
  if (returned > 0) lines.push(line('workersReturned', { count: returned, minutes }));
  const rejected = sum(nets.map((n) => n.rejectedDelta ?? 0));
  if (rejected > 0) lines.push(line('connectionsRejected', { count: rejected, minutes }));
  const oldest = newestWith(nets, (n) => n.oldestOtherSeconds);
  if (lines.length > 0 && oldest !== undefined) lines.push(line('oldestConnection', { ageSeconds: oldest }));
  const slow = nets.filter((n) => n.signals.includes('rtt'));
  if (slow.length > 0)
    lines.push(
      line('slowRoundTrip', {
        ms: Math.round(Math.max(...slow.map((n) => n.rttP95Ms))),
        samples: slow.length,
        of: nets.length,
        threshold: SLOW_RTT_MS,
      }),
    );
  const silent = newestWith(nets, (n) => (n.signals.includes('silent') ? n : undefined));
  if (silent?.silent)
    lines.push(
      line('silentConsumers', {
        count: silent.silent,
        queues: (silent.silentQueues ?? []).slice(0, 3).join(', '),
      }),
    );
  return { lines, dropped };
}

/**
 * Zeus 6 "Redis'e bağlantı kararsız": reads of this Redis that failed between ones that worked,
 * and the monitor's network readings (`SystemSample.network`): worker connections replaced as
 * they leave, workers back in `ping` under the same name, refused connections, slow PINGs, consumers
 * silent after a reconnect. Strong when the link dropped in several samples of the window (k of n,
 * as the `redis-network` rule counts). Nothing to click: the evidence names who to call.
 */
export function redisNetwork(e: Evidence): Outcome {
  const recent = e.history.filter((p) => p.at >= e.now - WINDOW_MS);
  const minutes = WINDOW_MS / 60_000;
  const failed = recent.filter((p) => !p.ok).length;
  // Failures with a success after the first of them: a flapping link, not a Redis that is down.
  const firstFailed = recent.findIndex((p) => !p.ok);
  const flapping = firstFailed >= 0 && recent.slice(firstFailed).some((p) => p.ok);
  // A Redis down the whole window is `redis-unreachable`'s, not a link that comes and goes.
  const linkFailed = flapping || e.redis !== null;
  const lines: EvidenceLine[] = [];
  if (failed > 0 && linkFailed) lines.push(line('samplesFailed', { failed, of: recent.length, minutes }));
  if (!e.redis && recent.some((p) => p.ok)) lines.push(line('unreachableNow', {}));

  const sampled = sampledLink(recent, minutes);
  lines.push(...sampled.lines);
  const unstable = (linkFailed ? failed : 0) + sampled.dropped;
  const strong = unstable >= UNSTABLE_SAMPLES;

  // This read's own view, for a system the monitor does not sample: every worker connection young
  // on a Redis up far longer. Alone it only suggests.
  const uptime = e.redis?.uptimeSeconds ?? null;
  const workers = e.workers ?? [];
  const young = workers.filter(
    (w) => w.connectionAgeSeconds !== undefined && w.connectionAgeSeconds < YOUNG_SECONDS,
  );
  if (uptime !== null && uptime > 10 * YOUNG_SECONDS && young.length >= 2 && young.length === workers.length)
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
      weight: unstable,
      rule: 'redis-network',
    },
  };
}
