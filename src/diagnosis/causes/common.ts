import type { Evidence, EvidenceLine, Fix, Past, QueueNow, RunningNow } from '../types.js';

/** The queues a diagnosis speaks of: the one asked about, or every queue of the system. */
export function inScope(e: Evidence): QueueNow[] {
  return e.queue === undefined ? e.queues : e.queues.filter((q) => q.name === e.queue);
}

export const line = (code: string, params: EvidenceLine['params'] = {}): EvidenceLine => ({ code, params });

/** A fix from its words; none when a word would not survive being typed (whitespace, empty). */
export function fix(...words: (string | number)[]): Fix[] {
  const text = words.map(String);
  return text.every((w) => w.length > 0 && !/\s/.test(w)) ? [{ words: text }] : [];
}

/** The step of 1, 2, 5, 10, 20, 50… at or below `n` (n ≥ 1). */
function stepDown(n: number): number {
  const power = 10 ** Math.floor(Math.log10(n));
  const lead = n / power;
  return (lead >= 5 ? 5 : lead >= 2 ? 2 : 1) * power;
}

/**
 * A count a fix button carries (a rate a minute, a concurrency), at least 1 and rounded down to a
 * step of 1, 2, 5, 10, 20, 50…: the click reads the evidence again a few seconds later and must
 * come to the same command, which live rates would not (see `taskRate`).
 */
export function steppedCount(n: number): number {
  return n >= 1 ? stepDown(n) : 1;
}

/**
 * A Celery task's rate, as `rate-limit <system> <task> <rate>` takes it, that lets about
 * `perMinute` of it through in all: Celery keeps a task's rate per worker (each its own token
 * bucket, not one for the system), so the whole is shared among the workers consuming its queue
 * (one when not known). Whole tasks a minute, at least 1/m (0 would be no limit to Celery; stopping
 * it is `pause`), rounded down to a step of 1, 2, 5, 10, 20, 50…: a fix button's command must be
 * the same when its click reads the rates again a few seconds later, and a rate of 8 or 9 is no
 * better advice than 5.
 */
export function taskRate(perMinute: number, consumers: number | null): string {
  const share = perMinute / Math.max(1, consumers ?? 1);
  return `${steppedCount(share)}/m`;
}

/** Samples that read this system, oldest first. */
export const goodPast = (e: Evidence): Past[] => e.history.filter((p) => p.ok);

/** The newest good sample, if any. */
export const lastGood = (e: Evidence): Past | undefined => goodPast(e).at(-1);

/**
 * Since when `holds` has been true of the newest samples without a break (the run's first
 * sample), or undefined when it does not hold in the newest one.
 */
export function holdsSince(e: Evidence, holds: (past: Past) => boolean): number | undefined {
  const past = goodPast(e);
  let since: number | undefined;
  for (let i = past.length - 1; i >= 0; i--) {
    if (!holds(past[i]!)) break;
    since = past[i]!.at;
  }
  return since;
}

/** BullMQ's lock duration: a lock gone from a job started less long ago may just have finished. */
const LOCK_MS = 30_000;

/** Work running longer than `diagnosis.stuckAfterMinutes`. */
export function longRunning(e: Evidence): RunningNow[] {
  if (!e.running) return [];
  const cutoff = e.now - e.stuckAfterMinutes * 60_000;
  return e.running
    .filter((w) => w.startedAt !== undefined && w.startedAt <= cutoff)
    .sort((a, b) => a.startedAt! - b.startedAt!);
}

/**
 * BullMQ: active jobs whose lock expired a lock's length after they started: no live worker holds
 * them (stalled). One read between a job finishing and its lock going is not one of them.
 */
export function stalled(e: Evidence): RunningNow[] {
  if (!e.running) return [];
  return e.running.filter(
    (w) => w.lockExpired === true && w.startedAt !== undefined && w.startedAt <= e.now - LOCK_MS,
  );
}

/**
 * The worker groups a `restart`/`scale` fix may name for these queues: the system's one group, or
 * the groups whose `workers[].queues` name one of them (a group naming no queues is not guessed at).
 */
export function groupsFor(e: Evidence, queues: readonly string[]): Evidence['groups'] {
  if (e.groups.length === 1) return e.groups;
  return e.groups.filter((g) => g.queues?.some((q) => queues.includes(q)));
}

/** `restart` and `scale current+1` (within the group's max) of the groups serving these queues. */
export function capacityFixes(e: Evidence, queues: readonly string[], restart: boolean): Fix[] {
  const fixes: Fix[] = [];
  for (const group of groupsFor(e, queues).slice(0, 2)) {
    const target = `${e.system}/${group.name}`;
    if (restart) fixes.push(...fix('restart', target));
    if (group.current !== null && group.current + 1 <= group.max)
      fixes.push(...fix('scale', target, Math.max(group.current + 1, group.min)));
  }
  return fixes;
}

/** Who to call for a cause with nothing to click: `escalation.escalateTo`, then the queues' owners. */
export function whoToCall(e: Evidence, queues: readonly string[]): EvidenceLine | undefined {
  const owners = [...new Set(queues.flatMap((q) => (e.owners.has(q) ? [e.owners.get(q)!] : [])))];
  const who = [...e.escalateTo, ...owners];
  return who.length > 0 ? line('callWho', { who: who.join(' ') }) : undefined;
}

/** The median of some numbers (0 for none). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

/** The queues a finding names, deepest first, at most `max`. */
export function deepest(queues: readonly QueueNow[], max = 20): string[] {
  return [...queues]
    .sort((a, b) => b.waiting - a.waiting || a.name.localeCompare(b.name))
    .slice(0, max)
    .map((q) => q.name);
}
