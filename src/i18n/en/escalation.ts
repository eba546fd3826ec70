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
    waiting: 'waiting jobs',
    active: 'active jobs',
    delayed: 'delayed jobs',
    failed: 'failed jobs',
    failedIncrease: 'new failures',
    oldestWaitingSeconds: 'oldest waiting (s)',
    drainRate: 'drain rate (jobs/min)',
    minutesToDrain: 'minutes to drain',
    workers: 'workers',
    redisMemoryRatio: 'Redis memory used / maxmemory',
    evictionPolicy: 'maxmemory-policy is not noeviction (1 = yes)',
    workerChurn: 'workers appearing or leaving',
    unreachableSamples: 'samples in a row with Redis unreachable',
  } as Record<string, string>,
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
  },
  thread: {
    renotify: (value: string) => `:rotating_light: Still firing and not acknowledged (now ${value}).`,
    escalate: (whom: string, minutes: number) =>
      `:mega: ${whom}: not acknowledged after ${minutes} min. Please take a look.`,
    snoozeOver: (value: string) => `:alarm_clock: Snooze over; still firing (now ${value}).`,
    reopened: (value: string) => `:repeat: Firing again (now ${value}).`,
  },
  fallback: (severity: string, rule: string, subject: string, value: string) =>
    `${severity}: ${rule} on ${subject} is ${value}`,
  resolvedFallback: (rule: string, subject: string) => `Resolved: ${rule} on ${subject}`,
  list: {
    title: 'Open alerts',
    none: 'No open alerts.',
    line: (id: string, severity: string, rule: string, subject: string, value: string, since: string) =>
      `\`${id}\` ${severity} *${rule}* on ${subject}: ${value} · since ${since}`,
  },
  ack: {
    usage: '/queue ack <alert-id>',
    summary: 'acknowledge an alert: its reminders and escalation stop',
    done: (id: string, who: string) => `Alert \`${id}\` acknowledged by ${who}.`,
    already: (id: string) => `Alert \`${id}\` was already acknowledged.`,
  },
  snooze: {
    usage: '/queue snooze <alert-id> <duration>',
    summary: 'silence an alert’s reminders for a while (e.g. 30m, 2h)',
    done: (id: string, until: string) => `Alert \`${id}\` snoozed until ${until}.`,
    badDuration: (value: string) => `\`${value}\` is not a duration.`,
    validDuration: 'a duration like 30m, 2h or 1d (at most 7d)',
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
