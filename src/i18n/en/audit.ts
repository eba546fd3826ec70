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
  /** An entry's outcome as stored (`ok`, `denied`, `done`…), as words; anything else as it is. */
  outcomes: {
    ok: 'ok',
    error: 'error',
    denied: 'denied',
    requested: 'requested',
    approved: 'approved',
    rejected: 'rejected',
    expired: 'expired',
    done: 'done',
    failed: 'failed',
    interrupted: 'interrupted',
  } as Record<string, string>,
  entryText: (seq: number, action: string, outcome: string) => `Audit #${seq}: ${action} → ${outcome}`,
  /** `hash` is the full hash: the channel is a witness `audit verify` compares the store with. */
  entryFooter: (seq: number, hash: string, keyId?: string) =>
    `#${seq} · chain ${hash}${keyId ? ` · key ${keyId}` : ''}`,
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
  via: { slack: 'Slack', cli: 'command line', console: 'demo console', pagerduty: 'PagerDuty' } as Record<
    string,
    string
  >,
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
      keyUnknown: (keyId: string) =>
        `it is sealed with audit key ${keyId}, which is not configured here (add that key to \`audit.previousKeyFiles\`)`,
      keyMissing: (keyId: string) =>
        `it is sealed with audit key ${keyId}, but no audit key is configured here (set QUEUE_OPS_AUDIT_KEY or \`audit.keyFile\`)`,
      unkeyedAfterKeyed:
        'it is not keyed although the entries before it are (it was written, or rewritten, without the audit key)',
      unkeyedTail: (from: number, to: number) =>
        `${from === to ? `entry #${from} is` : `entries #${from}–#${to} are`} not keyed although an audit key is configured: written by a process without the key, or rewritten by someone who lacks it (entries from before the key was set become sealed by the first keyed entry after them)`,
      witnessMismatch: (witness: string) =>
        `its hash differs from the one ${witness} recorded (the log was rewritten from here or earlier)`,
      witnessAhead: (witness: string, from: number, to: number) =>
        `${from === to ? `entry #${from} is` : `entries #${from}–#${to} are`} missing from the store, but ${witness} recorded #${to} (removed from the end of the log, chain head included)`,
      witness: {
        file: (path: string) => `the witness file ${path}`,
        channel: (channel: string) => `the audit channel ${channel}`,
      },
    },
    keyed: (keyId: string, older: readonly string[]) =>
      `Keyed: entries are sealed with HMAC-SHA256 under audit key ${keyId}${older.length ? ` (older keys also accepted: ${older.join(', ')})` : ''}; only a holder of the key can forge one.`,
    unkeyed:
      'Unkeyed: no audit key is configured (QUEUE_OPS_AUDIT_KEY or `audit.keyFile`), so this detects accidental edits, not someone who can write to the database.',
    witnessesChecked: 'Checked against the witnesses outside the store:',
    witnessChecked: (witness: string, seq: number) => `${witness}: newest entry #${seq} matches`,
    witnessEmpty: (witness: string) => `${witness}: holds no entry yet, nothing to compare`,
    witnessUnreadable: (witness: string, error: string) =>
      `${witness}: could not be read (${error}), not checked`,
    noWitnesses:
      'No witness outside the store is configured (`audit.witnessFile`, `slack.auditChannel`): entries removed from the end together with the head row would not be noticed.',
  },
  keys: {
    source: '`audit:` and QUEUE_OPS_AUDIT_KEY',
    unreadable: (where: string, path: string, code: string) => `${where}: cannot read ${path} (${code})`,
    tooShort: (where: string, min: number) =>
      `${where}: the audit key must be at least ${min} characters (for example \`openssl rand -hex 32\`)`,
    keyedChainNoKey: (keyId: string, seq: number) =>
      `the audit chain is sealed with audit key ${keyId} (entry #${seq}) but no audit key is configured here: set QUEUE_OPS_AUDIT_KEY or audit.keyFile (an entry written without it would break the chain for good)`,
    twoKeys:
      'QUEUE_OPS_AUDIT_KEY and audit.keyFile hold different keys: set one of them (the other key may go in audit.previousKeyFiles)',
  },
  unkeyedAtStart:
    'The audit chain is unkeyed: set QUEUE_OPS_AUDIT_KEY or audit.keyFile so that someone who can write to the database cannot rewrite it unnoticed.',
};
