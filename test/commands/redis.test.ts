import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRedisHealth } from '../../src/backends/redis-health.js';
import type { RedisHealthData } from '../../src/commands/redis.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, celerySystem, writeConfigFile } from '../helpers/config-file.js';
import { connectionFor, waitFor } from './fixture.js';

/**
 * `redis <system>`: the runbooks' INFO / MEMORY STATS / SLOWLOG / --bigkeys, through the real
 * command line against a Redis of the test's own (its config is changed: slow log, save dir).
 */
let redis: PrivateRedis;
let client: Redis;
let dir: { dir: string; remove(): void };
let config: string;

beforeAll(async () => {
  redis = await startPrivateRedis();
  client = new Redis(redis.url);
  dir = tempDir('redis-verb');
  config = writeConfigFile(dir.dir, {
    store: `sqlite:${join(dir.dir, 'q.db')}`,
    systems: [
      bullmqSystem('pushizo', redis.url, 'hs'),
      celerySystem('zeus', redis.url, { queues: ['celery'] }),
      // Port 1: nothing listens there, unlike a free port another test's Redis may take meanwhile.
      bullmqSystem('gone', 'redis://127.0.0.1:1'),
    ],
  });
  const queue = new Queue('dispatch-ios', { connection: connectionFor(redis.url), prefix: 'hs' });
  await queue.addBulk(
    Array.from({ length: 50 }, (_, i) => ({ name: 'send', data: { token: `device-${i}` } })),
  );
  await queue.close();
  // A list far bigger than anything else: the sample must put it first, with its length.
  await client.rpush(
    'celery',
    ...Array.from({ length: 5_000 }, (_, i) => `{"id":"task-${i}","pad":"${'x'.repeat(100)}"}`),
  );
  await client.set('short-lived', 'v', 'EX', 3600);
}, 60_000);

afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
  dir?.remove();
});

async function redisJson(system: string, extra: string[] = []) {
  const run = await runCliInProcess(['--config', config, '--json', ...extra, 'redis', system]);
  return { run, out: jsonOf(run) };
}

