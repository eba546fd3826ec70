import { Redis } from 'ioredis';
import { expect } from 'vitest';
import type { QueueBackend } from '../../src/backends/queue-backend.js';
import { NETWORK_PINGS } from '../../src/backends/redis-health.js';

/**
 * The contract's checks of a backend's Redis reads (`redisHealth`, `redisSignals`, `persistence`,
 * `results`, `network`):
 * each compares the backend's answer with what Redis itself says (INFO, CONFIG GET, DBSIZE, TYPE,
 * MEMORY USAGE, SCAN, TTL), read here with a connection of the test's own, never through
 * queue-ops' code. What a check changes on Redis (a memory limit, AOF), it puts back.
 */

/** Where a backend's Redis reads go, as the system's fixture knows it. */
export interface RedisUnderTest {
  /** The Redis, with its database, that `redisHealth`, `redisSignals` and `persistence` read (Celery: the broker). */
  url: string;
  /**
   * The system's result backend: its Redis and database, the prefix of a stored result's key (the
   * task id follows it), and when a stored value says its task finished (ms since the epoch).
   * Seeding a contract scenario's failures must store at least two results there.
   */
  results?: { url: string; keyPrefix: string; doneAt(value: string): number | null };
}

/** A backend under a Redis check: it has the method, and its fixture names its Redis and seeds it. */
export interface RedisCheckTarget {
  backend: QueueBackend;
  at: RedisUnderTest;
  /** Seeds the contract's scenario through the system's own client. */
  seed(): Promise<void>;
}

/** One check of a Redis read against Redis' own answers. */
export interface RedisCheck {
  /** What the check proves, as its test's title says it. */
  does: string;
  check(target: RedisCheckTarget): Promise<void>;
}

/** A memory limit far above what a test Redis uses (nothing is evicted), and a policy other than the default. */
const CHECK_LIMIT = { bytes: 1024 * 1024 * 1024, policy: 'volatile-lru' } as const;

/**
 * How far `used_memory` may move between the INFO read before the backend's read and the one after
 * (client buffers come and go): the backend's figure must lie within the two, give or take this.
 */
const USED_MEMORY_SLACK = 256 * 1024;

