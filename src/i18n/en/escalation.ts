/**
 * Strings of the escalation posts and of `alerts`, `ack`, `snooze` and `monitor --once`.
 * Names (system, queue, rule) arrive already escaped for mrkdwn.
 */
export const escalation = {
  severity: { critical: 'CRITICAL', warning: 'WARNING', info: 'INFO' } as Record<string, string>,
  severityEmoji: {
    critical: ':red_circle:',
    warning: ':large_orange_circle:',
    info: ':large_blue_circle:',
  } as Record<string, string>,
  header: (severity: string, rule: string, subject: string) => `${severity} · ${rule} · ${subject}`,
  resolvedHeader: (rule: string, subject: string) => `RESOLVED · ${rule} · ${subject}`,
  metric: {
    waiting: 'waiting',
    active: 'active',
    delayed: 'delayed',
    failed: 'failed',
    failedIncrease: 'new failures',
    oldestWaitingSeconds: 'oldest waiting',
    drainRate: 'drain rate',
    minutesToDrain: 'time to drain',
    workers: 'consumers',
    throughput: 'completed',
    failedPerMinute: 'failing',
    waitP95Seconds: 'wait p95',
    runP95Seconds: 'run p95',
    redisMemoryRatio: 'Redis memory used / maxmemory',
    evictionPolicy: 'maxmemory-policy is not noeviction (1 = yes)',
    workerChurn: 'workers appearing or leaving',
    unreachableSamples: 'Redis unreachable',
    persistenceFailing: 'Redis background save or AOF write failing (1 = yes)',
    networkUnstableSamples: 'samples with the link to Redis unstable',
  } as Record<string, string>,
  /** An alert's value with its unit, in every alert line: "5,580 s (1h 33m)", "152 jobs", "12.5/min". */
  valueUnits: {
    jobs: (v: string) => `${v} jobs`,
    perMinute: (v: string) => `${v}/min`,
    seconds: (v: string, human: string | null) => (human ? `${v} s (${human})` : `${v} s`),
    minutes: (v: string) => `${v} min`,
    workers: (v: string) => `${v} workers`,
    samples: (v: string) => `${v} samples`,
    changes: (v: string) => `${v} changes`,
    percent: (v: string) => `${v}%`,
  },
  valueLine: (metric: string, value: string, comparator: 'above' | 'below', threshold: string) =>
    `*${metric}*: *${value}* (${comparator} ${threshold})`,
  trend: (sparkline: string) => `Trend \`${sparkline}\``,
  drain: (minutes: string) => `${minutes} min to drain at the current rate`,
  notDraining: 'not draining at the current rate',
  clearing: (n: number, of: number) => `back under the threshold: ${n} of ${of} samples`,
  firingSince: (when: string, lasted: string) => `Firing since ${when} (${lasted})`,
  lasted: (lasted: string, worst: string) => `Lasted ${lasted}; worst value ${worst}.`,
  resolvedAt: (when: string) => `Resolved ${when}`,
  alertId: (id: string) => `Alert \`${id}\``,
  ackedBy: (who: string) => `:eyes: Acknowledged by ${who}`,
  snoozedBy: (who: string, until: string) => `:zzz: Snoozed by ${who} until ${until}`,
  escalatedTo: (whom: string) => `Escalated to ${whom}`,
  buttons: {
    ack: 'Ack',
    snooze30: 'Snooze 30 min',
    snooze2h: 'Snooze 2 h',
    dlq: 'Show DLQ',
    scale: 'Scale…',
    /** Opens one listed job's view (`/queue job`); the id is cut to fit a button. */
    job: (id: string) => `Job ${id}`,
  },
  /** The jobs an alert is about, each with the command of its view. Ids and names arrive escaped. */
  jobs: {
    title: {
      failed: 'Newest failures',
      next: 'Next to be taken (waiting longest)',
      running: 'Running longest',
    } as Record<string, string>,
    line: (id: string, name: string, detail: string | undefined, command: string) =>
      `• \`${id}\` ${name}${detail ? ` · ${detail}` : ''} · ${command}`,
    running: (duration: string) => `running for ${duration}`,
    none: {
      failed: 'No failed job is left in the queue now.',
      next: 'No job waits in the queue now.',
      running: 'No job of this queue is running now.',
    } as Record<string, string>,
    unread:
      'Its jobs could not be listed now (the system did not answer in time); `Show DLQ` or `/queue job` later.',
  },
  /** Paging (`paging:`, `/queue page`): what messages, lists and pages say. Names arrive escaped. */
  page: {
    usage: '/queue page <alert-id> [pager]',
    summary: 'page the on-call person now through PagerDuty or JSM, without waiting',
    needsId: 'Which alert? Give its id from `/queue alerts`.',
    button: 'Page',
    done: (id: string, pagers: string) => `Alert \`${id}\` paged: ${pagers}.`,
    already: (id: string, pagers: string) => `Alert \`${id}\` is already paged: ${pagers}.`,
    paged: (pager: string, at: string) => `:pager: Paged ${pager} at ${at}`,
    ackedInPagerDuty: (name: string, at: string) => `acknowledged in PagerDuty by ${name} at ${at}`,
    ackedBy: (who: string, at: string) => `acknowledged by ${who} at ${at}`,
    resolvedInPagerDuty: (name: string) =>
      `page resolved in PagerDuty by ${name}; the alert stays open until the monitor sees it clear`,
    refused: (reason: string) => `refused (${reason})`,
    listPaged: (pagers: string) => ` · :pager: ${pagers}`,
    groupSummary: (n: number, where: string, first: string) => `${n} alerts on ${where}; first: ${first}`,
    linkText: 'The alert in Slack',
  },
  thread: {
    renotify: (value: string) => `:rotating_light: Still firing and not acknowledged (now ${value}).`,
    escalate: (whom: string, minutes: number) =>
      `:mega: ${whom}: not acknowledged after ${minutes} min. Please take a look.`,
    snoozeOver: (value: string) => `:alarm_clock: Snooze over; still firing (now ${value}).`,
    reopened: (value: string) => `:repeat: Firing again (now ${value}).`,
    pageRefused: (pager: string, reason: string) =>
      `:warning: Pager ${pager} refused the page (${reason}); it is not tried again. Check its key, then \`/queue page\` it.`,
  },
  fallback: (severity: string, rule: string, subject: string, value: string) =>
    `${severity}: ${rule} on ${subject} is ${value}`,
  resolvedFallback: (rule: string, subject: string) => `Resolved: ${rule} on ${subject}`,
  /** The cause an alert carries (issue 36 §3): diagnosed when it opened, shown with its fixes. */
  cause: {
    lead: (id: string, title: string, queues: number) =>
      id === 'no-workers'
        ? queues > 1
          ? `${queues} queues have no consumer`
          : 'A queue has no consumer'
        : id === 'paused' && queues > 1
          ? `${queues} queues are paused`
          : queues > 1
            ? `${title} (${queues} queues)`
            : title,
    summary: (lead: string, evidence: string) => `${lead}: ${evidence}`,
    line: (summary: string) => `*Cause:* ${summary}`,
    why: 'Why?',
    noCause: 'no cause named',
  },
  group: {
    header: (severity: string, n: number, where: string) =>
      `${severity} · ${n} ${n === 1 ? 'alert' : 'alerts'} firing · ${where}`,
    causeHeader: (summary: string) => summary,
    summaryCauses: (counts: string) => `*By cause*: ${counts}`,
    alertLine: (severity: string, rule: string, subject: string, value: string) =>
      `${severity} *${rule}* · ${subject}: ${value}`,
    resolvedLine: (rule: string, subject: string, lasted: string, worst: string) =>
      `:white_check_mark: ${rule} · ${subject} resolved after ${lasted} (worst ${worst})`,
    resolvedHeader: (n: number, where: string) =>
      `RESOLVED · ${n} ${n === 1 ? 'alert' : 'alerts'} · ${where}`,
    silenced: (id: string) => `:no_bell: silenced by \`${id}\``,
    held: (n: number) =>
      `:no_bell: ${n} more ${n === 1 ? 'alert is' : 'alerts are'} silenced and not listed.`,
    summaryRules: (counts: string) => `*By rule*: ${counts}`,
    summarySystems: (counts: string) => `*By system*: ${counts}`,
    more: (n: number) => (n > 0 ? `…and ${n} more.` : ''),
    seeAlerts: '`/queue alerts` lists them all, with their ids and buttons.',
    ackAll: (system: string) => `\`/queue ack all ${system}\``,
    fallback: (severity: string, n: number, where: string) =>
      `${severity}: ${n} ${n === 1 ? 'alert' : 'alerts'} firing on ${where}`,
    resolvedFallback: (n: number, where: string) =>
      `Resolved: ${n} ${n === 1 ? 'alert' : 'alerts'} on ${where}`,
  },
  list: {
    title: 'Open alerts',
    none: 'No open alerts.',
    line: (
      id: string,
      severity: string,
      rule: string,
      subject: string,
      value: string,
      since: string,
      handled: string | null,
    ) =>
      `\`${id}\` ${severity} *${rule}* on ${subject}: ${value} · since ${since}${handled ? ` · ${handled}` : ''}`,
    acked: (who: string) => `acknowledged by ${who}`,
    snoozed: (until: string, who: string | null) => `snoozed until ${until}${who ? ` by ${who}` : ''}`,
    silenced: (id: string, pattern: string | null) => `silenced by ${id}${pattern ? ` (${pattern})` : ''}`,
    /** Alerts left out of the list (Slack's limits): how many, and where every one is. */
    more: (n: number, unhandled: number) =>
      `${n} more not shown${unhandled > 0 ? ` (${unhandled} of them not handled)` : ''}: \`alerts --json\` on the command line lists every one, and \`/queue ack all <system>\` acknowledges a system's.`,
    unhandledCount: (n: number, of: number) =>
      `${n} of ${of} not handled (neither acknowledged, snoozed nor silenced)`,
  },
  ack: {
    usage: '/queue ack <alert-id> | ack all <system>',
    summary: 'acknowledge an alert: its reminders and escalation stop',
    done: (id: string, who: string) => `Alert \`${id}\` acknowledged by ${who}.`,
    already: (id: string) => `Alert \`${id}\` was already acknowledged.`,
  },
  snooze: {
    usage: '/queue snooze <alert-id> <duration>',
    summary: 'silence an alert’s reminders for a while (e.g. 30m, 2h)',
    done: (id: string, until: string) => `Alert \`${id}\` snoozed until ${until}.`,
    badDuration: (value: string) => `\`${value}\` is not a duration.`,
    /** A duration past the longest allowed: it is one, just too long. */
    tooLong: (value: string) => `\`${value}\` is longer than the 7d maximum.`,
    validDuration: 'a duration like 30m, 2h or 1d (at most 7d)',
    needsDuration: 'Say for how long, e.g. 30m, 2h or 1d (at most 7d).',
  },
  silence: {
    usage: '/queue silence <pattern> <duration> [--force] [reason]',
    summary: 'silence matching alerts for a while: `system`, `system/queue-*` or `rule@system/queue`',
    done: (id: string, pattern: string, until: string, n: number) =>
      `Silence \`${id}\` on \`${pattern}\` until ${until}; ${n} open ${n === 1 ? 'alert' : 'alerts'} silenced now.`,
    needsPattern: 'Name what to silence and for how long.',
    badPattern: (value: string) => `\`${value}\` is not a silence pattern.`,
    validPattern:
      '`system`, `system/queue` with `*` as a wildcard, either after `rule@` (e.g. `pushizo/dispatch-*`)',
    unknownRule: (rule: string) => `There is no rule \`${rule}\`.`,
    /** The pattern's queue part matches no queue, even after a fresh look. */
    noQueueMatches: (pattern: string, system: string | undefined, likely: string | undefined) =>
      `\`${pattern}\` matches no queue${system ? ` of \`${system}\`` : ''}, so it would silence nothing.${likely ? ` Did you mean \`${likely}\`?` : ''}`,
    forceHint:
      'a pattern that matches a queue, or add `--force` after the duration to silence a queue that does not exist yet',
    line: (id: string, pattern: string, until: string, who: string, reason: string | undefined) =>
      `\`${id}\` \`${pattern}\` until ${until} by ${who}${reason ? ` · ${reason}` : ''}`,
    onMessage: (id: string, pattern: string, until: string, reason: string | undefined) =>
      `:no_bell: Silenced by \`${id}\` (\`${pattern}\`) until ${until}${reason ? `: ${reason}` : ''}`,
  },
  silences: {
    usage: '/queue silences',
    summary: 'silences in force',
    title: 'Silences in force',
    none: 'No silence in force.',
  },
  unsilence: {
    usage: '/queue unsilence <silence-id>',
    summary: 'lift a silence',
    done: (id: string, pattern: string) =>
      `Silence \`${id}\` on \`${pattern}\` lifted; matching alerts notify again.`,
    already: (id: string) => `Silence \`${id}\` was already lifted or over.`,
    needsId: 'Name the silence id, e.g. `s-1a2b3c4d`.',
  },
  ackAll: {
    usage: '/queue ack all <system>',
    needsSystem: 'Name the system whose open alerts to acknowledge.',
    done: (n: number, system: string, who: string) =>
      `${n} open ${n === 1 ? 'alert' : 'alerts'} of \`${system}\` acknowledged by ${who}.`,
    none: (system: string) => `\`${system}\` has no unacknowledged open alert.`,
  },
  alerts: { usage: '/queue alerts', summary: 'open alerts, newest last' },
  keptChanging: 'the alert kept changing under this command; try again',
  needsId: 'Name the alert id, e.g. `a-7f3k9q2b`.',
  unknownAlert: (id: string) => `There is no alert \`${id}\`.`,
  validAlert: 'an id from `/queue alerts`',
  notFiring: (id: string) => `Alert \`${id}\` is resolved; there is nothing to acknowledge or snooze.`,
  needsStore: 'track alerts without a store',
  monitor: {
    usage: 'queue-ops monitor --once',
    onceOnly: 'The command line runs one tick: `queue-ops monitor --once`. The bot runs the monitor itself.',
    notLeader: (owner: string, until: string) =>
      `Another monitor (${owner}) holds the lease until ${until}; this run sampled nothing.`,
    summary: (systems: number, queues: number, down: number) =>
      `Sampled ${systems} ${systems === 1 ? 'system' : 'systems'}, ${queues} ${queues === 1 ? 'queue' : 'queues'}` +
      (down > 0 ? ` (${down} unreachable)` : '') +
      '.',
    firing: (n: number) => (n === 0 ? 'No alert firing.' : `${n} ${n === 1 ? 'alert' : 'alerts'} firing:`),
    opened: (n: number) => `${n} opened this tick`,
    resolved: (n: number) => `${n} resolved this tick`,
    outbox: (sent: number, pending: number) =>
      `Slack: ${sent} ${sent === 1 ? 'message' : 'messages'} delivered, ${pending} waiting in the outbox.`,
    noToken: 'SLACK_BOT_TOKEN is not set: messages wait in the outbox.',
    noChannel: 'slack.incidentChannel is not set: alerts are tracked but not posted.',
  },
};
