const n = (value: number) => value.toLocaleString('en-US');

/** The filters of `retry … all` and `purge` (--error, --name, --older-than, --newer-than, --keep). */
export const filters = {
  unknownFlag: (flag: string) => `\`${flag}\` is not a flag of this command.`,
  needsValue: (flag: string) => `\`${flag}\` needs a value.`,
  twice: (flag: string) => `\`${flag}\` is given twice.`,
  tooLong: (flag: string) => `The value of \`${flag}\` is too long.`,
  badDuration: (flag: string, value: string) => `\`${value}\` is not a duration for \`${flag}\`.`,
  badKeep: (value: string) => `\`${value}\` is not a number of failures to keep.`,
  badGroup: 'That is not an error group key.',
  valueOf: (flag: string): string =>
    ({
      '--error':
        'text the failure message contains, or an error group as `dlq` shows it (up to 256 characters)',
      '--name': 'a job (task) name, exactly (up to 256 characters)',
      '--older-than': 'a duration such as 30m, 2h or 7d',
      '--newer-than': 'a duration such as 30m, 2h or 7d',
      '--keep': 'a whole number from 0 to 10,000,000',
      '--group':
        'the 12-character key that dlq’s “Retry this group” button sends, or an error group as dlq shows it',
    })[flag] ?? '--error, --name, --older-than, --newer-than',
  emptyWindow: (older: string, newer: string) =>
    `\`--older-than ${older}\` and \`--newer-than ${newer}\` leave no time between them.`,
  windowValid: '--older-than shorter than --newer-than, e.g. `--older-than 1h --newer-than 1d`',
  onlyAll: 'Filters go with `all`, not with one job id.',
  errorOnlyFailed: '`--error` filters failed jobs (only they have a failure message).',
  errorOnlyFailedValid: 'purge <system>/<queue> failed --error "<text>"',
  keepOnlyFailed: '`--keep` keeps the newest failed jobs: it goes with `failed`.',
  keepOnlyFailedValid: 'purge <system>/<queue> failed --keep <n>',
  groupAndError: '`--group` already names the error; leave out `--error`.',
  groupGone: (target: string) =>
    `That error group is no longer among the newest failures of ${target}; run \`dlq ${target}\` again.`,
  /** The preview's line about a filtered retry. */
  retryMatched: (filter: string, matched: number, taken: number, failed: number) =>
    ` Filter ${filter}: ${n(matched)} of ${n(failed)} failure${failed === 1 ? '' : 's'} match; ${
      taken < matched
        ? `the newest ${n(taken)} go, ${n(matched - taken)} matching are left for another request`
        : `all ${n(taken)} go`
    }; ${n(Math.max(0, failed - matched))} not matching are left out.`,
  /** The preview's line about a purge that takes part of its states. */
  purgeMatched: (selection: string, matched: number, outOf: number) =>
    ` Selection ${selection}: ${n(matched)} of ${n(outOf)} match; ${n(Math.max(0, outOf - matched))} are left out.`,
  nothingMatches: (target: string, selection: string) => `Nothing in ${target} matches ${selection}.`,
  retryGroup: 'Retry this group',
};
