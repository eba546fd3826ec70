/** Usage and argument problems of the action verbs (pause, resume, approve, deny, pending, audit). */
export const actions = {
  pause: {
    usage: '/queue pause <system>/<queue>',
    summary: 'stop workers picking up jobs from a queue (policy and approval apply)',
  },
  resume: {
    usage: '/queue resume <system>/<queue>',
    summary: 'let workers pick up jobs from a paused queue again',
  },
  retry: {
    usage:
      '/queue retry <system>/<queue> <job-id|all> [limit] [--error <text>] [--group <key>] [--name <name>] [--older-than <d>] [--newer-than <d>]',
    summary:
      'run failed jobs again: one by id, or the newest failures up to limit (default and most 1000), of those the filters match',
  },
  retryNeedsWhat: 'Name a failed job id, or `all`.',
  retryLimitOnlyAll: 'A limit only goes with `all`.',
  retryLimit: (value: string) => `\`${value}\` is not a valid limit.`,
  retryLimitValid: (max: number) => `a whole number from 1 to ${max}`,
  approve: { usage: '/queue approve <request-id>', summary: 'approve someone else’s pending request' },
  deny: {
    usage: '/queue deny <request-id> [reason]',
    summary: 'turn down a pending request (or withdraw your own)',
  },
  pending: { usage: '/queue pending', summary: 'requests waiting for approval' },
  audit: {
    usage: '/queue audit [n | verify]',
    summary: 'the last n audit entries (default 20), or check the hash chain',
  },
  needsTarget: 'Name the queue as system/queue.',
  needsId: 'Name the request id, e.g. `r-7f3k9qab`.',
  tooMany: 'Too many words.',
  /** Completes "`queue-ops` (read-only) cannot …" when the bot's store is not there. */
  needsStore: 'run actions without a store',
  auditNeedsStore: 'show the audit trail without a store',
  exportNeedsStore: 'export the audit trail without a store',
  exportCliOnly: 'Export writes JSON lines and only runs on the command line.',
  auditCount: (value: string) => `\`${value}\` is not a valid number of entries.`,
  auditCountValid: (max: number) => `1..${max}, or \`verify\``,
  exportUsage: 'queue-ops audit export [--since ISO]',
};
