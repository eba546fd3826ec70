/** Strings of `/queue workers`. Arguments from Redis arrive already escaped for mrkdwn. */
export const workers = {
  /** A worker's details as its backend reports them: BullMQ's CLIENT LIST, Celery's stats. */
  details: {
    addr: (address: string) => `from ${address}`,
    connectedFor: (duration: string) => `connected ${duration}`,
    concurrency: (n: string) => `concurrency ${n}`,
    processes: (n: string) => `${n} pool processes`,
    resized: (processes: string, started: string) =>
      `${processes} pool processes (started with concurrency ${started})`,
    pid: (pid: string) => `pid ${pid}`,
  },
  uptime: (duration: string) => `up ${duration}`,
  title: 'Workers',
  updated: (utc: string) => `Updated ${utc}`,
  argsNote: 'Task arguments are never shown.',
  systemLine: (name: string, type: string, count: number, running: number | null) =>
    `*${name}* · ${type} · ${count === 1 ? '1 worker' : `${count} workers`}` +
    (running !== null ? ` · ${running} ${running === 1 ? 'task' : 'tasks'} running` : ''),
  none: 'No workers connected.',
  queues: (list: string) => `queues: ${list}`,
  allQueues: 'all queues',
  moreQueues: (n: number) => `+${n} more`,
  reserved: (n: number, next: string | null) => `${n} reserved${next ? ` (next: ${next})` : ''}`,
  running: (n: number) => `${n} running`,
  idle: (duration: string) => `idle ${duration}`,
  longest: (task: string, duration: string | null) =>
    duration ? `longest: ${task} for ${duration}` : `running: ${task}`,
  moreWorkers: (n: number) => `… and ${n} more ${n === 1 ? 'worker' : 'workers'}, less busy.`,
  systemError: (name: string, type: string, error: string) => `:x: *${name}* · ${type}: ${error}`,
  moreSystems: (n: number) =>
    `… and ${n} more ${n === 1 ? 'system' : 'systems'}; use \`/queue workers <system>\``,
  refresh: 'Refresh',
  fallback: (systems: number, workers: number) =>
    `Workers: ${workers} across ${systems} ${systems === 1 ? 'system' : 'systems'}.`,
};
