import { groupErrors } from '../backends/error-groups.js';
import type { FailureGroup } from './types.js';

/** What an error says about the dependency a handler calls: timed out, rate limited, unavailable. */
export function errorKind(error: string): FailureGroup['kind'] {
  if (/stalled more than allowable limit|job stalled/i.test(error)) return 'stalled';
  if (/\b429\b|too many requests|rate.?limit/i.test(error)) return 'rate-limited';
  if (/time[ds]?.?out|timeout|ETIMEDOUT|deadline exceeded/i.test(error)) return 'timeout';
  if (/\b50[234]\b|unavailable|bad gateway|ECONNREFUSED|ECONNRESET/i.test(error)) return 'unavailable';
  return 'other';
}

/**
 * Failures' messages in the error groups `dlq` shows (`groupErrors`, the one normalizer), most
 * frequent first, each with what its real example says about the dependency.
 */
export function groupFailures(errors: Iterable<string | null | undefined>, top = 5): FailureGroup[] {
  return groupErrors(errors, top).map((g) => ({
    error: g.error,
    count: g.count,
    kind: errorKind(g.example),
  }));
}