export const REDIS_CHECKS = {
  redisHealth: {
    does: "reads memory against a limit set for the check, clients and keys as Redis' own INFO, CONFIG GET and DBSIZE say them, and each big key as TYPE and MEMORY USAGE measure it",
    async check({ backend, at, seed }) {
      await seed();
      await withRedis(at.url, async (redis) => {
        const before = {
          bytes: await configOf(redis, 'maxmemory'),
          policy: await configOf(redis, 'maxmemory-policy'),
        };
        await redis.call(
          'CONFIG',
          'SET',
          'maxmemory',
          String(CHECK_LIMIT.bytes),
          'maxmemory-policy',
          CHECK_LIMIT.policy,
        );
        try {
          const infoBefore = await infoOf(redis);
          const health = await backend.redisHealth!();
          const info = await infoOf(redis);
          expect(health.memory).toMatchObject({ maxmemory: CHECK_LIMIT.bytes, policy: CHECK_LIMIT.policy });
          expect(health.memory.maxmemory).toBe(Number(info.get('maxmemory')));
          expect(health.memory.policy).toBe(info.get('maxmemory_policy'));
          const used = [Number(infoBefore.get('used_memory')), Number(info.get('used_memory'))];
          expect(health.memory.used).toBeGreaterThanOrEqual(Math.min(...used) - USED_MEMORY_SLACK);
          expect(health.memory.used).toBeLessThanOrEqual(Math.max(...used) + USED_MEMORY_SLACK);
          expect(health.memory.peak).toBeLessThanOrEqual(Number(info.get('used_memory_peak')));
          expect(health.clients.max).toBe(Number(await configOf(redis, 'maxclients')));
          await expectKeysAsRedisCounts(redis, at.url, health);
        } finally {
          await redis.call('CONFIG', 'SET', 'maxmemory', before.bytes, 'maxmemory-policy', before.policy);
        }
        // Put back, and read so.
        expect((await backend.redisHealth!()).memory).toMatchObject({
          maxmemory: Number(before.bytes),
          policy: before.policy,
        });
      });
    },
  },
  redisSignals: {
    does: "reads memory against a limit set for the check, evictions, refused connections and writes refused for memory as Redis' own INFO counts them, one refusal made for the check",
    async check({ backend, at }) {
      await withRedis(at.url, async (redis) => {
        const before = {
          bytes: await configOf(redis, 'maxmemory'),
          policy: await configOf(redis, 'maxmemory-policy'),
        };
        const refusedBefore = oomRefusals(await infoOf(redis));
        try {
          // One write refused for memory: a limit below what Redis uses, and no eviction, for one SET.
          await redis.call('CONFIG', 'SET', 'maxmemory', '1', 'maxmemory-policy', 'noeviction');
          const refused = await redis.set('contract:refused', 'x').catch((error: unknown) => error);
          await redis.call(
            'CONFIG',
            'SET',
            'maxmemory',
            String(CHECK_LIMIT.bytes),
            'maxmemory-policy',
            CHECK_LIMIT.policy,
          );
          expect(String(refused)).toMatch(/OOM/);
          const infoBefore = await infoOf(redis);
          const signals = await backend.redisSignals!();
          const info = await infoOf(redis);
          expect(oomRefusals(info)).toBe(refusedBefore + 1);
          expect(signals).toMatchObject({
            maxBytes: CHECK_LIMIT.bytes,
            policy: CHECK_LIMIT.policy,
            oomRejections: oomRefusals(info),
            evictedKeys: Number(info.get('evicted_keys')),
            rejectedConnections: Number(info.get('rejected_connections')),
            loading: info.get('loading') === '1',
          });
          for (const [field, read] of [
            ['used_memory', signals.usedBytes],
            ['uptime_in_seconds', signals.uptimeSeconds],
            ['total_connections_received', signals.connectionsReceived],
          ] as const) {
            const bounds = [Number(infoBefore.get(field)), Number(info.get(field))];
            const slack = field === 'used_memory' ? USED_MEMORY_SLACK : 0;
            expect(read, field).toBeGreaterThanOrEqual(Math.min(...bounds) - slack);
            expect(read, field).toBeLessThanOrEqual(Math.max(...bounds) + slack);
          }
        } finally {
          await redis.call('CONFIG', 'SET', 'maxmemory', before.bytes, 'maxmemory-policy', before.policy);
        }
      });
    },
  },
  persistence: {
    does: 'answers what INFO persistence says: after a BGSAVE, after a write since it, with AOF switched on, and off again',
    async check({ backend, at }) {
      await withRedis(at.url, async (redis) => {
        const read = () => expectPersistenceAsInfo(redis, backend);
        await bgsave(redis);
        const saved = await read();
        expect(saved).toMatchObject({ rdbLastStatus: 'ok', aofEnabled: false, bgsaveInProgress: false });
        await redis.set('contract:persistence', 'a write since the save');
        await redis.del('contract:persistence');
        const written = await read();
        expect(written.lastSaveAt).toBe(saved.lastSaveAt);
        expect(written.changesSinceLastSave!).toBeGreaterThanOrEqual(saved.changesSinceLastSave! + 2);
        await redis.call('CONFIG', 'SET', 'appendonly', 'yes');
        try {
          expect(await read()).toMatchObject({ aofEnabled: true, aofLastStatus: 'ok' });
        } finally {
          await redis.call('CONFIG', 'SET', 'appendonly', 'no');
        }
        expect(await read()).toMatchObject({ aofEnabled: false, aofLastStatus: null });
      });
    },
  },
  results: {
    does: 'counts the stored results, those without a TTL, their bytes and the oldest, as SCAN, TTL and MEMORY USAGE of the result backend read them',
    async check({ backend, at, seed }) {
      expect(at.results, 'a system with results names where its results are stored').toBeDefined();
      const store = at.results!;
      await seed();
      await withRedis(store.url, async (redis) => {
        const seeded = await scanAll(redis, `${store.keyPrefix}*`);
        expect(seeded.length).toBeGreaterThanOrEqual(2);
        // One result kept for ever, as one set by hand would be, and a key beside them that is no result.
        await redis.persist(seeded[0]!);
        await redis.set('contract:not-a-result', 'x');
        const reading = await backend.results!();
        const keys = await scanAll(redis, `${store.keyPrefix}*`);
        let withoutTtl = 0;
        let bytes = 0;
        let oldest: { at: number; id: string } | null = null;
        for (const key of keys) {
          if ((await redis.ttl(key)) === -1) withoutTtl++;
          bytes += Number(await redis.call('MEMORY', 'USAGE', key));
          const doneAt = store.doneAt((await redis.get(key)) ?? '');
          if (doneAt !== null && (oldest === null || doneAt < oldest.at))
            oldest = { at: doneAt, id: key.slice(store.keyPrefix.length) };
        }
        expect(withoutTtl).toBeGreaterThanOrEqual(1);
        const total = await redis.dbsize();
        expect(reading).toEqual({
          count: keys.length,
          withoutTtl,
          bytes,
          oldest,
          sample: { scanned: total, total, complete: true, stoppedBy: 'done' },
          estimate: null,
        });
      });
    },
  },
  network: {
    does: "reads the connection counters and clients as INFO stats and clients and CLIENT LIST say them, each client by the id Redis gave it, a connection opened since numbered above the last reading's, and the PINGs it timed while a read ran",
    async check({ backend, at }) {
      await withRedis(at.url, async (redis) => {
        await redis.call('CLIENT', 'SETNAME', 'contract-network');
        const ownId = Number(await redis.call('CLIENT', 'ID'));
        const before = await infoOf(redis);
        const reading = await backend.network!(backend.status());
        const after = await infoOf(redis);
        const between = (field: string, value: number) => {
          const [a, b] = [Number(before.get(field)), Number(after.get(field))];
          expect(value, field).toBeGreaterThanOrEqual(Math.min(a, b));
          expect(value, field).toBeLessThanOrEqual(Math.max(a, b));
        };
        between('total_connections_received', reading.connectionsReceived);
        between('rejected_connections', reading.rejectedConnections);
        between('connected_clients', reading.connectedClients);
        expect(reading.rttMs.length).toBeGreaterThanOrEqual(1);
        expect(reading.rttMs.length).toBeLessThanOrEqual(NETWORK_PINGS);
        for (const ms of reading.rttMs) expect(ms).toBeGreaterThanOrEqual(0);
        expect(reading.clients, 'CLIENT LIST answered').not.toBeNull();
        const own = reading.clients!.find((c) => c.id === ownId);
        expect(own, "the test's own connection, by the id Redis gave it").toMatchObject({
          name: 'contract-network',
        });
        const listed = clientList(String(await redis.call('CLIENT', 'LIST')));
        expect(own!.ageSeconds).toBeLessThanOrEqual(listed.get(ownId)!.age);
        // A connection opened since: numbered above every client of the last reading.
        const highest = Math.max(...reading.clients!.map((c) => c.id));
        await withRedis(at.url, async (fresh) => {
          const freshId = Number(await fresh.call('CLIENT', 'ID'));
          const next = await backend.network!();
          expect(freshId).toBeGreaterThan(highest);
          expect(next.clients!.some((c) => c.id === freshId)).toBe(true);
          expect(next.connectionsReceived).toBeGreaterThan(reading.connectionsReceived);
        });
      });
    },
  },
} satisfies Partial<Record<keyof QueueBackend, RedisCheck>>;

