import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { readChunk } from '../../src/archive/archive.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { killCliWhen, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { spawnBot, startLoopbackSlack } from '../helpers/loopback-slack.js';
import { archiveDirOf, twoAdminsPurgeConfig } from '../helpers/purge-config.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const N = 20_000;
const redisUrl = testRedisUrl();

/**
 * test/purge/kill-restart.test.ts has the next command line finish a killed purge; here the next
 * start is the bot's (`dist/main.js`, as `npm start` runs it): it finishes the purge from its
 * archive before answering anything, and every job ends up once in Redis or the archive.
 */
describe('a purge killed with SIGKILL halfway, then the bot starts', () => {
  const prefix = randomName('pb');
  const redis = new Redis(redisUrl);
  const tmp = tempDir('purgebot');
  const bots: Awaited<ReturnType<typeof spawnBot>>[] = [];
  let slack: Awaited<ReturnType<typeof startLoopbackSlack>> | undefined;

  afterAll(async () => {
    for (const bot of bots) bot.child.kill('SIGKILL');
    await slack?.close();
    redis.disconnect();
    await deletePrefix(redisUrl, prefix);
    tmp.remove();
  });

  it('is finished by the bot at start: the jobs once each in Redis or the archive, the request done, audited once', async () => {
    const dbFile = join(tmp.dir, 'queue-ops.db');
    const config = writeConfigFile(
      tmp.dir,
      twoAdminsPurgeConfig(tmp.dir, bullmqSystem('hs', redisUrl, prefix)),
    );
    await seedRawBullmqJobs(redis, { prefix, queue: 'events', count: N });
    const asked = requestOf(
      await runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', 'purge', 'hs/events']),
    );
    const archive = join(archiveDirOf(tmp.dir), asked.id);
    await killCliWhen(
      ['--config', config, '--user', 'U0ERIN', '--json', 'approve', asked.id],
      () => existsSync(archive) && readdirSync(archive).some((f) => f.startsWith('chunk-')),
      'the purge writing a chunk',
    );
    const state = () => {
      const db = new Database(dbFile, { readonly: true });
      try {
        return {
          purge: (db.prepare('SELECT state FROM purges WHERE id = ?').get(asked.id) as { state: string })
            .state,
          request: (
            db.prepare('SELECT status FROM approval_requests WHERE id = ?').get(asked.id) as {
              status: string;
            }
          ).status,
          recovered: (
            db.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE action = 'purge.recovered'").get() as {
              n: number;
            }
          ).n,
        };
      } finally {
        db.close();
      }
    };
    expect(state()).toMatchObject({ purge: 'archiving', request: 'executing' });
    const left = await redis.llen(`${prefix}:events:wait`);
    expect(left).toBeGreaterThan(0);

    slack = await startLoopbackSlack();
    const bot = await spawnBot(config, slack.url);
    bots.push(bot);
    await expect
      .poll(state, { timeout: 60_000, interval: 250 })
      .toEqual({ purge: 'done', request: 'done', recovered: 1 });

    const inRedis = await redis.lrange(`${prefix}:events:wait`, 0, -1);
    const archived: string[] = [];
    for (const file of readdirSync(archive).filter((f) => f.startsWith('chunk-')))
      for (const line of await readChunk(archive, file))
        archived.push((JSON.parse(line) as { id: string }).id);
    expect(inRedis).toEqual([]);
    expect(archived).toHaveLength(N);
    expect(new Set(archived).size).toBe(N);

    bot.child.kill('SIGTERM');
    expect((await bot.exited).code, bot.output()).toBe(0);
    const verify = await runCliInProcess(['--config', config, '--json', 'audit', 'verify']);
    expect(JSON.parse(verify.stdout).ok, verify.stdout).toBe(true);
    // Nothing left for a later start to finish or report again.
    expect(state().recovered).toBe(1);
  }, 120_000);
});
