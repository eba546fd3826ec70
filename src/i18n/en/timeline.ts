/**
 * `timeline`: the incident timeline for a postmortem. Values passed in came from users, Redis or
 * the store: the builders escape them (mrkdwn in Slack, Markdown table cells on the command line).
 */
/** `1 worker acknowledged`, `3 workers acknowledged`. */
const acknowledged = (n: string) => `${n} ${n === '1' ? 'worker' : 'workers'} acknowledged`;

export const timeline = {
  describe: {
    usage: 'timeline [--since 2h|ISO] [--until 30m|ISO] [system]',
    summary: 'who saw what and did what, in order: alerts, looks, requests, approvals, outcomes',
  },
  title: (since: string, until: string, system?: string) =>
    `Incident timeline ${since} – ${until}${system ? ` (${system})` : ''}`,
  empty: 'Nothing was recorded in this span: no alert, look, request or action.',
  columns: { time: 'Time (UTC)', who: 'Who', what: 'What' },
  monitor: 'monitor',
  events: {
    alertFired: (rule: string, subject: string, severity: string, threshold: string) =>
      `alert ${rule} fired on ${subject} (${severity}, threshold ${threshold})`,
    alertResolved: (rule: string, subject: string) => `alert ${rule} resolved on ${subject}`,
    alertPaged: (rule: string, subject: string, pager: string, ackedBy?: string) =>
      `paged ${pager} for alert ${rule} on ${subject}${ackedBy ? `; acknowledged by ${ackedBy}` : ''}`,
    inPagerDuty: (name: string) => `${name} in PagerDuty`,
    looked: (verb: string, target?: string) => `looked at ${verb}${target ? ` ${target}` : ''}`,
    /** A look that was answered with an error: a typo, a queue that is not there, Redis away. */
    lookFailed: (verb: string, target: string | undefined, why: string) =>
      `asked for ${verb}${target ? ` ${target}` : ''}, which failed: ${why}`,
    alertHandled: (verb: string, target?: string, count?: number) =>
      verb === 'ack all'
        ? `acknowledged ${count === undefined ? 'the' : count} open ${count === 1 ? 'alert' : 'alerts'} of ${target ?? '?'}`
        : verb === 'silence'
          ? `silenced ${target ?? '?'}${count === undefined ? '' : ` (${count} open ${count === 1 ? 'alert' : 'alerts'} muted)`}`
          : verb === 'unsilence'
            ? `lifted silence ${target ?? '?'}`
            : `${verb} alert${target ? ` ${target}` : ''}`,
    requested: (action: string, target: string, id: string) => `requested ${action} ${target} (${id})`,
    approved: (action: string, target: string, id: string) => `approved ${action} ${target} (${id})`,
    approvalRefused: (id: string, why: string) => `approval of ${id} refused: ${why}`,
    denied: (action: string, target: string, id: string, reason?: string) =>
      `denied ${action} ${target} (${id})${reason ? `: ${reason}` : ''}`,
    expired: (id: string) => `request ${id} expired unapproved`,
    interrupted: (id: string) => `request ${id} interrupted (its bot stopped)`,
    actionDone: (action: string, target: string, outcome: string) =>
      `${action} ${target} done${outcome ? `: ${outcome}` : ''}`,
    actionFailed: (action: string, target: string, error: string) => `${action} ${target} failed: ${error}`,
    /** What an action's result says, one part per known field (the rest as `field value`). */
    result: {
      purged: (n: string) => `purged ${n}`,
      archived: (n: string) => `archived ${n}`,
      restored: (n: string) => `restored ${n}`,
      retried: (n: string) => `retried ${n}`,
      purgeId: (id: string) => `undo with ${id}`,
      archivePath: (path: string) => `archive ${path}`,
      skipped: (n: string) => `skipped ${n} no longer failed`,
      newSincePreview: (n: string) => `${n} arrived after the preview, left`,
      /** An undo's line: what came back, what was there already, and which purge it undid. */
      undone: (restored: string, alreadyThere: string, purgeId: string) =>
        `restored ${restored}${alreadyThere === '0' ? '' : ` (${alreadyThere} already there)`} from purge ${purgeId}`,
      /** A purge's line: how to undo it. */
      undoWith: (purgeId: string) => `undo: /queue undo ${purgeId}`,
      /** expire-results: keys given a TTL, of the results walked. */
      expired: (expired: string, ttl: string, results: string) =>
        `gave ${expired} of ${results} results a TTL of ${ttl}`,
    },
    /** The other actions' results, worded whole (a purge's and an undo's are `result` above). */
    outcome: {
      paused: (workers?: string) => `paused${workers ? `, ${acknowledged(workers)}` : ''}`,
      resumed: (workers?: string) => `resumed${workers ? `, ${acknowledged(workers)}` : ''}`,
      scaled: (replicas: string, changes: string) => `scaled to ${replicas}${changes ? ` (${changes})` : ''}`,
      change: (name: string, before: string, after: string) => `${name} ${before} → ${after}`,
      autoscaler: (kind: string, name: string, min: string, max: string) =>
        `${kind} ${name} now min ${min}, max ${max}`,
      revoked: (count: string, terminate: boolean, signal: string) =>
        `revoked ${count} ${count === '1' ? 'task' : 'tasks'}${terminate ? `, terminated with SIG${signal}` : ''}`,
      answered: (n: string) => `${n} ${n === '1' ? 'worker' : 'workers'} answered`,
      stillRunning: (ids: string) => `still running: ${ids}`,
      failedJob: (id: string, before: string) => `moved job ${id} from ${before} to failed`,
      lockWasHeld: 'a live worker still held its lock',
      restarted: (back: string, of: string, complete: boolean) =>
        complete ? `restarted, ${back} of ${of} back` : `restarted, only ${back} of ${of} back`,
      restartedUnchecked: 'restarted',
    },
    /** Codes a refusal or a failure is recorded with, as words. */
    reasons: {
      'self-approval': 'the requester cannot approve their own request',
      expired: 'the request had expired',
      Forbidden: 'the role was missing',
      WrongChannel: 'not in an allowed channel',
      TwoFactorRequired: 'two-factor authentication was not confirmed',
      RateLimited: 'too many commands in a minute',
      AlreadyApproved: 'already approved by them',
      RequestNotPending: 'the request was no longer waiting',
      RequestExpired: 'the request had expired',
      SelfApproval: 'the requester cannot approve their own request',
      IdentityNotBound: 'a command-line identity not bound in cli.users',
      NotChannelMember: "not a member of the request's private channel",
      NoWorkersAnswered: 'no worker answered',
      RedisUnavailable: 'Redis did not answer',
      RedisForbidden: 'Redis refused its user (ACL)',
      ScaleFailed: 'scaling failed',
      KubernetesForbidden: 'Kubernetes refused the service account',
      KubernetesNotFound: 'Kubernetes has no such deployment',
      UndoConflict: 'jobs exist again under the same ids',
      ArchiveInvalid: 'the archive did not match its manifest',
      RetryInterrupted: 'Redis stopped answering midway through the retry',
      PurgeInterrupted: 'Redis stopped answering; the purge goes on once it is back',
      UndoInterrupted: 'Redis stopped answering; the undo goes on once it is back',
      UndoTakenOver: 'another run took the undo over',
      Internal: 'an unexpected error',
      UnknownSystem: 'there is no such system',
      UnknownQueue: 'there is no such queue',
      UnknownVerb: 'there is no such command',
      BadArgument: 'an argument was not valid',
      UsageError: 'the command was incomplete',
      NotSupported: 'the system cannot do that',
      UnknownRequest: 'there is no such request',
      UnknownAlert: 'there is no such alert',
      StoreUnavailable: 'the bot’s store did not answer',
    },
    guardDenied: (command: string, target?: string, why?: string) =>
      `was refused ${command}${target ? ` ${target}` : ''}: ${why ?? 'by the guards'}`,
  },
  verification: {
    ok: (count: number, first?: number, last?: number) =>
      `Audit chain verified: ${count} ${count === 1 ? 'entry' : 'entries'} unbroken${first !== undefined ? `, including this span's #${first}–#${last}` : ''}.`,
    brokenAfter: (seq: number, reason: string, last?: number) =>
      `Audit chain broken at #${seq} (${reason}), after this span${last !== undefined ? ` (its last entry is #${last})` : ''}: the entries shown verified.`,
    broken: (seq: number, reason: string) =>
      `Audit chain BROKEN at #${seq} (${reason}): entries from #${seq} on, in this span too, cannot be trusted.`,
  },
  truncated: (shown: number, total: number) =>
    `Only the first ${shown} of ${total} events fit here; the whole timeline is in your direct messages with queue-ops, as a Markdown file only you can see.`,
  fileTitle: 'Incident timeline (Markdown, for the postmortem)',
  restCli: (since: string, until: string, system?: string) =>
    `The whole timeline: \`queue-ops timeline --since ${since} --until ${until}${system ? ` ${system}` : ''}\``,
  capped: (limit: number) =>
    `The span holds more than ${limit} audit entries; narrow it with --since/--until.`,
  badTime: (flag: string, value: string) => `${flag} ${value} is not a time.`,
  timeValid: 'a duration ago such as `2h`, `30m`, `1d`, or an ISO 8601 time such as `2024-05-01T10:00:00Z`',
  badOrder: (since: string, until: string) => `--since ${since} is not before --until ${until}`,
  orderValid: 'a --since earlier than --until',
  needsValue: (flag: string) => `${flag} needs a value`,
  unknownFlag: (flag: string) => `unknown option ${flag}`,
  flagsValid: '--since, --until, and at most one system name',
};