export type RedisAbility = keyof typeof REDIS_CHECKS;
export const redisAbilities = Object.keys(REDIS_CHECKS) as RedisAbility[];

/** The keyspace row, the key sample and each big key, as DBSIZE, TYPE, MEMORY USAGE and the key's length say. */
async function expectKeysAsRedisCounts(
  redis: Redis,
  url: string,
  health: Awaited<ReturnType<NonNullable<QueueBackend['redisHealth']>>>,
) {
  const dbsize = await redis.dbsize();
  const db = Number(new URL(url).pathname.slice(1) || 0);
  expect(health.keyspace.find((row) => row.db === db)?.keys).toBe(dbsize);
  expect(health.sample).toMatchObject({ total: dbsize, complete: true, stoppedBy: 'done' });
  expect(health.bigKeys.length).toBeGreaterThan(0);
  for (const big of health.bigKeys) expect(big).toEqual(await measureKey(redis, big.key));
  const sizes = health.bigKeys.map((key) => key.bytes);
  expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
  expect(health.explainedBytes).toBe(sizes.reduce((sum, n) => sum + n, 0));
}

/**
 * The backend's persistence, read between two `INFO persistence` of the test's own: equal to
 * them, the count of changes lying between the two (another client of the file's Redis may write).
 */
async function expectPersistenceAsInfo(redis: Redis, backend: QueueBackend) {
  const before = await infoOf(redis, 'persistence');
  const read = await backend.persistence!();
  const info = await infoOf(redis, 'persistence');
  const changes = (fields: Map<string, string>) => Number(fields.get('rdb_changes_since_last_save'));
  expect(read.changesSinceLastSave).toBeGreaterThanOrEqual(Math.min(changes(before), changes(info)));
  expect(read.changesSinceLastSave).toBeLessThanOrEqual(Math.max(changes(before), changes(info)));
  const aofEnabled = info.get('aof_enabled') === '1';
  expect(read).toEqual({
    rdbLastStatus: info.get('rdb_last_bgsave_status'),
    aofLastStatus: aofEnabled ? info.get('aof_last_write_status') : null,
    aofEnabled,
    lastSaveAt: Number(info.get('rdb_last_save_time')) * 1000,
    changesSinceLastSave: read.changesSinceLastSave,
    loading: info.get('loading') === '1',
    bgsaveInProgress: info.get('rdb_bgsave_in_progress') === '1',
  });
  return read;
}

