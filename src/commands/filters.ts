import { FILTER_TEXT_MAX, type JobFilter } from '../backends/job-filter.js';
import { parseDuration } from '../config/duration.js';
import { ErrorCode, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';

/** The flags of `retry … all` and `purge`, and the words left once they are taken out. */
export interface FilterFlags {
  words: string[];
  filter?: JobFilter;
  /** `purge … failed --keep n`. */
  keep?: number;
  /** `retry … all --group <key|group>`: what dlq's "Retry this group" button sends, or a group's text. */
  group?: string;
}

const FILTER_FLAGS = ['--error', '--name', '--older-than', '--newer-than'] as const;
/** The most `--keep` takes: more than any failed set BullMQ keeps. */
export const KEEP_MAX = 10_000_000;

/**
 * Takes the filter flags out of a command's words (`--error "…"` or `--error=…`, anywhere after
 * the target). A flag the verb does not take, one without its value, one given twice, a duration
 * or a count that does not parse: one line naming what is valid.
 */
export function parseFilterFlags(
  args: readonly string[],
  locale: Locale,
  takes: { keep?: boolean; group?: boolean },
): FilterFlags {
  const t = messages(locale).filters;
  const valid: string[] = [...FILTER_FLAGS, ...(takes.keep ? ['--keep'] : [])];
  const out: FilterFlags = { words: [] };
  const filter: JobFilter = {};
  const seen = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      out.words.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = (eq < 0 ? arg : arg.slice(0, eq)).toLowerCase();
    const known = valid.includes(flag) || (takes.group && flag === '--group');
    if (!known)
      throw new OpsError(ErrorCode.BadArgument, {
        message: t.unknownFlag(arg.slice(0, 40)),
        valid: valid.join(', '),
      });
    const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === '' || (eq < 0 && value.startsWith('--')))
      throw new OpsError(ErrorCode.BadArgument, { message: t.needsValue(flag), valid: t.valueOf(flag) });
    if (seen.has(flag))
      throw new OpsError(ErrorCode.BadArgument, { message: t.twice(flag), valid: valid.join(', ') });
    seen.add(flag);
    if (value.length > FILTER_TEXT_MAX)
      throw new OpsError(ErrorCode.BadArgument, { message: t.tooLong(flag), valid: t.valueOf(flag) });
    switch (flag) {
      case '--error':
        filter.error = value;
        break;
      case '--name':
        filter.name = value;
        break;
      case '--older-than':
      case '--newer-than':
        if (parseDuration(value) === undefined)
          throw new OpsError(ErrorCode.BadArgument, {
            message: t.badDuration(flag, value),
            valid: t.valueOf(flag),
          });
        if (flag === '--older-than') filter.olderThan = value.trim().toLowerCase();
        else filter.newerThan = value.trim().toLowerCase();
        break;
      case '--keep': {
        const keep = /^\d{1,8}$/.test(value) ? Number(value) : Number.NaN;
        if (!(keep >= 0 && keep <= KEEP_MAX))
          throw new OpsError(ErrorCode.BadArgument, { message: t.badKeep(value), valid: t.valueOf(flag) });
        out.keep = keep;
        break;
      }
      case '--group':
        // The key dlq's button sends, or a group's text as dlq shows it (matched exactly).
        if (value.trim() === '')
          throw new OpsError(ErrorCode.BadArgument, { message: t.badGroup, valid: t.valueOf(flag) });
        out.group = value;
        break;
    }
  }
  // Failed at least 2h ago and at most 1h ago: nothing can be both.
  if (filter.olderThan !== undefined && filter.newerThan !== undefined) {
    if (parseDuration(filter.olderThan)! >= parseDuration(filter.newerThan)!)
      throw new OpsError(ErrorCode.BadArgument, {
        message: t.emptyWindow(filter.olderThan, filter.newerThan),
        valid: t.windowValid,
      });
  }
  if (Object.keys(filter).length > 0) out.filter = filter;
  return out;
}
