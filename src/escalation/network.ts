import type { NetworkReading } from '../backends/redis-health.js';
import type { NetworkSample, QueueSample, Sample, SystemSample } from './samples.js';

/**
 * The unstable network to Redis (Zeus runbook cause 6, issue 36 §2), from what one tick reads:
 * pure functions of the reading, this sample and the stored history. Each signal is something a
 * flapping link does and a healthy system does not:
 * - `rtt`: the bot's own PINGs slow (median at or above {@link SLOW_RTT_MS});
 * - `rejected`: Redis refused connections since the previous sample;
 * - `reconnects`: connections of other clients (workers, apps; not queue-ops' own, which it
 *   names, so neither the bot nor its command-line runs) opened since the previous sample that
 *   replace ones that left, rather than add to them: connections that stay young;
 * - `returned`: workers that dropped out of the previous sample and are back under the same name;
 * - `silent`: queues with consumers and waiting work where nothing was done for
 *   {@link SILENT_MINUTES} minutes and nothing runs: consumers stalled after a reconnect.
 */
export type NetworkSignal = 'rtt' | 'rejected' | 'reconnects' | 'returned' | 'silent';

/** A median PING at or above this is a slow link (a loaded Redis answers in well under 10 ms). */
export const SLOW_RTT_MS = 250;
/** How long consumers may sit on waiting work doing nothing before they count as silent. */
export const SILENT_MINUTES = 5;
/** Silent queues named in a sample (the count is whole). */
const SILENT_NAMED = 10;

/** Connections queue-ops opens are named `queue-ops…`: the bot's and its command-line runs'. */
const isOwn = (name: string) => name.startsWith('queue-ops');

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round = (n: number) => Math.round(n * 100) / 100;

/** The previous good sample of `system` in `history`, and the one good sample before it. */
function lastTwo(history: readonly Sample[], system: string) {
  const found: { system: SystemSample; at: number }[] = [];
  for (let i = history.length - 1; i >= 0 && found.length < 2; i--) {
    const s = history[i]!.systems.find((x) => x.name === system);
    if (s?.ok) found.push({ system: s, at: history[i]!.at });
  }
  return { previous: found[0], before: found[1] };
}

const workerName = (identity: string) => identity.split('|')[0]!;

/** Workers in `now` that were not in `previous` but were in `before`, by name (a pid is kept). */
function returnedWorkers(
  now: readonly string[] | null,
  previous: readonly string[] | null | undefined,
  before: readonly string[] | null | undefined,
): number {
  if (!now || !previous || !before) return 0;
  const was = new Set(previous.map(workerName));
  const earlier = new Set(before.map(workerName));
  return now.filter((w) => !was.has(workerName(w)) && earlier.has(workerName(w))).length;
}

/** The newest good sample of `system` taken at least {@link SILENT_MINUTES} before `now`. */
function sampleMinutesAgo(history: readonly Sample[], system: string, now: number) {
  const cutoff = now - SILENT_MINUTES * 60_000;
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]!.at > cutoff) continue;
    const s = history[i]!.systems.find((x) => x.name === system);
    if (s?.ok) return s;
  }
  return undefined;
}

/** Queues where consumers sit on waiting work, nothing done in the span and nothing running. */
function silentQueues(sample: SystemSample, history: readonly Sample[], now: number): string[] {
  const idle = (q: QueueSample) =>
    !q.paused && (q.workers ?? 0) > 0 && q.waiting > 0 && q.active === 0 && q.throughput === 0;
  const candidates = sample.queues.filter(idle);
  if (candidates.length === 0) return [];
  const then = sampleMinutesAgo(history, sample.name, now);
  if (!then) return [];
  const before = new Map(then.queues.map((q) => [q.name, q]));
  return candidates
    .filter((q) => {
      const old = before.get(q.name);
      return old !== undefined && old.waiting > 0 && (old.workers ?? 0) > 0;
    })
    .map((q) => q.name);
}

/**
 * The network part of a system's sample: the reading reduced to numbers and, against the previous
 * sample of the same system, the deltas and the signals that held this tick.
 */
export function networkSample(
  reading: NetworkReading,
  sample: SystemSample,
  history: readonly Sample[],
  now: number,
): NetworkSample {
  const sorted = [...reading.rttMs].sort((a, b) => a - b);
  const { previous, before } = lastTwo(history, sample.name);
  const prior = previous?.system.network;
  const others = reading.clients?.filter((c) => !isOwn(c.name));
  const out: NetworkSample = {
    rttP50Ms: round(percentile(sorted, 50)),
    rttP95Ms: round(percentile(sorted, 95)),
    rttMaxMs: round(sorted.at(-1) ?? 0),
    pings: sorted.length,
    received: reading.connectionsReceived,
    rejected: reading.rejectedConnections,
    clients: reading.connectedClients,
    signals: [],
  };
  if (others) out.others = others.length;
  // Counters that went backwards: Redis restarted in between; no delta then.
  if (prior && reading.connectionsReceived >= prior.received) {
    out.receivedDelta = reading.connectionsReceived - prior.received;
    out.rejectedDelta = Math.max(0, reading.rejectedConnections - prior.rejected);
  }
  if (reading.clients && reading.clients.length > 0)
    out.lastClientId = Math.max(...reading.clients.map((c) => c.id));
  if (others) {
    // Young: opened since the previous sample (a higher id than any it saw); without the previous
    // sample's highest id (older samples), by age, a second's resolution.
    const since = previous ? Math.floor((now - previous.at) / 1000) : 0;
    const young = others.filter((c) =>
      prior?.lastClientId !== undefined ? c.id > prior.lastClientId : c.ageSeconds < since,
    );
    out.oldestOtherSeconds = others.reduce((max, c) => Math.max(max, c.ageSeconds), 0);
    if (previous && prior?.others !== undefined) {
      out.young = young.length;
      out.reconnects = Math.max(0, young.length - Math.max(0, others.length - prior.others));
    }
  }
  const returned = returnedWorkers(sample.workers, previous?.system.workers, before?.system.workers);
  if (returned > 0) out.returned = returned;
  const silent = silentQueues(sample, history, now);
  if (silent.length > 0) {
    out.silent = silent.length;
    out.silentQueues = silent.slice(0, SILENT_NAMED);
  }
  const signals: NetworkSignal[] = [];
  if (sorted.length > 0 && out.rttP50Ms >= SLOW_RTT_MS) signals.push('rtt');
  if ((out.rejectedDelta ?? 0) > 0) signals.push('rejected');
  if ((out.reconnects ?? 0) > 0) signals.push('reconnects');
  if (returned > 0) signals.push('returned');
  if (silent.length > 0) signals.push('silent');
  out.signals = signals;
  return out;
}

/** A sample of a system counts as unstable when it could not be read, or a signal held. */
export function isUnstable(system: SystemSample): boolean {
  return !system.ok || (system.network?.signals.length ?? 0) > 0;
}
