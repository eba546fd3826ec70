/** The App Home tab. Values passed in came from config, Redis or the store: the builder escapes them. */
export const home = {
  title: 'Queue Ops',
  updated: (at: string) => `Updated ${at}. It refreshes itself when something here changes.`,
  systems: 'Systems',
  systemLine: (name: string, type: string, queues: number, waiting: string, failed: string, paused: number) =>
    `${name} (${type}): ${queues} ${queues === 1 ? 'queue' : 'queues'}, ${waiting} waiting, ${failed} failed${paused > 0 ? `, ${paused} paused` : ''}`,
  systemDown: (name: string, code: string) => `${name}: unreachable (${code})`,
  noSystems: 'No systems are configured.',
  alerts: 'Open alerts',
  noAlerts: 'No alert is firing.',
  alertLine: (severity: string, rule: string, subject: string, since: string, acked?: string) =>
    `${severity} · ${rule} on ${subject}, firing since ${since}${acked ? ` · acknowledged by ${acked}` : ''}`,
  waiting: 'Waiting for your approval',
  noWaiting: 'Nothing is waiting for you.',
  requestLine: (id: string, action: string, target: string, by: string, expires: string) =>
    `${id}: ${action} ${target}, asked by ${by}; expires ${expires}`,
  moreRequests: (count: number) =>
    `${count} more ${count === 1 ? 'request waits' : 'requests wait'}: \`/queue pending\` lists them all.`,
  recent: 'Your recent actions',
  noRecent: 'You have not asked for or approved anything recently.',
  moreAlerts: (count: number) => `${count} more: \`/queue alerts\` lists them all.`,
  silences: 'Silences in force',
  silenceLine: (id: string, pattern: string, until: string, by: string, reason?: string) =>
    `${id}: ${pattern} until ${until}, by ${by}${reason ? ` · ${reason}` : ''}`,
  moreSilences: (count: number) => `${count} more: \`/queue silences\` lists them all.`,
};
