/** Strings of `/queue redis <system>`. Keys and command names arrive already escaped for mrkdwn. */
export const redis = {
  usage: '/queue redis <system>',
  summary: 'the Redis behind a system: memory, clients, slow log, keyspace, biggest keys, persistence',
  title: (system: string) => `Redis of ${system}`,
  fallback: (system: string, used: string, clients: number) =>
    `Redis of ${system}: ${used} used, ${clients} clients`,
  server: (version: string | undefined, role: string | undefined, uptime: string | null) =>
    [version ? `Redis ${version}` : 'Redis', role, uptime ? `up ${uptime}` : null]
      .filter(Boolean)
      .join(' · '),
  memoryTitle: '*Memory*',
  memory: (used: string, peak: string, max: string | null, percent: number | null, policy: string) =>
    `used ${used} (peak ${peak}) · ${max ? `limit ${max}${percent !== null ? `, ${percent}%` : ''}` : 'no limit'} · policy \`${policy}\``,
  memoryDetail: (
    dataset: string | null,
    overhead: string | null,
    rss: string | null,
    fragmentation: string | null,
  ) =>
    [
      dataset ? `dataset ${dataset}` : null,
      overhead ? `overhead ${overhead}` : null,
      rss ? `RSS ${rss}` : null,
      fragmentation ? `fragmentation ${fragmentation}` : null,
    ]
      .filter(Boolean)
      .join(' · '),
  fragmentationHigh: (ratio: string) =>
    `:warning: fragmentation ${ratio}: Redis holds much more memory than its data (\`MEMORY PURGE\` or a restart gives it back).`,
  clientsTitle: '*Clients*',
  clients: (connected: number, blocked: number, max: number | null) =>
    `${connected} connected${max !== null ? ` of ${max}` : ''} · ${blocked} blocked (waiting in BRPOP/BZPOPMIN…)`,
  clientsNearLimit: (percent: number) =>
    `:warning: clients at ${percent}% of maxclients: new connections will soon be refused.`,
  slowlogTitle: '*Slow log* (newest first; command and first key only, never the other arguments)',
  slowlogLine: (at: string, duration: string, command: string, key: string | null) =>
    `${at} · ${duration} · \`${command}\`${key ? ` ${key}` : ''}`,
  slowlogEmpty: 'empty',
  slowlogDenied: (reason: string) => `not readable: ${reason}`,
  keyspaceTitle: '*Keyspace*',
  keyspaceLine: (db: number, keys: string, noTtlPercent: number) =>
    `db${db}: ${keys} keys, ${noTtlPercent}% without a TTL`,
  keyspaceEmpty: 'no keys',
  bigKeysTitle: (
    scanned: string,
    total: string,
    complete: boolean,
    stoppedBy: string,
    queues: number,
    queueKeys: string,
  ) =>
    `*Biggest keys* (${queues > 0 ? `all ${queueKeys} keys of the ${queues === 1 ? 'queue' : `${queues} queues`}, and ` : ''}a sample: ${complete ? `all ${total} keys` : `${scanned} of ${total} keys, stopped by the ${stoppedBy} budget`}; never values)`,
  /** What share of used memory the listed keys hold. */
  explained: (listed: number, bytes: string, percent: number, used: string) =>
    `The ${listed === 1 ? 'key' : `${listed} keys`} above hold ${bytes}: ${percent}% of the ${used} in use.`,
  budget: { keys: 'key', time: 'time', done: 'no' } as Record<string, string>,
  bigKeyLine: (key: string, type: string, bytes: string, length: string | null) =>
    `${key} · ${type} · ${bytes}${length !== null ? ` · ${length} ${type === 'string' ? 'bytes long' : 'elements'}` : ''}`,
  bigKeysNone: 'no keys sampled',
  persistenceTitle: '*Persistence*',
  persistence: (rdb: string, aof: string | null, lastSave: string | null, changes: string | null) =>
    [
      `last RDB save: ${rdb}`,
      aof === null ? 'AOF off' : `AOF last write: ${aof}`,
      lastSave ? `last save ${lastSave}` : null,
      changes !== null ? `${changes} changes since` : null,
    ]
      .filter(Boolean)
      .join(' · '),
  persistenceFailing:
    ':rotating_light: Redis could not write its data to disk: what it holds now may not survive a restart.',
  loading: ':hourglass: Redis is loading its data from disk: it answers LOADING until done.',
  snapshotOnly:
    'Snapshots only (no AOF): after a crash Redis comes back as of its last save; see docs/purge-and-undo.md for what that does to a purge.',
};
