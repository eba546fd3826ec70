import type { Evidence, Fix, Outcome } from '../types.js';
import { fix, inScope, line, sum } from './common.js';

/** Retries past this, or this many tasks retrying, is a loop rather than a blip. */
const LOOP_RETRIES = 3;
const LOOP_TASKS = 5;

/**
 * Zeus 5: tasks retrying again and again (Celery: the retry-loop sample of the messages' headers;
 * BullMQ: failures that used several attempts, still failing every minute).
 */
export function retryLoop(e: Evidence): Outcome {
  const scopeNames = new Set(inScope(e).map((q) => q.name));
  if (e.retrying) {
    const tasks = e.retrying.tasks.filter((t) => t.count > 0);
    if (tasks.length === 0) return { result: 'not-found' };
    const top = tasks[0]!;
    const count = sum(tasks.map((t) => t.count));
    const maxRetries = Math.max(...tasks.map((t) => t.maxRetries));
    const failing = e.failures.filter((f) => scopeNames.has(f.queue) && f.groups.length > 0);
    const fixes: Fix[] = [
      ...failing.slice(0, 1).flatMap((f) => fix('dlq', `${e.system}/${f.queue}`)),
      // Celery's limits name a task: the one retrying most, slowed to a trickle while its cause is found.
      ...(e.offers.limitTarget === 'task' ? fix('rate-limit', e.system, top.name, '10/m') : []),
    ];
    return {
      result: 'found',
      finding: {
        confidence: maxRetries >= LOOP_RETRIES || count >= LOOP_TASKS ? 'strong' : 'possible',
        queues: failing.map((f) => f.queue),
        evidence: [
          line('retrying', { count, sampled: e.retrying.sampled }),
          ...tasks
            .slice(0, 2)
            .map((t) => line('retryingTask', { name: t.name, count: t.count, retries: t.maxRetries })),
        ],
        fixes,
        weight: count,
      },
    };
  }
  // BullMQ keeps a retrying job delayed with its attempts: its failures say how many it used.
  const looping = e.failures.filter((f) => scopeNames.has(f.queue) && f.maxAttempts >= LOOP_RETRIES);
  const failingNow = looping.filter(
    (f) => (e.queues.find((q) => q.name === f.queue)?.failedPerMinute ?? 0) > 0,
  );
  if (failingNow.length === 0) return { result: 'not-found' };
  const lead = failingNow[0]!;
  const q = e.queues.find((x) => x.name === lead.queue)!;
  return {
    result: 'found',
    finding: {
      confidence: 'possible',
      queues: failingNow.map((f) => f.queue),
      evidence: [
        line('attemptsUsed', { queue: lead.queue, attempts: lead.maxAttempts }),
        line('failingPerMinute', {
          queue: lead.queue,
          perMinute: Math.round(q.failedPerMinute ?? 0),
          delayed: q.delayed,
        }),
      ],
      fixes: [
        ...fix('dlq', `${e.system}/${lead.queue}`),
        ...(e.offers.limitTarget === 'queue' ? fix('rate-limit', `${e.system}/${lead.queue}`, '10/1m') : []),
      ],
      weight: q.delayed,
    },
  };
}
