import type { Evidence, FailureGroup, Fix, Outcome, QueueNow } from '../types.js';
import { fix, goodPast, inScope, line, median, steppedCount, sum, taskRate } from './common.js';

/** Failures saying timeout, 429 or 503, at least this many and this share of those grouped. */
const MIN_FAILURES = 5;
const MIN_SHARE = 0.5;
/** A run p95 this many times its usual is rising toward a timeout. */
const SLOWER = 2;

const DEPENDENCY = new Set(['timeout', 'rate-limited', 'unavailable']);
/** A task whose name this share of the dependency failures carry is the one to hold back. */
const DOMINANT = 0.6;

/** The task or job name that dominates these failures, if one does (a name, never a payload). */
function dominantName(groups: readonly FailureGroup[], count: number): string | undefined {
  const byName = new Map<string, number>();
  for (const g of groups)
    if (g.topName) byName.set(g.topName.name, (byName.get(g.topName.name) ?? 0) + g.topName.count);
  const [top] = [...byName].sort((a, b) => b[1] - a[1]);
  return top && top[1] >= DOMINANT * count ? top[0] : undefined;
}

/**
 * The fixes that hold back what reaches the dependency: a queue's own limits (BullMQ), or the rate
 * of the task that dominates the failures (Celery, whose limits name a task).
 */
function holdBack(e: Evidence, q: QueueNow, task: string | undefined): Fix[] {
  if (e.offers.limitTarget === 'queue')
    return [
      // Half the jobs running now, and what it completes a minute now, each in steps so a click a
      // few seconds later still finds the same fix.
      ...fix('concurrency', `${e.system}/${q.name}`, steppedCount(Math.max(q.active, 2) / 2)),
      ...fix('rate-limit', `${e.system}/${q.name}`, `${steppedCount(q.completedPerMinute ?? 60)}/1m`),
    ];
  if (e.offers.limitTarget !== 'task' || task === undefined) return [];
  // Half of what the queue tries a minute now (completed and failed: each failure called the
  // dependency too), so the dependency gets room to recover while work still moves. Unknown rates
  // offer nothing rather than a guess.
  if (q.completedPerMinute === null && q.failedPerMinute === null) return [];
  const tries = (q.completedPerMinute ?? 0) + (q.failedPerMinute ?? 0);
  return fix('rate-limit', e.system, task, taskRate(tries / 2, q.workers));
}

/**
 * Pushizo `dispatch-*` ("sağlayıcı yavaş / rate limit") and `webhooks` ("endpoint yavaş"): the
 * newest failures say timeout, 429 or 503 (the normalized error groups), the run time's p95 rises
 * toward a timeout, `delayed` rises as retries back off.
 */
export function slowDependency(e: Evidence): Outcome {
  const scope = new Map(inScope(e).map((q) => [q.name, q]));
  const found: {
    queue: string;
    count: number;
    of: number;
    error: string;
    strong: boolean;
    /** The task or job name most of its dependency failures carry, when one dominates them. */
    task?: string;
    runNow?: number;
    runBefore?: number;
  }[] = [];
  for (const f of e.failures) {
    const q = scope.get(f.queue);
    if (!q) continue;
    const dependency = f.groups.filter((g) => DEPENDENCY.has(g.kind));
    const count = sum(dependency.map((g) => g.count));
    if (count === 0) continue;
    const strong = count >= MIN_FAILURES && count / Math.max(f.groupedOver, 1) >= MIN_SHARE;
    const task = dominantName(dependency, count);
    found.push({
      queue: f.queue,
      count,
      of: f.groupedOver,
      error: dependency[0]!.error,
      strong,
      ...(task !== undefined ? { task } : {}),
    });
  }
  for (const q of scope.values()) {
    if (q.runP95Seconds === null || found.some((f) => f.queue === q.name)) continue;
    const before = goodPast(e).flatMap((p) => {
      const run = p.queues.get(q.name)?.runP95Seconds;
      return run === undefined ? [] : [run];
    });
    if (before.length >= 3 && q.runP95Seconds >= SLOWER * median(before) && q.runP95Seconds >= 1)
      found.push({
        queue: q.name,
        count: 0,
        of: 0,
        error: '',
        strong: false,
        runNow: q.runP95Seconds,
        runBefore: median(before),
      });
  }
  if (found.length === 0) return { result: 'not-found' };
  found.sort((a, b) => Number(b.strong) - Number(a.strong) || b.count - a.count);
  const lead = found[0]!;
  const q = scope.get(lead.queue)!;
  const evidence = [];
  if (lead.count > 0)
    evidence.push(
      line('dependencyErrors', { queue: lead.queue, count: lead.count, of: lead.of, error: lead.error }),
    );
  // A run time under a second says nothing about a timeout.
  if (q.runP95Seconds !== null && q.runP95Seconds >= 1)
    evidence.push(line('runP95', { queue: lead.queue, seconds: q.runP95Seconds }));
  if (lead.runBefore !== undefined) evidence.push(line('runP95Before', { seconds: lead.runBefore }));
  if (q.delayed > 0 && !q.failedPerMinute)
    evidence.push(line('delayedNow', { queue: lead.queue, delayed: q.delayed }));
  if (q.failedPerMinute)
    evidence.push(
      line('failingPerMinute', {
        queue: lead.queue,
        perMinute: Math.round(q.failedPerMinute),
        delayed: q.delayed,
      }),
    );
  const fixes = holdBack(e, q, lead.task);
  return {
    result: 'found',
    finding: {
      confidence: lead.strong ? 'strong' : 'possible',
      queues: found.map((f) => f.queue).slice(0, 20),
      evidence: evidence.slice(0, 4),
      fixes,
      weight: sum(found.map((f) => f.count)),
    },
  };
}
