import { parseDuration } from '../config/duration.js';
import { ErrorCode, OpsError } from '../errors.js';
import { scrubSecrets } from '../lib/scrub.js';
import { type ErrorGroup, inErrorGroup } from './error-groups.js';

/**
 * Which jobs of a state a `retry … all` or a `purge` takes, beside the state itself. Stored in the
 * request as it is (durations as typed). What runs is what the preview showed: a retry keeps the
 * previewed ids, a purge the previewed count of each state; the filter then only says what the
 * request was about, and counts what arrived after the preview and was left.
 */
export interface JobFilter {
  /** The failure message contains it (ASCII letters compared case-insensitively), or it is an error group `dlq` shows. */
  error?: string;
  /** `--group`: the failure's error group (its normalized first line, error-groups.ts) is exactly this. */
  group?: string;
  /** The job's (task's) name, exactly. */
  name?: string;
  /** `2h`: failed (waiting, delayed: added) at least this long ago. */
  olderThan?: string;
  /** `30m`: failed (waiting, delayed: added) at most this long ago. */
  newerThan?: string;
}

/** What a purge takes of the states it names: the jobs a filter matches, and/or all but the newest `keep` failures. */
export interface PurgeSelection {
  filter?: JobFilter;
  /** `failed --keep n`: the newest n failures stay. */
  keep?: number;
}

/** The longest text a filter takes: a word of a command (parse.ts' MAX_WORD_LENGTH). */
export const FILTER_TEXT_MAX = 256;

export function hasFilter(filter: JobFilter | undefined): filter is JobFilter {
  return (
    filter !== undefined &&
    (filter.error !== undefined ||
      filter.group !== undefined ||
      filter.name !== undefined ||
      filter.olderThan !== undefined ||
      filter.newerThan !== undefined)
  );
}

/** A purge selection that takes less than whole states. */
export function isPartial(selection: PurgeSelection | undefined): selection is PurgeSelection {
  return selection !== undefined && (hasFilter(selection.filter) || selection.keep !== undefined);
}

/**
 * The time window a filter means at `now`, in epoch ms: `from` ≤ when ≤ `to` (either may be
 * absent). Throws on a duration that does not parse: a stored request is data, checked again.
 */
export function timeWindow(filter: JobFilter, now: number): { from?: number; to?: number } {
  const ms = (text: string | undefined) => {
    if (text === undefined) return undefined;
    const value = parseDuration(text);
    if (value === undefined) throw new Error(`not a duration: ${text}`);
    return value;
  };
  const older = ms(filter.olderThan);
  const newer = ms(filter.newerThan);
  return {
    ...(newer !== undefined ? { from: now - newer } : {}),
    ...(older !== undefined ? { to: now - older } : {}),
  };
}

/** Lower-cases ASCII letters only, the way Lua's `string.lower` does in Redis: both sides compare alike. */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (s) => s.toLowerCase());
}

/**
 * An error group as `dlq` shows it may be cut (`…` after 199 characters): such a text matches a
 * failure whose message starts with what is before the `…`.
 */
export function groupPrefix(error: string): string | undefined {
  return error.endsWith('…') && error.length > 1 ? error.slice(0, -1) : undefined;
}

/** Does a failure message match `--error`? (The same test the Redis scripts make.) */
export function errorMatches(reason: string, error: string): boolean {
  const haystack = asciiLower(reason);
  if (haystack.includes(asciiLower(error))) return true;
  const prefix = groupPrefix(error);
  return prefix !== undefined && haystack.startsWith(asciiLower(prefix));
}

/** Does one job match the filter at `now`? For backends that hold what they filter in memory already. */
export function jobMatches(
  job: { name: string; error: string; at: number | null },
  filter: JobFilter,
  now: number,
): boolean {
  if (filter.name !== undefined && job.name !== filter.name) return false;
  if (filter.error !== undefined && !errorMatches(job.error, filter.error)) return false;
  if (filter.group !== undefined && !inErrorGroup(job.error, filter.group)) return false;
  const { from, to } = timeWindow(filter, now);
  if (from !== undefined && (job.at === null || job.at < from)) return false;
  if (to !== undefined && (job.at === null || job.at > to)) return false;
  return true;
}

/**
 * The filter back from a stored request's params, checked as data: strings of bounded length,
 * durations that parse. Undefined when there is none; throws on anything else.
 */
export function filterFromParams(value: unknown): JobFilter | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object') throw new Error('filter is not an object');
  const raw = value as Record<string, unknown>;
  const filter: JobFilter = {};
  for (const key of ['error', 'group', 'name', 'olderThan', 'newerThan'] as const) {
    const v = raw[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '' || v.length > FILTER_TEXT_MAX) throw new Error(`bad filter ${key}`);
    filter[key] = v;
  }
  timeWindow(filter, 0);
  return hasFilter(filter) ? filter : undefined;
}

/** The filter as the words that ask for it (`--error "…" --older-than 2h`), for previews and audit. */
export function filterWords(filter: JobFilter | undefined, keep?: number): string {
  const words: string[] = [];
  const quoted = (text: string) => (/^[^\s"'“”‘’„]+$/.test(text) ? text : JSON.stringify(text));
  if (filter?.error !== undefined) words.push(`--error ${quoted(filter.error)}`);
  if (filter?.group !== undefined) words.push(`--group ${quoted(filter.group)}`);
  if (filter?.name !== undefined) words.push(`--name ${quoted(filter.name)}`);
  if (filter?.olderThan !== undefined) words.push(`--older-than ${filter.olderThan}`);
  if (filter?.newerThan !== undefined) words.push(`--newer-than ${filter.newerThan}`);
  if (keep !== undefined) words.push(`--keep ${keep}`);
  return words.join(' ');
}

/**
 * `NothingToRetry` of a filter that matches none of the queue's failures: how many there are,
 * the filter as typed, and the error groups that are there (`5× timeout`), so the next try can
 * name one. "No failed jobs" would be false: there are `failed`.
 */
export function nothingMatchesError(
  target: string,
  filter: JobFilter,
  failed: number,
  groups: readonly ErrorGroup[],
): OpsError {
  return new OpsError(ErrorCode.NothingToRetry, {
    target,
    failed,
    filter: filterWords(filter),
    // From failure messages: credentials scrubbed, each cut short (the line is escaped where shown).
    groups: groups.map((g) => {
      const error = scrubSecrets(g.error);
      return `${g.count}× ${error.length > 80 ? `${error.slice(0, 79)}…` : error}`;
    }),
  });
}
