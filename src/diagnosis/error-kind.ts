import { groupErrors, normalizeError } from '../backends/error-groups.js';
import type { FailureGroup } from './types.js';

/** What an error says about the dependency a handler calls: timed out, rate limited, unavailable. */
export function errorKind(error: string): FailureGroup['kind'] {
  if (/stalled more than allowable limit|job stalled/i.test(error)) return 'stalled';
  if (/\b429\b|too many requests|rate.?limit/i.test(error)) return 'rate-limited';
  if (/time[ds]?.?out|timeout|ETIMEDOUT|deadline exceeded/i.test(error)) return 'timeout';
  if (/\b50[234]\b|unavailable|bad gateway|ECONNREFUSED|ECONNRESET/i.test(error)) return 'unavailable';
  return 'other';
}

/** One failure as the groups read it: its message, and its task or job name when it has one. */
export interface FailureSeen {
  error: string | null | undefined;
  name?: string;
}

/** A name longer than this is no task name a command could carry; it is not kept. */
const NAME_MAX = 200;

/** The name most of each error group's failures carry (a tie: the name met first, the newest). */
function topNames(failures: readonly FailureSeen[]): Map<string, { name: string; count: number }> {
  const byGroup = new Map<string, Map<string, number>>();
  for (const f of failures) {
    if (!f.name || f.name.length > NAME_MAX) continue;
    const group = normalizeError(f.error);
    const names = byGroup.get(group) ?? new Map<string, number>();
    names.set(f.name, (names.get(f.name) ?? 0) + 1);
    byGroup.set(group, names);
  }
  const top = new Map<string, { name: string; count: number }>();
  for (const [group, names] of byGroup) {
    let best: { name: string; count: number } | undefined;
    for (const [name, count] of names) if (!best || count > best.count) best = { name, count };
    top.set(group, best!);
  }
  return top;
}

/**
 * Failures' messages in the error groups `dlq` shows (`groupErrors`, the one normalizer), most
 * frequent first, each with what its real example says about the dependency and, for failures
 * given with their names, the name that dominates it (what a task's `rate-limit` would name).
 */
export function groupFailures(
  failures: Iterable<string | null | undefined | FailureSeen>,
  top = 5,
): FailureGroup[] {
  const seen = [...failures].map(
    (f): FailureSeen => (f !== null && typeof f === 'object' ? f : { error: f }),
  );
  const names = topNames(seen);
  return groupErrors(
    seen.map((f) => f.error),
    top,
  ).map((g) => {
    const topName = names.get(g.error);
    return { error: g.error, count: g.count, kind: errorKind(g.example), ...(topName ? { topName } : {}) };
  });
}
