import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readChunk } from '../../src/archive/archive.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { killCliWhen, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { twoAdminsPurgeConfig } from '../helpers/purge-config.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/** Failed jobs written as BullMQ writes them (hash + failed zset by finishedOn); odd ones named `rare`. */
async function seedFailed(redis: Redis, base: string, count: number): Promise<void> {
  const now = Date.now();
  await redis.hset(`${base}meta`, 'opts.maxLenEvents', '10000', 'version', 'bullmq:5.0.0');
  for (let from = 0; from < count; from += 5000) {
    const pipeline = redis.pipeline();
    const zadd: (string | number)[] = [];
    for (let n = from; n < Math.min(count, from + 5000); n++) {
      const id = String(n + 1);
      pipeline.hset(
        base + id,
        'name',
        n % 2 ? 'rare' : 'send',
        'data',
        `{"n":${n}}`,
        'opts',
        '{"attempts":1}',
        'timestamp',
        String(now - count + n),
        'finishedOn',
        String(now - count + n),
        'failedReason',
        'boom',
      );
      zadd.push(now - count + n, id);
    }
    pipeline.zadd(`${base}failed`, ...zadd);
    await pipeline.exec();
  }
}

describe('a purge of part of a queue', () => {
  const redisUrl = testRedisUrl();
  let prefix: string;
  let redis: Redis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  const archiveDir = () => join(tmp.dir, 'archive');
  const as = (user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

  beforeEach(async () => {
    prefix = randomName('qs');
    redis = new Redis(redisUrl);
    tmp = tempDir('filtered-purge');
    config = writeConfigFile(tmp.dir, twoAdminsPurgeConfig(tmp.dir, bullmqSystem('hs', redisUrl, prefix)));
  });

  afterEach(async () => {
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  it('of a waiting list by --name takes only those jobs, and undo puts them back in their order', async () => {
    const queue = new Queue('events', { connection: connectionFor(redisUrl), prefix });
    try {
      await queue.addBulk(
        Array.from({ length: 60 }, (_, n) => ({ name: n % 3 === 0 ? 'rebuild' : 'ingest', data: { n } })),
      );
      const before = await redis.lrange(`${prefix}:events:wait`, 0, -1);
      const waiting = await queue.getWaiting(0, -1);
      const rebuild = waiting.filter((j) => j.name === 'rebuild');
      expect(rebuild).toHaveLength(20);
      const asked = await as('U0BOB', 'purge', 'hs/events', 'waiting', '--name', 'rebuild');
      expect(asked.code, asked.stdout + asked.stderr).toBe(0);
      expect(requestOf(asked).preview).toContain(
        'Selection --name rebuild: 20 of 60 match; 40 are left out.',
      );
      const done = await as('U0ERIN', 'approve', requestOf(asked).id);
      expect(requestOf(done).result).toMatchObject({ purged: 20, archived: 20 });
      expect((await queue.getWaiting(0, -1)).map((j) => j.name)).toEqual(Array(40).fill('ingest'));
      expect((await queue.getJobCounts('wait')).wait).toBe(40);

      const undo = await as('U0BOB', 'undo', requestOf(asked).id);
      const undone = await as('U0ERIN', 'approve', requestOf(undo).id);
      expect(requestOf(undone).result).toMatchObject({ restored: 20 });
      // Undo puts the purged jobs back where workers take next, oldest first, as a purge restores.
      const after = await redis.lrange(`${prefix}:events:wait`, 0, -1);
      expect(new Set(after)).toEqual(new Set(before));
      expect(after.slice(-20)).toEqual(before.filter((id) => rebuild.some((j) => j.id === id)));
    } finally {
      await queue.close();
    }
  }, 120_000);

  it('killed halfway is finished by the next command line with its filter: only the matches go, each once', async () => {
    const N = 40_000;
    const base = `${prefix}:events:`;
    await seedFailed(redis, base, N);
    const asked = requestOf(await as('U0BOB', 'purge', 'hs/events', 'failed', '--name', 'rare'));
    expect(asked.preview).toContain('Selection --name rare: 20,000 of 40,000 match');
    const archive = join(archiveDir(), asked.id);
    await killCliWhen(
      ['--config', config, '--user', 'U0ERIN', '--json', 'approve', asked.id],
      () => existsSync(archive) && readdirSync(archive).filter((f) => f.startsWith('chunk-')).length >= 1,
      'the filtered purge writing a chunk',
    );
    const next = await as('U0BOB', 'pending');
    expect(next.code, next.stdout + next.stderr).toBe(0);

    const left = await redis.zrange(`${base}failed`, 0, -1);
    expect(left).toHaveLength(N / 2);
    const names = await Promise.all(left.slice(0, 200).map((id) => redis.hget(base + id, 'name')));
    expect(new Set(names)).toEqual(new Set(['send']));
    const archived: string[] = [];
    for (const file of readdirSync(archive).filter((f) => f.startsWith('chunk-')))
      for (const line of await readChunk(archive, file))
        archived.push((JSON.parse(line) as { id: string }).id);
    expect(archived).toHaveLength(N / 2);
    expect(new Set(archived).size).toBe(N / 2);
    expect(archived.every((id) => Number(id) % 2 === 0)).toBe(true);
  }, 240_000);
});
