/** Strings of `/queue dlq`. Arguments from Redis arrive already escaped for mrkdwn. */
export const dlq = {
  title: (target: string, total: string) => `DLQ ${target}: ${total} failed`,
  shown: (shown: number, total: string) =>
    shown === 0 ? 'Job data is never shown.' : `The newest ${shown} of ${total}. Job data is never shown.`,
  sameError: '(same error as above)',
  updated: (utc: string) => `Updated ${utc}`,
  topErrors: (over: string) => `*Top errors* (over the newest ${over} failures)`,
  topError: (count: string, error: string, example?: string) =>
    `• *${count}×* ${error}${example ? ` (e.g. ${example})` : ''}`,
  jobsHeading: '*Failed jobs*',
  attempts: (n: number) => (n === 1 ? '1 attempt' : `${n} attempts`),
  failedAtUnknown: 'failed at an unknown time',
  noError: '(no error message)',
  empty: (target: string) => `:white_check_mark: No failed jobs in \`${target}\`.`,
  moreJobs: (n: number, hint: string) =>
    `… and ${n} older ${n === 1 ? 'job' : 'jobs'} not shown here, to stay inside Slack's limits; \`${hint}\` lists them all.`,
  moreHint: (target: string, limit: number) => `queue-ops --json dlq ${target} ${limit}`,
  jobHint: (command: string) =>
    `One job in full (where it is, its stack, its flow): \`${command}\` with its id.`,
  refresh: 'Refresh',
  fallback: (target: string, total: string) => `DLQ ${target}: ${total} failed jobs`,
};
