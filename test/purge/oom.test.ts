import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PURGE_DELETE } from '../../src/backends/bullmq/scripts.js';
import { DELETE_MESSAGES } from '../../src/backends/celery/purge.js';
import { runScript } from '../../src/backends/lua.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, celerySystem, writeConfigFile } from '../helpers/config-file.js';
import { twoAdminsPurgeConfig } from '../helpers/purge-config.js';

const N = 20_000;

describe('purge on a Redis at maxmemory with noeviction', () => {
  let server: PrivateRedis;
  let redis: Redis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;

  beforeAll(async () => {
    // A Redis of its own: its maxmemory is set just above what it uses.
    server = await startPrivateRedis();
    redis = new Redis(server.url);
    tmp = tempDir('oom');
    config = writeConfigFile(
      tmp.dir,
      twoAdminsPurgeConfig(
        tmp.dir,
        bullmqSystem('hs', server.url, 'hs'),
        celerySystem('zeus', `${server.url}/1`, { queues: ['celery'] }),
      ),
    );
  }, 30_000);

  /**
   * maxmemory just above what Redis uses now, then 8 kB values until a write is refused: Redis
   * would then hover at its limit (a refused command frees its own buffer, so the next small write
   * may pass); taking 16 kB off the limit keeps it refusing, the state a purge must work in.
   */
  async function fillToLimit() {
    const used = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    await redis.config('SET', 'maxmemory', String(used + 64 * 1024));
    const filler = 'x'.repeat(8 * 1024);
    for (let i = 0; i < 10_000; i++) {
      const refused = await redis.set(`filler:${Date.now()}:${i}`, filler).then(
        () => false,
        (error: Error) => /OOM/.test(error.message),
      );
      if (refused) {
        // Still above what the data used at the start, but no longer hovering: every write that
        // needs memory is refused until something is freed.
        await redis.config('SET', 'maxmemory', String(used + 48 * 1024));
        return;
      }
    }
    throw new Error('Redis never reached its maxmemory');
  }

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
    tmp?.remove();
  });

  it('archives and deletes every job although Redis refuses writes that need memory', async () => {
    await seedRawBullmqJobs(redis, { prefix: 'hs', queue: 'events', count: N });
    const celery = new Redis(`${server.url}/1`);
    await celery.sadd('_kombu.binding.celery', 'celery\x06\x16\x06\x16celery');
    const messages = Array.from({ length: 2000 }, (_, n) =>
      JSON.stringify({
        body: Buffer.from(`[[${n}],{},{}]`).toString('base64'),
        headers: { task: 'tasks.add', id: `t-${n}` },
      }),
    );
    for (let i = 0; i < messages.length; i += 500)
      await celery.lpush('celery', ...messages.slice(i, i + 500));

    // The requests are created (they live in the store, not in this Redis) before it fills up.
    const bull = requestOf(
      await runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', 'purge', 'hs/events']),
    );
    const zeus = requestOf(
      await runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', 'purge', 'zeus/celery']),
    );

    await fillToLimit();
    await expect(redis.set('probe', 'x')).rejects.toThrow(/OOM/);
    await expect(redis.eval('#!lua\nreturn 1', 0)).rejects.toThrow(/OOM|allow-oom/i);

    const bullDone = await runCliInProcess([
      '--config',
      config,
      '--user',
      'U0ERIN',
      '--json',
      'approve',
      bull.id,
    ]);
    expect(bullDone.code, bullDone.stdout + bullDone.stderr).toBe(0);
    expect(requestOf(bullDone).result).toMatchObject({ purged: N, archived: N });
    expect(await redis.llen('hs:events:wait')).toBe(0);
    expect(await redis.exists('hs:events:1', `hs:events:${N}`)).toBe(0);

    // The purge freed memory (UNLINK frees in the background): bring Redis to its limit again.
    await new Promise((r) => setTimeout(r, 300));
    await fillToLimit();
    const zeusDone = await runCliInProcess([
      '--config',
      config,
      '--user',
      'U0ERIN',
      '--json',
      'approve',
      zeus.id,
    ]);
    expect(zeusDone.code, zeusDone.stdout + zeusDone.stderr).toBe(0);
    expect(requestOf(zeusDone).result).toMatchObject({ purged: 2000, archived: 2000 });
    expect(await celery.llen('celery')).toBe(0);
    celery.disconnect();
  }, 120_000);

  it('deletes a batch that is no longer the tail (a LIFO job pushed behind it) although Redis refuses writes that need memory', async () => {
    await redis.config('SET', 'maxmemory', '0');
    await seedRawBullmqJobs(redis, { prefix: 'hs', queue: 'lifo', count: 10 });
    await redis.rpush('hs:lifo:wait', 'urgent');
    await fillToLimit();
    await expect(redis.set('probe', 'x')).rejects.toThrow(/OOM/);
    // The five next after the LIFO job, tail first, as the walk read them before it came.
    const flags = await runScript(
      redis,
      PURGE_DELETE,
      ['hs:lifo:wait'],
      ['list', 'hs:lifo:', '1', '2', '3', '4', '5'],
    );
    expect(flags).toEqual([1, 1, 1, 1, 1]);
    expect(await redis.lrange('hs:lifo:wait', 0, -1)).toEqual(['10', '9', '8', '7', '6', 'urgent']);
    expect(await redis.exists('hs:lifo:1', 'hs:lifo:5')).toBe(0);
  }, 60_000);

  it('deletes Celery messages behind one kombu restored at the tail although Redis refuses writes that need memory', async () => {
    await redis.config('SET', 'maxmemory', '0');
    const message = (n: number) =>
      JSON.stringify({ headers: { id: `t-${n}` }, properties: { delivery_tag: `${n}` } });
    await redis.lpush('restored-q', ...Array.from({ length: 10 }, (_, n) => message(n)));
    await redis.rpush('restored-q', message(99));
    await fillToLimit();
    await expect(redis.set('probe', 'x')).rejects.toThrow(/OOM/);
    const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
    const flags = await runScript(
      redis,
      DELETE_MESSAGES,
      ['restored-q'],
      [0, 1, 2].map((n) => sha1(message(n))),
    );
    expect(flags).toEqual([1, 1, 1]);
    expect(await redis.lrange('restored-q', -2, -1)).toEqual([message(3), message(99)]);
    expect(await redis.llen('restored-q')).toBe(8);
  }, 60_000);
});