describe('/queue redis <system>', () => {
  it('reports memory, clients, keyspace and persistence as numbers of bytes and counts', async () => {
    const { run, out } = await redisJson('pushizo');
    expect(run.code).toBe(0);
    const data = out.data as unknown as RedisHealthData;
    expect(data.memory.used).toBeGreaterThan(0);
    expect(data.memory.peak).toBeGreaterThanOrEqual(data.memory.used);
    expect(data.memory).toMatchObject({ maxmemory: 0, policy: 'noeviction' });
    expect(typeof data.memory.fragmentationRatio).toBe('number');
    expect(data.memory.dataset).toBeGreaterThan(0);
    expect(data.clients.connected).toBeGreaterThanOrEqual(1);
    expect(data.clients).toHaveProperty('blocked');
    expect(data.clients.max).toBe(10_000);
    const info = await client.info('keyspace');
    const keys = Number(/db0:keys=(\d+)/.exec(info)![1]);
    expect(data.keyspace).toEqual([{ db: 0, keys, expires: 1 }]);
    expect(data.persistence).toMatchObject({ rdbLastStatus: 'ok', aofLastStatus: null });
    expect(Date.parse(data.persistence.lastSaveAt ?? '')).not.toBeNaN();
    expect(out.message.text).toContain('Redis of pushizo');
  });

  it('lists the biggest keys of a sample with type, bytes and length, never a value', async () => {
    const { run, out } = await redisJson('zeus');
    const data = out.data as unknown as RedisHealthData;
    expect(data.bigKeys[0]).toMatchObject({ key: 'celery', type: 'list', length: 5_000 });
    expect(data.bigKeys[0]!.bytes).toBeGreaterThan(500_000);
    expect(data.sample).toMatchObject({ complete: true, stoppedBy: 'done' });
    expect(data.sample.scanned).toBe(data.sample.total);
    expect(run.stdout).not.toContain('task-1');
    expect(run.stdout).not.toContain('device-');
  });

  it('says the key sample is partial when its key budget runs out, and how much it covered', async () => {
    const health = await readRedisHealth(client, { maxKeys: 20 });
    expect(health.sample).toMatchObject({ scanned: 20, complete: false, stoppedBy: 'keys' });
    expect(health.sample.total).toBeGreaterThan(20);
    expect(health.bigKeys.length).toBeLessThanOrEqual(10);
  });

  it('shows the slow log with each command and its first key, never the other arguments', async () => {
    await client.config('SET', 'slowlog-log-slower-than', '0');
    try {
      await client.set('hs:secret-holder', 'password=hunter2');
      await client.eval('return 1', 1, 'hs:script-key', 'api_key=abc123');
      await client.eval('return 2', 0, 'no-key-arg');
    } finally {
      await client.config('SET', 'slowlog-log-slower-than', '10000');
    }
    const { run, out } = await redisJson('pushizo');
    const slowlog = (out.data as unknown as RedisHealthData).slowlog!;
    expect(slowlog.length).toBeLessThanOrEqual(10);
    expect(slowlog).toContainEqual(expect.objectContaining({ command: 'set', key: 'hs:secret-holder' }));
    expect(slowlog).toContainEqual(expect.objectContaining({ command: 'eval', key: 'hs:script-key' }));
    expect(slowlog).toContainEqual(expect.objectContaining({ command: 'eval', key: null }));
    for (const secret of ['hunter2', 'abc123', 'no-key-arg', 'return 1'])
      expect(run.stdout).not.toContain(secret);
  });

  it('flags a Redis that could not save its data to disk (the runbook’s "data corruption")', async () => {
    // Redis saves to a temporary file, then renames it over dump.rdb: a directory there fails it.
    const blocker = join(redis.dir, 'dump.rdb');
    mkdirSync(blocker);
    try {
      await client.bgsave();
      await waitFor('the failed save', async () =>
        /rdb_last_bgsave_status:err/.test(await client.info('persistence')),
      );
      const { out } = await redisJson('pushizo');
      expect((out.data as unknown as RedisHealthData).persistence.rdbLastStatus).toBe('err');
      const text = await runCliInProcess(['--config', config, 'redis', 'pushizo']);
      expect(text.stdout).toContain('could not write its data to disk');
    } finally {
      rmSync(blocker, { recursive: true, force: true });
    }
  });

  it('answers in Turkish when the config says so', async () => {
    const trDir = tempDir('redis-verb-tr');
    const trConfig = writeConfigFile(trDir.dir, {
      store: `sqlite:${join(trDir.dir, 'q.db')}`,
      locale: 'tr',
      systems: [bullmqSystem('pushizo', redis.url, 'hs')],
    });
    const run = await runCliInProcess(['--config', trConfig, 'redis', 'pushizo']);
    expect(run.stdout).toContain('pushizo Redis’i');
    expect(run.stdout).toContain('Anahtar alanı');
    trDir.remove();
  });

  it('links to itself from the memory line of status', async () => {
    const run = await runCliInProcess(['--config', config, 'status', 'pushizo']);
    expect(run.stdout).toContain('/queue redis pushizo');
  });

  it('answers in one line for a system that does not exist, a missing system, and a Redis that is down', async () => {
    const unknown = await redisJson('pushzio');
    expect(unknown.run.code).toBe(1);
    expect(unknown.out.error).toMatchObject({ code: 'UnknownSystem' });
    expect(unknown.out.error!.message).toContain('pushizo');

    const missing = await runCliInProcess(['--config', config, 'redis']);
    expect(missing.code).toBe(2);
    expect(missing.stdout.trim().split('\n')).toHaveLength(1);
    expect(missing.stdout).toContain('/queue redis <system>');

    const down = await redisJson('gone');
    expect(down.run.code).toBe(1);
    expect(down.out.error).toMatchObject({ code: 'RedisUnavailable' });
    expect(down.run.stdout + down.run.stderr).not.toMatch(/\n\s+at /);
  });
});