/** A BGSAVE, waited for. */
async function bgsave(redis: Redis) {
  await redis.bgsave();
  for (let tries = 0; tries < 200; tries++) {
    if ((await infoOf(redis, 'persistence')).get('rdb_bgsave_in_progress') === '0') return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('BGSAVE did not finish in 5 s');
}

/** A key as Redis measures it: TYPE, MEMORY USAGE and its length by type (null where none). */
async function measureKey(redis: Redis, key: string) {
  const type = await redis.type(key);
  const lengthOf: Record<string, () => Promise<number>> = {
    list: () => redis.llen(key),
    set: () => redis.scard(key),
    zset: () => redis.zcard(key),
    hash: () => redis.hlen(key),
    string: () => redis.strlen(key),
    stream: () => redis.xlen(key),
  };
  const bytes = Number(await redis.call('MEMORY', 'USAGE', key));
  return { key, type, bytes, length: lengthOf[type] ? await lengthOf[type]() : null };
}

/** CLIENT LIST's lines by client id: each one's age in seconds, read here. */
function clientList(text: string): Map<number, { age: number }> {
  const clients = new Map<number, { age: number }>();
  for (const line of text.split('\n')) {
    const fields = new Map(line.split(' ').map((pair) => pair.split('=', 2) as [string, string]));
    if (fields.has('id')) clients.set(Number(fields.get('id')), { age: Number(fields.get('age')) });
  }
  return clients;
}

/** INFO's `field:value` lines, read here (not with queue-ops' parser). */
async function infoOf(redis: Redis, section?: string): Promise<Map<string, string>> {
  const text = section ? await redis.info(section) : await redis.info();
  const fields = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (line.startsWith('#') || colon < 0) continue;
    fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** Writes Redis refused for memory, as its error statistics count them (`errorstat_OOM:count=N`; none: 0). */
function oomRefusals(info: Map<string, string>): number {
  return Number(/count=(\d+)/.exec(info.get('errorstat_OOM') ?? '')?.[1] ?? 0);
}

async function configOf(redis: Redis, name: string): Promise<string> {
  const [, value] = (await redis.call('CONFIG', 'GET', name)) as [string, string];
  return value;
}

async function scanAll(redis: Redis, match: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

async function withRedis<T>(url: string, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}
