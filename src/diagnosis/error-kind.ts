import type { FailureGroup } from './types.js';

/**
 * A failure's error with its variable parts (numbers, ids, hex, UUIDs, tokens, e-mail addresses,
 * URL paths) replaced, so "FCM 503 Unavailable (token 17)" and "(token 18)" are one group. A
 * minimal stand-in for issue 36 §4's normalizer: the one function to swap when that lands.
 */
export function normalizeError(error: string): string {
  return error
    .replace(/[\w.+-]+@[\w-]+(\.[\w-]+)+/g, '<email>')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
    .replace(/(https?:\/\/[^/\s]+)\/[^\s)]*/g, '$1/<path>')
    .replace(/\b(0x)?[0-9a-f]{12,}\b/gi, '<hex>')
    .replace(/\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{20,}\b/g, '<token>')
    .replace(/\b(?!(?:429|5\d\d)\b)\d+(\.\d+)?\b/g, '<n>');
}

/** What an error says about the dependency a handler calls: timed out, rate limited, unavailable. */
export function errorKind(error: string): FailureGroup['kind'] {
  if (/stalled more than allowable limit|job stalled/i.test(error)) return 'stalled';
  if (/\b429\b|too many requests|rate.?limit/i.test(error)) return 'rate-limited';
  if (/time[ds]?.?out|timeout|ETIMEDOUT|deadline exceeded/i.test(error)) return 'timeout';
  if (/\b50[234]\b|unavailable|bad gateway|ECONNREFUSED|ECONNRESET/i.test(error)) return 'unavailable';
  return 'other';
}

/** Failures' errors grouped by their normalized form, most frequent first. */
export function groupFailures(errors: readonly { error: string; count: number }[]): FailureGroup[] {
  const groups = new Map<string, number>();
  for (const { error, count } of errors) {
    const key = normalizeError(error);
    groups.set(key, (groups.get(key) ?? 0) + count);
  }
  return [...groups]
    .map(([error, count]) => ({ error, count, kind: errorKind(error) }))
    .sort((a, b) => b.count - a.count);
}
