import type { Evidence, Fix, Outcome, QueueNow } from '../types.js';
import { fix, goodPast, inScope, line, median, steppedCount, sum, taskRate } from './common.js';

/** Arrivals at this multiple of the usual rate are a burst. */
const BURST_FACTOR = 5;
/** A burst too small to matter is not one. */
const MIN_WAITING = 100;
/** A name with this share of what waits dominates it. */
const DOMINANT = 0.6;
/** A sample this close to now says too little about a rate. */
const MIN_SPAN_MS = 2_000;

/**
 * Arrivals per minute now: from the newest sample at least a few seconds old (growth plus
 * completions), else what waits over the age of the oldest of it (at least a second).
 */
function arrivalsNow(e: Evidence, q: QueueNow): number | null {
  const done = q.completedPerMinute ?? 0;
  const last = [...goodPast(e)].reverse().find((p) => e.now - p.at >= MIN_SPAN_MS);
  const then = last?.queues.get(q.name);
  if (last && then) {
    const minutes = (e.now - last.at) / 60_000;
    return Math.max(0, (q.waiting - then.waiting) / minutes + done);
  }
  if (q.oldestWaitingSeconds !== null)
    return q.waiting / Math.max(q.oldestWaitingSeconds / 60, 1 / 60) + done;
  return null;
}

/** The usual arrivals: between stored samples (median), else the rate the queue completes at. */
function usualArrivals(e: Evidence, q: QueueNow): number | null {
  const past = goodPast(e);
  const rates: number[] = [];
  for (let i = 1; i < past.length; i++) {
    const a = past[i - 1]!.queues.get(q.name);
    const b = past[i]!.queues.get(q.name);
    const minutes = (past[i]!.at - past[i - 1]!.at) / 60_000;
    if (a && b && minutes > 0)
      rates.push(Math.max(0, (b.waiting - a.waiting) / minutes + (b.completedPerMinute ?? 0)));
  }
  if (rates.length >= 3) return median(rates);
  return q.completedPerMinute;
}

/**
 * Zeus 4 "görev patlaması", Pushizo's `events` row: arrivals far above the queue's usual rate, and
 * the task or job names that dominate a bounded sample of what waits.
 */
export function taskBurst(e: Evidence): Outcome {
  const bursts: { q: QueueNow; now: number; usual: number; top?: { name: string; share: number } }[] = [];
  let unknown = false;
  for (const q of inScope(e)) {
    if (q.paused || q.waiting < MIN_WAITING) continue;
    const now = arrivalsNow(e, q);
    const usual = usualArrivals(e, q);
    if (now === null || usual === null) {
      unknown = true;
      continue;
    }
    if (now < BURST_FACTOR * Math.max(usual, 1)) continue;
    const sample = e.waitingNames.find((w) => w.queue === q.name);
    const first = sample?.names[0];
    bursts.push({
      q,
      now,
      usual,
      ...(first && sample.sampled > 0
        ? { top: { name: first.name, share: first.count / sample.sampled } }
        : {}),
    });
  }
  if (bursts.length === 0)
    return unknown ? { result: 'unknown', reason: 'noRates' } : { result: 'not-found' };
  bursts.sort((a, b) => b.q.waiting - a.q.waiting);
  const lead = bursts[0]!;
  const dominant = lead.top !== undefined && lead.top.share >= DOMINANT;
  const evidence = [
    line('arrivals', { queue: lead.q.name, perMinute: Math.round(lead.now), usual: Math.round(lead.usual) }),
    line('waitingNow', {
      queue: lead.q.name,
      waiting: lead.q.waiting,
      ...(lead.q.oldestWaitingSeconds !== null ? { ageSeconds: lead.q.oldestWaitingSeconds } : {}),
    }),
  ];
  if (lead.top)
    evidence.push(line('dominantName', { name: lead.top.name, percent: Math.round(lead.top.share * 100) }));
  const fixes: Fix[] = [];
  // Room for twice the usual arrivals: the burst is held back, the usual work is not.
  const usual = steppedCount(lead.usual * 2);
  const target = e.offers.limitTarget;
  if (target === 'task' && dominant)
    fixes.push(...fix('rate-limit', e.system, lead.top!.name, taskRate(lead.usual * 2, lead.q.workers)));
  if (target === 'queue') fixes.push(...fix('rate-limit', `${e.system}/${lead.q.name}`, `${usual}/1m`));
  return {
    result: 'found',
    finding: {
      confidence: dominant ? 'strong' : 'possible',
      queues: bursts.map((b) => b.q.name).slice(0, 20),
      evidence,
      fixes,
      weight: sum(bursts.map((b) => b.q.waiting)),
    },
  };
}
