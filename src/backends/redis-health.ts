import type { Cluster, Redis } from 'ioredis';
import { scanWithin } from './bounded-scan.js';

/**
 * The Redis behind a system, as the runbooks read it with redis-cli (`INFO`, `MEMORY STATS`,
 * `SLOWLOG GET 10`, `--bigkeys`). Byte figures are numbers of bytes; times are ms since the epoch.
 * Nothing here carries a value: the slow log keeps a command's name and first key only, and the
 * key sample keeps names, types, sizes and lengths.
 */
export interface RedisHealth {
  version?: string;
  /** `role` of INFO replication (`master`, `slave`). */
  role?: string;
  uptimeSeconds?: number;
  memory: {
    used: number;
    peak: number;
    /** 0: no limit. */
    maxmemory: number;
    policy: string;
    fragmentationRatio: number | null;
    rss: number | null;
    /** MEMORY STATS: what the keys hold, and what Redis spends beside them (buffers, replication). */
    dataset: number | null;
    overhead: number | null;
  };
  clients: { connected: number; blocked: number; max: number | null };
  /** Newest first. `null` when the Redis user may not read it (SLOWLOG is an admin command). */
  slowlog: SlowlogEntry[] | null;
  /** Why the slow log could not be read, when it could not. */
  slowlogError?: string;
  keyspace: { db: number; keys: number; expires: number }[];
  /**
   * The biggest keys found, biggest first: every known queue key (measured on every read) and
   * the bounded sample of the rest.
   */
  bigKeys: BigKey[];
  sample: KeySample;
  /** Each known queue's keys that exist (its lists, sets, priority sub-lists) and their bytes. */
  queueKeys: QueueKeyUsage[];
  /** The bytes of the keys in `bigKeys` together: what the answer can account for. */
  explainedBytes: number;
  persistence: {
    /** `ok` or `err`: the last background save. */
    rdbLastStatus: string;
    /** `ok` or `err`; null when AOF is off. */
    aofLastStatus: string | null;
    aofEnabled: boolean;
    /** The last successful save (or, before any, when Redis started or loaded its file), ms since the epoch. */
    lastSaveAt: number | null;
    changesSinceLastSave: number | null;
    loading: boolean;
    /** Save points (`CONFIG save`) are not in INFO; `rdb_saves`… are counts only. */
    bgsaveInProgress: boolean;
  };
}

export interface SlowlogEntry {
  at: number;
  durationMicros: number;
  command: string;
  /** The first key the command names, when it names one; never another argument. */
  key: string | null;
}

export interface BigKey {
  key: string;
  type: string;
  bytes: number;
  /** Elements (list, set, zset, hash, stream) or bytes (string); null for other types. */
  length: number | null;
}

/** The keys a backend knows belong to one queue (they may not all exist). */
export interface KnownQueueKeys {
  queue: string;
  keys: string[];
}

/** `redis --json`'s `queueKeys`: what one queue's keys hold. */
export interface QueueKeyUsage {
  queue: string;
  /** How many of its known keys exist. */
  keys: number;
  bytes: number;
}

/** How much of the keyspace the key sample covered, and why it stopped. */
export interface KeySample {
  scanned: number;
  /** Keys in the database the sample walked (DBSIZE). */
  total: number;
  /** The walk covered the whole keyspace before a budget ran out. */
  complete: boolean;
  stoppedBy: 'done' | 'keys' | 'time';
  maxKeys: number;
  maxMillis: number;
}

/** What the key sample may spend: at most this many keys, and this much time of ours. */
export interface KeySampleBudget {
  maxKeys?: number;
  maxMillis?: number;
  /** Biggest keys listed. */
  top?: number;
  /** Keys already measured (the known queue keys): listed beside the sample's, each once. */
  known?: readonly SizedKey[];
}

const DEFAULT_BUDGET = { maxKeys: 10_000, maxMillis: 500, top: 10 } as const;
/** SCAN's COUNT and the size of each pipelined batch of TYPE / MEMORY USAGE / length reads. */
const SCAN_COUNT = 500;

