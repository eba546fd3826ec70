import type { Evidence, Fix, Outcome } from '../types.js';
import { fix, inScope, line, longRunning, stalled, sum } from './common.js';

/** Ids one fix names at most (a `revoke` of five tasks, or a button per BullMQ job). */
const MAX_IDS = 5;

/**
 * Zeus 2, Pushizo §3 stalled: work running longer than `diagnosis.stuckAfterMinutes`, or BullMQ
 * jobs whose lock expired, holding slots while work waits behind them (strong); long-running work
 * with nothing waiting is only possible. BullMQ jobs failed by `maxStalledCount` count too.
 */
export function stuckTasks(e: Evidence): Outcome {
  if (e.running === null) return { result: 'unknown', reason: 'runningNotRead' };
  const scope = inScope(e);
  const inScopeNames = new Set(scope.map((q) => q.name));
  const inQueue = (w: { queue?: string }) => w.queue === undefined || inScopeNames.has(w.queue);
  const long = longRunning(e).filter(inQueue);
  const lockless = stalled(e).filter((w) => inQueue(w) && !long.includes(w));
  const stuck = [...long, ...lockless];
  const stalledFailures = e.failures
    .filter((f) => inScopeNames.has(f.queue))
    .flatMap((f) =>
      f.groups.filter((g) => g.kind === 'stalled').map((g) => ({ queue: f.queue, count: g.count })),
    );
  if (stuck.length === 0 && stalledFailures.length === 0) return { result: 'not-found' };

  const held = new Set(stuck.flatMap((w) => (w.queue ? [w.queue] : [])));
  // A Celery delivery may name no queue: then what waits anywhere waits behind it.
  const behind = scope.filter((q) => q.waiting > 0 && (held.has(q.name) || stuck.some((w) => !w.queue)));
  const queues = [
    ...new Set([...held, ...behind.map((q) => q.name), ...stalledFailures.map((f) => f.queue)]),
  ];
  const evidence = [];
  if (long.length > 0) {
    const oldest = long[0]!;
    evidence.push(
      line('stuckRunning', {
        count: long.length,
        name: oldest.name,
        minutes: e.stuckAfterMinutes,
        ...(oldest.startedAt !== undefined ? { sinceAt: oldest.startedAt } : {}),
      }),
    );
    const worker = oldest.worker;
    const slots = e.workers?.find((w) => w.name === worker)?.concurrency;
    if (worker !== undefined && slots !== undefined)
      evidence.push(
        line('slotsHeld', { worker, held: long.filter((w) => w.worker === worker).length, slots }),
      );
  }
  if (lockless.length > 0) evidence.push(line('lockExpired', { count: lockless.length }));
  if (behind.length > 0)
    evidence.push(
      line('waitingBehind', { waiting: sum(behind.map((q) => q.waiting)), queue: behind[0]!.name }),
    );
  for (const f of stalledFailures.slice(0, 1)) evidence.push(line('stalledFailed', f));
  return {
    result: 'found',
    finding: {
      confidence: behind.length > 0 || stalledFailures.length > 0 ? 'strong' : 'possible',
      queues,
      evidence: evidence.slice(0, 4),
      fixes: stuckFixes(e, stuck),
      weight: sum(behind.map((q) => q.waiting)) + stuck.length,
    },
  };
}

/** One `revoke … --terminate` of the ids (Celery), or `fail` of each job (BullMQ). */
function stuckFixes(e: Evidence, stuck: ReturnType<typeof longRunning>): Fix[] {
  const ids = stuck.slice(0, MAX_IDS);
  if (ids.length === 0 || e.offers.stopStuck === null) return [];
  if (e.offers.stopStuck === 'revoke') return fix('revoke', e.system, ...ids.map((w) => w.id), '--terminate');
  return ids.slice(0, 3).flatMap((w) => (w.queue ? fix('fail', `${e.system}/${w.queue}`, w.id) : []));
}
