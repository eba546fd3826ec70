/**
 * Audit trail strings: `/queue audit`, the audit channel, and the reasons `audit verify` gives.
 * Values passed in came from users, Redis or the store: the block builders escape them.
 */
export const audit = {
  title: (count: number) => `Audit trail: last ${count} ${count === 1 ? 'entry' : 'entries'}`,
  empty: 'The audit trail is empty: nothing has been recorded yet.',
  omitted: (count: number) =>
    `${count} older ${count === 1 ? 'entry is' : 'entries are'} not shown here; \`queue-ops audit export\` writes them all.`,
  sinceValid: 'an ISO 8601 time such as `2024-05-01T00:00:00Z`',
  entryText: (seq: number, action: string, outcome: string) => `Audit #${seq}: ${action} → ${outcome}`,
  entryFooter: (seq: number, hash: string) => `#${seq} · chain ${hash}`,
  batchText: (firstSeq: number, lastSeq: number, count: number) =>
    count === 1 ? `Audit #${firstSeq}` : `Audit #${firstSeq}–#${lastSeq} (${count} entries)`,
  notPosted: (count: number, firstSeq: number, lastSeq: number) =>
    `${count} ${count === 1 ? 'entry was' : 'entries were'} not posted here (${firstSeq === lastSeq ? `#${firstSeq}` : `between #${firstSeq} and #${lastSeq}`}); ${count === 1 ? 'it is' : 'they are'} in the store: \`/queue audit\` or \`queue-ops audit export\` shows ${count === 1 ? 'it' : 'them'}.`,
  fields: {
    actor: 'Who',
    via: 'Via',
    channel: 'Channel',
    target: 'Target',
    outcome: 'Outcome',
    error: 'Error',
    params: 'Parameters',
  },
  via: { slack: 'Slack', cli: 'command line', console: 'demo console' } as Record<string, string>,
  verify: {
    ok: (count: number) => `Audit chain verified: ${count} ${count === 1 ? 'entry' : 'entries'}, unbroken.`,
    bad: (seq: number, reason: string, count: number) =>
      `Audit chain broken at entry #${seq}: ${reason}. (${count} ${count === 1 ? 'entry' : 'entries'} before it verified.)`,
    reasons: {
      missing: (from: number, to: number) =>
        from === to
          ? `entry #${from} is missing (removed from the log)`
          : `entries #${from}–#${to} are missing (removed from the log)`,
      brokenLink: (prevSeq: number) =>
        prevSeq === 0
          ? 'it should start the chain but points at an earlier entry (entries were removed or reordered)'
          : `it does not link to entry #${prevSeq} (entries were removed, inserted or reordered)`,
      edited: 'its contents do not match its hash (the entry was edited)',
      tailMissing: (from: number, to: number) =>
        from === to
          ? `entry #${from}, the last one appended, is missing (removed from the end of the log)`
          : `entries #${from}–#${to}, the last ones appended, are missing (removed from the end of the log)`,
      headMismatch: 'it is not the entry the chain head recorded as last (the end of the log was replaced)',
      notAppended: (headSeq: number) =>
        `it is newer than the chain head (#${headSeq}), so it was not appended through the bot`,
    },
  },
};
