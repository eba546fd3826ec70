import type { BackendRegistry } from '../backends/registry.js';
import type { Config } from '../config/schema.js';
import { takeSample } from '../escalation/sampler.js';
import { encodeSample, type QueueSample, type Sample } from '../escalation/samples.js';
import type { Store } from '../store/store.js';

export interface BackfillOptions {
  /** How far back the history goes. */
  hours: number;
  /** One sample per this many milliseconds. */
  stepMs: number;
  /** When the backlog started to grow: before it the queues sat at a small fraction of today. */
  rampMinutes: number;
  now: number;
}

export const DEMO_HISTORY: Omit<BackfillOptions, 'now'> = { hours: 3, stepMs: 60_000, rampMinutes: 90 };

/** How full a queue was at `at`, as a fraction of now: calm, then a steady climb to today. */
function fill(at: number, options: BackfillOptions): number {
  const rampStart = options.now - options.rampMinutes * 60_000;
  if (at <= rampStart) return 0.05;
  const through = (at - rampStart) / (options.now - rampStart);
  // A little unevenness, the same on every run, so the sparkline is not a ruler.
  return Math.min(1, 0.05 + 0.95 * through + 0.02 * Math.sin(at / 420_000));
}

const oneDecimal = (n: number) => Math.round(n * 10) / 10;

/**
 * The rates at `at`, from the back-filled depths rather than copied from today (which drew
 * today's 152 failed/min flat across three hours): failed per minute is how much the failed set
 * grew since the sample before; done per minute follows how busy the queue was, today's at the
 * peak of the backlog and less while it was calm, with the same small unevenness as the depths.
 */
function pastRates(q: QueueSample, at: number, options: BackfillOptions) {
  const failedThen = (t: number) => Math.round(q.failed * fill(t, options));
  const grew = Math.max(0, failedThen(at) - failedThen(at - options.stepMs));
  const busy = 0.4 + 0.6 * fill(at, options) + 0.08 * Math.sin(at / 300_000);
  return {
    ...(q.failedPerMinute !== undefined
      ? { failedPerMinute: oneDecimal(grew / (options.stepMs / 60_000)) }
      : {}),
    ...(q.throughput !== undefined ? { throughput: oneDecimal(Math.max(0, q.throughput * busy)) } : {}),
  };
}

/** One queue as it was at `at`: its depths a fraction of today's, its rates derived from them. */
export function pastQueue(q: QueueSample, at: number, options: BackfillOptions): QueueSample {
  const f = fill(at, options);
  const ago = (options.now - at) / 1000;
  const oldest = q.oldestWaitingSeconds === null ? null : q.oldestWaitingSeconds - ago;
  const { failedNew: _new, head, throughput: _done, failedPerMinute: _failing, ...rest } = q;
  const backlogStart = options.now - options.rampMinutes * 60_000;
  return {
    ...rest,
    waiting: Math.round(q.waiting * f),
    delayed: Math.round(q.delayed * f),
    failed: Math.round(q.failed * f),
    ...pastRates(q, at, options),
    oldestWaitingSeconds: oldest !== null && oldest > 0 ? Math.round(oldest) : null,
    // A Celery head message has sat there since the backlog began (Celery messages carry no time).
    ...(head && at >= backlogStart ? { head: { id: head.id, firstSeen: backlogStart } } : {}),
  };
}

/**
 * Writes a few hours of monitor samples ending now, shaped from what the queues hold now: calm,
 * then a backlog climbing to today's numbers. So `trend`, `alerts` (rules with `for:` windows) and
 * `timeline` have something to show on the demo's first command, instead of after a monitor has
 * run for a while. Returns how many samples were written.
 */
export async function backfillSamples(
  deps: { config: Pick<Config, 'systems'>; backends: BackendRegistry; store: Pick<Store, 'escalation'> },
  options: BackfillOptions,
): Promise<number> {
  const current = await takeSample(deps, [], options.now);
  let written = 0;
  for (let at = options.now - options.hours * 3_600_000; at < options.now; at += options.stepMs) {
    const sample: Sample = {
      at,
      systems: current.systems.map((system) =>
        system.ok ? { ...system, queues: system.queues.map((q) => pastQueue(q, at, options)) } : system,
      ),
    };
    await deps.store.escalation.appendSample(new Date(at).toISOString(), encodeSample(sample));
    written++;
  }
  return written;
}
