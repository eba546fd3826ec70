import type { Evidence, Outcome, QueueNow } from '../types.js';
import { capacityFixes, deepest, goodPast, inScope, line, longRunning, stalled, sum } from './common.js';

/** Minutes of work waiting, at the rate the queue completes, above which it is short of capacity. */
const DRAIN_MINUTES = 10;
/** Samples in a row with `waiting` rising that make the shortage strong. */
const RISING_SAMPLES = 3;

/** Whether every slot of the workers consuming `queue` is busy (Celery pool sizes), when known. */
function slotsFull(e: Evidence, queue: string): boolean | undefined {
  const workers = (e.workers ?? []).filter((w) => !w.queues || w.queues.includes(queue));
  if (workers.length === 0 || workers.some((w) => w.concurrency === undefined || w.active === undefined))
    return undefined;
  return workers.every((w) => (w.active ?? 0) >= (w.concurrency ?? 0) || (w.reserved ?? 0) > 0);
}

/** How many of the newest samples in a row had `waiting` rising, up to now. */
function risingFor(e: Evidence, q: QueueNow): number {
  const series = [...goodPast(e).flatMap((p) => p.queues.get(q.name)?.waiting ?? []), q.waiting];
  let n = 0;
  for (let i = series.length - 1; i > 0 && series[i]! > series[i - 1]!; i--) n++;
  return n;
}

/**
 * Zeus 1 "yetersiz sayıda worker", Pushizo's `audience` and `dispatch-*` rows: workers present and
 * completing, every slot busy, arrivals above completions so what waits keeps rising and the
 * minutes to drain grow. Work held by stuck tasks is `stuck-tasks`' to explain, not this.
 */
export function noCapacity(e: Evidence): Outcome {
  if (e.workers === null) return { result: 'unknown', reason: 'workersNotAsked' };
  const stuckQueues = new Set([...longRunning(e), ...stalled(e)].flatMap((w) => (w.queue ? [w.queue] : [])));
  const short: { q: QueueNow; minutes: number; rising: number; full: boolean | undefined }[] = [];
  for (const q of inScope(e)) {
    if (q.paused || q.waiting === 0 || !q.workers || q.active === 0 || stuckQueues.has(q.name)) continue;
    const rate = q.completedPerMinute;
    if (rate === null || rate <= 0) continue;
    const minutes = q.waiting / rate;
    const rising = risingFor(e, q);
    if (minutes < DRAIN_MINUTES && rising < RISING_SAMPLES) continue;
    short.push({ q, minutes, rising, full: slotsFull(e, q.name) });
  }
  if (short.length === 0) return { result: 'not-found' };
  short.sort((a, b) => b.q.waiting - a.q.waiting);
  const lead = short[0]!;
  const strong = lead.rising >= RISING_SAMPLES && lead.full !== false && lead.minutes >= DRAIN_MINUTES;
  const queues = deepest(short.map((s) => s.q));
  const evidence = [
    line('drainMinutes', {
      queue: lead.q.name,
      waiting: lead.q.waiting,
      perMinute: Math.round(lead.q.completedPerMinute ?? 0),
      minutes: Math.round(lead.minutes),
    }),
  ];
  if (lead.rising > 0) evidence.push(line('waitingRising', { queue: lead.q.name, samples: lead.rising }));
  if (lead.full) evidence.push(line('slotsFull', { workers: lead.q.workers ?? 0 }));
  return {
    result: 'found',
    finding: {
      confidence: strong ? 'strong' : 'possible',
      queues,
      evidence,
      fixes: capacityFixes(e, queues, false),
      weight: sum(short.map((s) => s.q.waiting)),
      rule: 'no-capacity',
    },
  };
}
