import type { Evidence, Outcome } from '../types.js';
import { deepest, fix, inScope, line, sum } from './common.js';

/** A paused queue with work behind it: who paused it and when (the audit trail), and how much waits. */
export function paused(e: Evidence): Outcome {
  const held = inScope(e).filter((q) => q.paused && q.waiting + q.delayed > 0);
  if (held.length === 0) return { result: 'not-found' };
  const queues = deepest(held);
  const evidence = queues.slice(0, 2).flatMap((name) => {
    const q = held.find((h) => h.name === name)!;
    const by = e.pauses.get(name);
    return [
      line('pausedBehind', { queue: name, waiting: q.waiting + q.delayed }),
      ...(by ? [line('pausedBy', { queue: name, by: by.by, sinceAt: by.at })] : []),
    ];
  });
  return {
    result: 'found',
    finding: {
      confidence: 'strong',
      queues,
      evidence: evidence.slice(0, 4),
      fixes: queues.slice(0, 3).flatMap((q) => fix('resume', `${e.system}/${q}`)),
      weight: sum(held.map((q) => q.waiting + q.delayed)),
    },
  };
}
