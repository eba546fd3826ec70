import type { Evidence, Outcome } from '../types.js';
import { capacityFixes, deepest, goodPast, holdsSince, inScope, line, sum } from './common.js';

/** How far back a worker that left still counts as having left (the runbook's "who left, when"). */
const LEFT_WITHIN_MS = 15 * 60_000;

/** A worker identity's name (`celery@host|pid` → `celery@host`). */
const nameOf = (identity: string) => identity.split('|', 1)[0]!;

/** Workers seen in recent samples and not answering now, with when each was last seen. */
function workersThatLeft(e: Evidence): { name: string; lastSeen: number }[] {
  const here = new Set((e.workers ?? []).map((w) => w.name));
  const left = new Map<string, number>();
  for (const past of goodPast(e)) {
    if (past.at < e.now - LEFT_WITHIN_MS || !past.workers) continue;
    for (const identity of past.workers) {
      const name = nameOf(identity);
      if (!here.has(name)) left.set(name, past.at);
    }
  }
  return [...left].map(([name, lastSeen]) => ({ name, lastSeen })).sort((a, b) => b.lastSeen - a.lastSeen);
}

/**
 * Zeus 1 "worker çökmüş": work waits on a queue no worker consumes (strong), or fewer workers
 * answer than recent samples had while work waits (possible).
 */
export function noWorkers(e: Evidence): Outcome {
  if (e.workers === null) return { result: 'unknown', reason: 'workersNotAsked' };
  const scope = inScope(e).filter((q) => !q.paused && q.waiting > 0);
  const starving = scope.filter((q) => q.workers === 0);
  // Asked of one queue, the workers read now are that queue's: who left is told by its count.
  const left = e.queue === undefined ? workersThatLeft(e) : [];
  const before = Math.max(
    0,
    ...goodPast(e).map((p) =>
      e.queue === undefined ? (p.workers?.length ?? 0) : (p.queues.get(e.queue)?.workers ?? 0),
    ),
  );
  const now = e.queue === undefined ? e.workers.length : (inScope(e)[0]?.workers ?? 0);
  if (starving.length === 0 && ((left.length === 0 && now >= before) || scope.length === 0))
    return { result: 'not-found' };

  const queues = deepest(starving.length > 0 ? starving : scope);
  const first = e.queues.find((q) => q.name === queues[0])!;
  const evidence = [];
  if (starving.length > 0) {
    evidence.push(
      line('noConsumer', {
        queues: starving.length,
        queue: first.name,
        waiting: sum(starving.map((q) => q.waiting)),
      }),
    );
    const since = holdsSince(e, (p) => p.queues.get(first.name)?.workers === 0);
    if (since !== undefined) evidence.push(line('noConsumerSince', { queue: first.name, sinceAt: since }));
    else if (first.oldestWaitingSeconds !== null)
      evidence.push(line('oldestWaiting', { queue: first.name, ageSeconds: first.oldestWaitingSeconds }));
  }
  for (const gone of left.slice(0, 2))
    evidence.push(line('workerLeft', { worker: gone.name, lastSeenAt: gone.lastSeen }));
  // "1 answers now; recent samples had up to 1" read as a loss: only a drop is told as one.
  if (before > now) evidence.push(line('workersNow', { now, before }));
  else if (now > 0) evidence.push(line('workersSteady', { now }));
  return {
    result: 'found',
    finding: {
      confidence: starving.length > 0 ? 'strong' : 'possible',
      queues,
      evidence: evidence.slice(0, 4),
      fixes: capacityFixes(e, queues, true),
      weight: sum((starving.length > 0 ? starving : scope).map((q) => q.waiting)),
      rule: 'no-workers',
    },
  };
}