/** `INFO`'s `field:value` lines as a map. */
export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (!line || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

/** `db0:keys=12,expires=3,avg_ttl=0` → one row per database. */
export function parseKeyspace(info: Map<string, string>): RedisHealth['keyspace'] {
  const rows: RedisHealth['keyspace'] = [];
  for (const [field, value] of info) {
    const db = /^db(\d+)$/.exec(field);
    if (!db) continue;
    const parts = new Map(value.split(',').map((kv) => kv.split('=') as [string, string]));
    rows.push({
      db: Number(db[1]),
      keys: Number(parts.get('keys') ?? 0),
      expires: Number(parts.get('expires') ?? 0),
    });
  }
  return rows.sort((a, b) => a.db - b.db);
}

/** `MEMORY STATS` is a flat array of name, value pairs. */
export function parseMemoryStats(reply: unknown): Map<string, unknown> {
  const stats = new Map<string, unknown>();
  if (!Array.isArray(reply)) return stats;
  for (let i = 0; i + 1 < reply.length; i += 2) stats.set(String(reply[i]), reply[i + 1]);
  return stats;
}

/**
 * Where a command's first key is among its arguments (0 = the command name). Commands not listed
 * name their key first; those with none are listed with -1. Anything after the key, values and
 * scripts included, is never kept: it can carry job data.
 */
const FIRST_KEY_AT: Record<string, number> = {
  eval: 3,
  evalsha: 3,
  eval_ro: 3,
  evalsha_ro: 3,
  fcall: 3,
  fcall_ro: 3,
  info: -1,
  ping: -1,
  multi: -1,
  exec: -1,
  discard: -1,
  script: -1,
  client: -1,
  config: -1,
  slowlog: -1,
  memory: -1,
  scan: -1,
  keys: -1,
  dbsize: -1,
  flushdb: -1,
  flushall: -1,
  debug: -1,
  publish: -1,
  subscribe: -1,
  psubscribe: -1,
  command: -1,
  auth: -1,
  hello: -1,
  select: -1,
  bgsave: -1,
  save: -1,
  bgrewriteaof: -1,
  cluster: -1,
  object: 2,
  xread: -1,
  xreadgroup: -1,
  blpop: 1,
  brpop: 1,
  bzpopmin: 1,
  bzpopmax: 1,
};

/** One `SLOWLOG GET` entry: `[id, unix seconds, micros, [args…], client addr, client name]`. */
export function parseSlowlog(reply: unknown): SlowlogEntry[] {
  if (!Array.isArray(reply)) return [];
  return reply.flatMap((entry) => {
    if (!Array.isArray(entry) || !Array.isArray(entry[3])) return [];
    const args = (entry[3] as unknown[]).map(String);
    const command = (args[0] ?? '').toLowerCase();
    let at = FIRST_KEY_AT[command] ?? 1;
    // EVAL <script> <numkeys> <key…>: no key when numkeys is 0.
    if (at === 3 && Number(args[2]) === 0) at = -1;
    // Redis shortens long argument lists with "... (N more arguments)": never a key.
    const key =
      at > 0 && args[at] !== undefined && !/^\.\.\. \(\d+ more arguments?\)$/.test(args[at]!)
        ? args[at]!
        : null;
    return [{ at: Number(entry[1]) * 1000, durationMicros: Number(entry[2]), command, key }];
  });
}

const number = (value: string | undefined): number | null =>
  value === undefined || value === '' || Number.isNaN(Number(value)) ? null : Number(value);

/** Reads the pipelined part's replies into the parts of `RedisHealth` they hold. */
export function healthFromReplies(
  infoText: string,
  memoryStats: unknown,
): Omit<RedisHealth, 'slowlog' | 'slowlogError' | 'bigKeys' | 'sample' | 'queueKeys' | 'explainedBytes'> {
  const info = parseInfo(infoText);
  const stats = parseMemoryStats(memoryStats);
  const statNumber = (name: string) => {
    const value = stats.get(name);
    return typeof value === 'number' ? value : number(value === undefined ? undefined : String(value));
  };
  return {
    ...(info.get('redis_version') ? { version: info.get('redis_version') } : {}),
    ...(info.get('role') ? { role: info.get('role') } : {}),
    ...(info.get('uptime_in_seconds') ? { uptimeSeconds: Number(info.get('uptime_in_seconds')) } : {}),
    memory: {
      used: Number(info.get('used_memory') ?? 0),
      peak: Number(info.get('used_memory_peak') ?? 0),
      maxmemory: Number(info.get('maxmemory') ?? 0),
      policy: info.get('maxmemory_policy') ?? 'unknown',
      fragmentationRatio: number(info.get('mem_fragmentation_ratio')),
      rss: number(info.get('used_memory_rss')),
      dataset: statNumber('dataset.bytes'),
      overhead: statNumber('overhead.total'),
    },
    clients: {
      connected: Number(info.get('connected_clients') ?? 0),
      blocked: Number(info.get('blocked_clients') ?? 0),
      max: number(info.get('maxclients')),
    },
    keyspace: parseKeyspace(info),
    persistence: persistenceFromInfo(info),
  };
}

/** `INFO persistence`'s fields an operator reads (also part of a whole `INFO`). */
export function persistenceFromInfo(info: Map<string, string>): RedisHealth['persistence'] {
  const aofEnabled = info.get('aof_enabled') === '1';
  const lastSave = number(info.get('rdb_last_save_time'));
  return {
    rdbLastStatus: info.get('rdb_last_bgsave_status') ?? 'unknown',
    aofLastStatus: aofEnabled ? (info.get('aof_last_write_status') ?? 'unknown') : null,
    aofEnabled,
    lastSaveAt: lastSave === null ? null : lastSave * 1000,
    changesSinceLastSave: number(info.get('rdb_changes_since_last_save')),
    loading: info.get('loading') === '1',
    bgsaveInProgress: info.get('rdb_bgsave_in_progress') === '1',
  };
}

/**
 * The monitor's read of persistence, once a tick: one `INFO persistence`, a few hundred bytes.
 * A failed background save or AOF write is the runbook's "data corruption" escalation.
 */
export async function readPersistence(client: Redis | Cluster): Promise<RedisHealth['persistence']> {
  return persistenceFromInfo(parseInfo(String(await client.info('persistence'))));
}

/**
 * What one whole `INFO` says that a diagnosis weighs (`why`): memory against its limit, writes
 * refused for memory (`errorstat_OOM`), evictions, the uptime (a restart) and what the last load
 * read, connections received and refused; and the read's own round trip.
 */
export interface RedisSignals {
  usedBytes: number;
  maxBytes: number;
  policy: string;
  uptimeSeconds: number | null;
  evictedKeys: number | null;
  /** Writes Redis refused for memory (`errorstat_OOM`). */
  oomRejections: number | null;
  connectionsReceived: number | null;
  rejectedConnections: number | null;
  connectedClients: number | null;
  loading: boolean;
  /** Keys the last load (restart) read from disk (`rdb_last_load_keys_loaded`, Redis 7+). */
  keysLoaded: number | null;
  /** The read's own round trip, in ms. */
  roundTripMs: number;
}

/** `errorstat_OOM:count=12` → 12 (Redis 6.2+); 0 when Redis has refused nothing, null before 6.2. */
function oomCount(info: Map<string, string>): number | null {
  const stat = info.get('errorstat_OOM');
  if (stat !== undefined) return Number(/count=(\d+)/.exec(stat)?.[1] ?? 0);
  return info.has('total_error_replies') ? 0 : null;
}

export function signalsFromInfo(info: Map<string, string>, roundTripMs: number): RedisSignals {
  return {
    usedBytes: Number(info.get('used_memory') ?? 0),
    maxBytes: Number(info.get('maxmemory') ?? 0),
    policy: info.get('maxmemory_policy') ?? 'unknown',
    uptimeSeconds: number(info.get('uptime_in_seconds')),
    evictedKeys: number(info.get('evicted_keys')),
    oomRejections: oomCount(info),
    connectionsReceived: number(info.get('total_connections_received')),
    rejectedConnections: number(info.get('rejected_connections')),
    connectedClients: number(info.get('connected_clients')),
    loading: info.get('loading') === '1',
    keysLoaded: number(info.get('rdb_last_load_keys_loaded')),
    roundTripMs,
  };
}

/** One `INFO` (every default section, a few KB), timed. */
export async function readRedisSignals(client: Redis | Cluster): Promise<RedisSignals> {
  const started = performance.now();
  const text = String(await client.info());
  return signalsFromInfo(parseInfo(text), performance.now() - started);
}

/**
 * What the monitor reads of the connection to a system's Redis every tick (issue 36 §2, "the
 * unstable network"): round trips of the bot's own connection, Redis' connection counters, and
 * the clients connected with their age. The persistence rides along (it was one INFO of its own).
 */
export interface NetworkReading {
  /** PING round trips of the bot's connection this tick, in ms, in the order sent. */
  rttMs: number[];
  persistence: RedisHealth['persistence'];
  /** `INFO stats`: connections accepted and refused since Redis started (counters). */
  connectionsReceived: number;
  rejectedConnections: number;
  /** `INFO clients`. */
  connectedClients: number;
  /**
   * `CLIENT LIST`: each client's id (Redis numbers connections in the order it accepts them, so
   * an id above the previous reading's highest is a connection opened since), name ('' when
   * none) and age in seconds; null when refused.
   */
  clients: { id: number; name: string; ageSeconds: number }[] | null;
}

/** PINGs a tick sends at most on a system's connection while its status is read. */
export const NETWORK_PINGS = 5;

/**
 * One network reading: a single pipelined round trip (INFO persistence, stats, clients and
 * CLIENT LIST) and, beside it, PINGs one after another while `during` (the status read the tick
 * makes anyway) is in flight: at least one, at most {@link NETWORK_PINGS}. So the tick waits for at
 * most one round trip more than its status read (the PING in flight when that ends). On the one
 * connection the first PING and the pipeline travel with the read and queue behind it at Redis;
 * when the read is one pipelined round trip (BullMQ) that is exactly one more, the PING sent once
 * it is answered, which alone times the link (test/escalation/tick-round-trips.test.ts counts them).
 */
export async function readNetwork(
  client: Redis | Cluster,
  during: Promise<unknown> = Promise.resolve(),
): Promise<NetworkReading> {
  let busy = true;
  void during.then(
    () => {
      busy = false;
    },
    () => {
      busy = false;
    },
  );
  const pings = (async () => {
    const rtts: number[] = [];
    do {
      const sent = performance.now();
      await client.ping();
      rtts.push(Math.round((performance.now() - sent) * 1000) / 1000);
    } while (busy && rtts.length < NETWORK_PINGS);
    return rtts;
  })();
  const replies = client.pipeline().info('persistence').info('stats').info('clients').client('LIST').exec();
  const [rttMs, results] = await Promise.all([pings, replies]);
  const reply = (i: number) => {
    const [error, value] = results?.[i] ?? [new Error('no reply'), null];
    if (error) throw error;
    return String(value);
  };
  const stats = parseInfo(reply(1));
  const clientsInfo = parseInfo(reply(2));
  const [listError, list] = results?.[3] ?? [new Error('no reply'), null];
  return {
    rttMs,
    persistence: persistenceFromInfo(parseInfo(reply(0))),
    connectionsReceived: Number(stats.get('total_connections_received') ?? 0),
    rejectedConnections: Number(stats.get('rejected_connections') ?? 0),
    connectedClients: Number(clientsInfo.get('connected_clients') ?? 0),
    // Managed Redis services may refuse CLIENT LIST; the rest still reads.
    clients: listError ? null : clientAges(String(list)),
  };
}

/** Each `CLIENT LIST` line's `id`, `name` and `age` (the only fields the monitor keeps). */
function clientAges(list: string): { id: number; name: string; ageSeconds: number }[] {
  const out: { id: number; name: string; ageSeconds: number }[] = [];
  for (const line of list.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const id = Number(/^id=(\d+)/.exec(line)?.[1] ?? 0);
    const name = / name=(\S*)/.exec(line)?.[1] ?? '';
    const age = Number(/ age=(\d+)/.exec(line)?.[1] ?? 0);
    out.push({ id, name, ageSeconds: age });
  }
  return out;
}

/** The command that gives a key's length, by its type; strings by their byte length. */
const LENGTH_OF: Record<string, (p: ReturnType<Redis['pipeline']>, key: string) => unknown> = {
  list: (p, key) => p.llen(key),
  set: (p, key) => p.scard(key),
  zset: (p, key) => p.zcard(key),
  hash: (p, key) => p.hlen(key),
  string: (p, key) => p.strlen(key),
  stream: (p, key) => p.xlen(key),
};

/**
 * A `--bigkeys`-like sample: SCAN batches until the keys or the time budget run out, each batch's
 * TYPE and MEMORY USAGE (Redis' default of 5 sampled elements per aggregate: O(1) for a list of a
 * million) pipelined, then the length of the biggest. Every command is O(1) or a bounded SCAN
 * step, so Redis is never held for longer than one step.
 */
export async function sampleBigKeys(
  client: Redis,
  budget: KeySampleBudget = {},
  now: () => number = Date.now,
): Promise<{ bigKeys: BigKey[]; sample: KeySample }> {
  const maxKeys = budget.maxKeys ?? DEFAULT_BUDGET.maxKeys;
  const maxMillis = budget.maxMillis ?? DEFAULT_BUDGET.maxMillis;
  const top = budget.top ?? DEFAULT_BUDGET.top;
  const total = await client.dbsize();
  const sized: { key: string; type: string; bytes: number }[] = [];
  const { scanned, stoppedBy } = await scanWithin(
    client,
    { maxKeys, maxMillis, count: SCAN_COUNT, now },
    async (batch) => {
      const pipeline = client.pipeline();
      for (const key of batch) {
        pipeline.type(key);
        pipeline.call('MEMORY', 'USAGE', key);
      }
      const replies = (await pipeline.exec()) ?? [];
      batch.forEach((key, i) => {
        const [typeError, type] = replies[2 * i] ?? [];
        const [usageError, bytes] = replies[2 * i + 1] ?? [];
        // A key that expired between SCAN and the read has type `none` and no usage.
        if (typeError || usageError || type === 'none' || bytes === null) return;
        sized.push({ key, type: String(type), bytes: Number(bytes) });
      });
      // Keep only the biggest few, so a big sample costs no memory here.
      if (sized.length > top * 4) {
        sized.sort((a, b) => b.bytes - a.bytes);
        sized.length = top;
      }
    },
  );
  const bigKeys = await withLengths(client, biggestOf([...(budget.known ?? []), ...sized], top));
  return {
    bigKeys,
    sample: { scanned, total, complete: stoppedBy === 'done', stoppedBy, maxKeys, maxMillis },
  };
}

export interface SizedKey {
  key: string;
  type: string;
  bytes: number;
}

/** The `top` biggest of `keys`, each key once, biggest first (ties by name). */
function biggestOf(keys: SizedKey[], top: number): SizedKey[] {
  const byKey = new Map<string, SizedKey>();
  for (const sized of keys) byKey.set(sized.key, sized);
  return [...byKey.values()].sort((a, b) => b.bytes - a.bytes || a.key.localeCompare(b.key)).slice(0, top);
}

/** One pipelined read of each key's length, by its type. */
async function withLengths(client: Redis, keys: SizedKey[]): Promise<BigKey[]> {
  const pipeline = client.pipeline();
  for (const { key, type } of keys) (LENGTH_OF[type] ?? ((p) => p.exists(key)))(pipeline, key);
  const lengths = (await pipeline.exec()) ?? [];
  return keys.map(({ key, type, bytes }, i) => {
    const [error, length] = lengths[i] ?? [];
    return { key, type, bytes, length: error || !LENGTH_OF[type] ? null : Number(length) };
  });
}

/**
 * TYPE and MEMORY USAGE of every known queue key, in pipelined batches of {@link SCAN_COUNT}
 * keys (each command O(1): MEMORY USAGE samples an aggregate's elements). A key that does not
 * exist is left out. Queue keys are the ones that grow in an incident, and a sample of a large
 * keyspace can miss every one of them.
 */
export async function measureQueueKeys(
  client: Redis,
  known: readonly KnownQueueKeys[],
): Promise<{ sized: SizedKey[]; queueKeys: QueueKeyUsage[] }> {
  const all = known.flatMap(({ queue, keys }) => [...new Set(keys)].map((key) => ({ queue, key })));
  const found = new Map<string, SizedKey & { queue: string }>();
  for (let start = 0; start < all.length; start += SCAN_COUNT) {
    const batch = all.slice(start, start + SCAN_COUNT);
    const pipeline = client.pipeline();
    for (const { key } of batch) {
      pipeline.type(key);
      pipeline.call('MEMORY', 'USAGE', key);
    }
    const replies = (await pipeline.exec()) ?? [];
    batch.forEach(({ queue, key }, i) => {
      const [typeError, type] = replies[2 * i] ?? [];
      const [usageError, bytes] = replies[2 * i + 1] ?? [];
      if (typeError || usageError || type === 'none' || bytes === null || bytes === undefined) return;
      found.set(key, { queue, key, type: String(type), bytes: Number(bytes) });
    });
  }
  const queueKeys = known.map(({ queue }) => {
    const mine = [...found.values()].filter((k) => k.queue === queue);
    return { queue, keys: mine.length, bytes: mine.reduce((sum, k) => sum + k.bytes, 0) };
  });
  return { sized: [...found.values()].map(({ key, type, bytes }) => ({ key, type, bytes })), queueKeys };
}

/**
 * The whole reading: one pipelined round trip (INFO, MEMORY STATS, SLOWLOG GET 10), every known
 * queue key measured (`knownQueueKeys`, a few pipelined round trips), then the bounded key sample. A reply the Redis user may not read (SLOWLOG is `@admin`) costs that part,
 * not the answer.
 */
export async function readRedisHealth(
  client: Redis | Cluster,
  budget: KeySampleBudget = {},
  now: () => number = Date.now,
  knownQueueKeys: readonly KnownQueueKeys[] = [],
): Promise<RedisHealth> {
  const redis = client as Redis;
  const pipeline = redis.pipeline();
  pipeline.info();
  pipeline.call('MEMORY', 'STATS');
  pipeline.call('SLOWLOG', 'GET', '10');
  const replies = ((await pipeline.exec()) ?? []) as [Error | null, unknown][];
  const [infoError, info] = replies[0] ?? [new Error('no reply to INFO'), ''];
  const memoryStats = replies[1]?.[1];
  const [slowlogError, slowlog] = replies[2] ?? [null, []];
  if (infoError) throw infoError;
  const base = healthFromReplies(String(info), memoryStats);
  const measured = await measureQueueKeys(redis, knownQueueKeys);
  const { bigKeys, sample } = await sampleBigKeys(redis, { ...budget, known: measured.sized }, now);
  return {
    ...base,
    queueKeys: measured.queueKeys,
    explainedBytes: bigKeys.reduce((sum, key) => sum + key.bytes, 0),
    slowlog: slowlogError ? null : parseSlowlog(slowlog),
    ...(slowlogError ? { slowlogError: slowlogError.message.split('\n', 1)[0] } : {}),
    bigKeys,
    sample,
  };
}
