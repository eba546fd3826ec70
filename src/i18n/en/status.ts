/**
 * Strings of `/queue status`, plus the units every read-path message uses. Arguments that came
 * from Redis or config arrive already escaped for mrkdwn.
 */
export const status = {
  title: 'Queue status',
  titleScoped: (scope: string) => `Queue status: ${scope}`,
  updated: (utc: string) => `Updated ${utc}`,
  columns: {
    queue: 'queue',
    waiting: 'waiting',
    active: 'active',
    delayed: 'delayed',
    prioritized: 'of which prio',
    failed: 'failed',
    oldest: 'oldest',
    flags: 'flags',
  },
  flags: {
    backlog: 'backlog',
    failures: 'failures',
    paused: 'paused',
    noWorkers: 'no workers',
  },
  typeLabel: { bullmq: 'BullMQ', celery: 'Celery' } as Record<string, string>,
  systemLine: (name: string, type: string, queues: number, flagged: number) =>
    `*${name}* · ${type} · ${queues === 1 ? '1 queue' : `${queues} queues`}` +
    (flagged > 0 ? ` · :warning: ${flagged} need${flagged === 1 ? 's' : ''} attention` : ''),
  noQueues: 'No queues found.',
  /** A Celery wait counted from the monitor's first sighting: a lower bound (`≥ 1h 33m`). */
  atLeast: (duration: string) => `≥ ${duration}`,
  /** The oldest cell of a queue where messages wait and nobody knows since when. */
  oldestUnknown: 'unknown',
  /** Under the table, when some ages are lower bounds: `queue` since `04:30`, … */
  oldestSeenSince: (items: string[], more: number) =>
    `≥: waiting at least that long: the monitor first saw the message at the head of ${items.join(', ')}${more > 0 ? ` and ${more} more` : ''} (Celery messages carry no enqueue time).`,
  oldestSeenItem: (queue: string, since: string) => `${queue} at ${since}`,
  oldestNeverSeen: (n: number) =>
    `Oldest age unknown on ${n === 1 ? '1 queue' : `${n} queues`}: no monitor sample has seen ${n === 1 ? 'its' : 'their'} head message yet (the monitor runs in the bot, or \`monitor --once\`).`,
  memory: (used: string, max: string | null, percent: number | null, policy: string, system: string) =>
    `Redis memory: ${used}${max ? ` of ${max}${percent !== null ? ` (${percent}%)` : ''}` : ', no limit'} · policy \`${policy}\` · more: \`/queue redis ${system}\``,
  warnings: {
    EvictionPolicy: (p: Record<string, string | number>) =>
      `:warning: maxmemory-policy is \`${p.policy ?? 'not noeviction'}\`: under memory pressure Redis may delete jobs. BullMQ needs \`noeviction\`.`,
    MemoryHigh: (p: Record<string, string | number>) =>
      `:warning: Redis memory is ${p.percent !== undefined ? `at ${p.percent}% of maxmemory` : 'close to maxmemory'}.`,
    WorkerInspectFailed: (p: Record<string, string | number>) =>
      `:warning: Workers could not be inspected${p.reason ? ` (${p.reason})` : ''}; worker figures may be incomplete.`,
    ResultBackendMissing: (p: Record<string, string | number>) =>
      p.reason
        ? `:warning: The result backend is not answering (${p.reason}): failures are not counted.`
        : ':information_source: No result backend configured: failures are not counted.',
    ThroughputUnattributed: (p: Record<string, string | number>) =>
      `:information_source: ${p.results ?? 'Some'} results finished lately name no queue (Celery's \`result_extended\` is off), so no queue's rate is known.`,
    PausedButConsumed: (p: Record<string, string | number>) =>
      `:warning: ${p.queue ?? 'A queue'} was paused through queue-ops, but ${p.consumers === 1 ? '1 worker consumes' : `${p.consumers ?? 'some'} workers consume`} it again (a worker restarted?), so its jobs run. Resume it to clear the pause, then pause it again if it should stay paused.`,
  } as Record<string, (p: Record<string, string | number>) => string>,
  unknownWarning: (code: string) => `:warning: ${code}`,
  workers: (count: number, running: number | null) =>
    `Workers: ${count === 0 ? 'none connected' : count}${running !== null && count > 0 ? ` · ${running} ${running === 1 ? 'task' : 'tasks'} running` : ''}`,
  unacked: (n: string) => `${n} unacked`,
  /**
   * Celery tasks in a retry loop (the runbook's `grep "Retry in" | uniq -c`), from the `retries`
   * header of queued and delivered messages; `sampled` is null when every message was read.
   */
  retryLoop: (retrying: string, tasks: string, sampled: string | null) =>
    `:repeat: Retry loop: ${retrying} task${retrying === '1' ? '' : 's'} waiting to run again after a retry: ${tasks}` +
    (sampled ? ` (in a sample of ${sampled} messages)` : ''),
  retryTask: (name: string, count: string, maxRetries: string) =>
    `${name} ×${count} (up to ${maxRetries} retr${maxRetries === '1' ? 'y' : 'ies'})`,
  systemError: (name: string, type: string, error: string) => `:x: *${name}* · ${type}: ${error}`,
  moreQueues: (
    n: number,
    counts: { failures: number; backlog: number; paused: number; noWorkers: number },
    hint: string,
  ) => {
    const parts = [
      counts.failures ? `${counts.failures} with failures` : '',
      counts.backlog ? `${counts.backlog} with backlog` : '',
      counts.paused ? `${counts.paused} paused` : '',
      counts.noWorkers ? `${counts.noWorkers} without workers` : '',
    ].filter(Boolean);
    return `… and ${n} more ${n === 1 ? 'queue' : 'queues'}: ${parts.length ? parts.join(', ') : 'none flagged'}; use \`${hint}\``;
  },
  queueHint: (system: string) => `/queue status ${system}/<queue>`,
  moreSystems: (n: number, failing: number, flagged: number) =>
    `… and ${n} more ${n === 1 ? 'system' : 'systems'}` +
    (failing || flagged
      ? `: ${[failing ? `${failing} not answering` : '', flagged ? `${flagged} with flagged queues` : ''].filter(Boolean).join(', ')}`
      : '') +
    '; use `/queue status <system>`',
  openDlq: (target: string) => `Open DLQ ${target}`,
  refresh: 'Refresh',
  fallback: (scope: string, systems: number, flagged: number, failing: number) =>
    `Queue status${scope ? ` for ${scope}` : ''}: ${systems} ${systems === 1 ? 'system' : 'systems'}, ` +
    `${flagged} ${flagged === 1 ? 'queue needs' : 'queues need'} attention` +
    (failing ? `, ${failing} not answering` : '') +
    '.',
  /** Units shared by every read-path message. */
  units: {
    bytes: ['B', 'KB', 'MB', 'GB', 'TB'],
    duration: (d: number, h: number, m: number, s: number) =>
      d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : m > 0 ? `${m}m ${s}s` : `${s}s`,
    ago: (duration: string) => `${duration} ago`,
    justNow: 'just now',
    inFuture: (duration: string) => `in ${duration}`,
    utc: (iso: string) => `${iso} UTC`,
  },
};
