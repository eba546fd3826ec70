import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { connectionFor, deletePrefix, randomName, waitFor } from '../helpers/bullmq-jobs.js';
import { type BullmqLib, LIBS } from '../helpers/bullmq-libs.js';
import {
  type CliRun,
  jsonOf,
  type RequestJson,
  requestOf,
  runCliInProcess,
  tempDir,
} from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { type FixtureLife, setUpPer } from '../helpers/hooks.js';
import { archiveDirOf, twoAdminsPurgeConfig } from '../helpers/purge-config.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();
const queueName = 'events';
const target = `hs/${queueName}`;

/** Every key of a queue that a purge and its undo touch, as Redis holds it, for exact comparison. */
async function snapshot(redis: Redis, base: string) {
  const lists = {
    wait: await redis.lrange(`${base}wait`, 0, -1),
    paused: await redis.lrange(`${base}paused`, 0, -1),
    prioritized: await redis.zrange(`${base}prioritized`, 0, -1, 'WITHSCORES'),
    delayed: await redis.zrange(`${base}delayed`, 0, -1, 'WITHSCORES'),
    failed: await redis.zrange(`${base}failed`, 0, -1, 'WITHSCORES'),
  };
  const ids = [
    ...lists.wait,
    ...lists.paused,
    ...[lists.prioritized, lists.delayed, lists.failed].flatMap((z) => z.filter((_, i) => i % 2 === 0)),
  ];
  const jobs: Record<string, { hash: Record<string, string>; logs: string[] }> = {};
  for (const id of ids)
    jobs[id] = {
      hash: await redis.hgetall(`${base}${id}`),
      logs: await redis.lrange(`${base}${id}:logs`, 0, -1),
    };
  return { lists, jobs };
}

/** The archive size a purge preview says ("about 5.6 kB", "about 1.2 MB"), in bytes. */
function bytesSaid(preview: string): number {
  const [, value, unit] = /about ([\d.]+) (kB|MB)/.exec(preview) ?? [];
  expect(value, preview).toBeDefined();
  return Number(value) * (unit === 'MB' ? 1_000_000 : 1000);
}

/** Bytes of every file of an archive directory, as it lies on disk. */
function archiveBytes(dir: string): number {
  return readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

/** One BullMQ queue of a test's own (`hs/events`), and a config in which Bob and Erin purge it. */
interface QueueFixture {
  prefix: string;
  /** The queue's key prefix, `<prefix>:events:`. */
  base: string;
  redis: Redis;
  queue: InstanceType<BullmqLib['Queue']>;
  tmp: ReturnType<typeof tempDir>;
  config: string;
  as(user: string, ...words: string[]): Promise<CliRun>;
}

/** Registers the hooks of a queue for each test, or of one for all the steps of a describe. */
function useQueue(major: number, lib: BullmqLib, per: FixtureLife): QueueFixture {
  const fx = {} as QueueFixture;
  const setUp = async () => {
    fx.prefix = randomName(`qp${major}`);
    fx.base = `${fx.prefix}:${queueName}:`;
    fx.redis = new Redis(redisUrl);
    fx.queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix: fx.prefix });
    fx.tmp = tempDir(`purge${major}`);
    fx.config = writeConfigFile(fx.tmp.dir, {
      ...twoAdminsPurgeConfig(fx.tmp.dir, bullmqSystem('hs', redisUrl, fx.prefix)),
      roles: { viewer: ['*'], operator: ['U0ALICE'], admin: ['U0BOB', 'U0ERIN'] },
    });
    fx.as = (user, ...words) => runCliInProcess(['--config', fx.config, '--user', user, '--json', ...words]);
  };
  const tearDown = async () => {
    await fx.queue?.close();
    fx.redis?.disconnect();
    await deletePrefix(redisUrl, fx.prefix);
    fx.tmp?.remove();
  };
  setUpPer(per, setUp, tearDown);
  return fx;
}

/** Jobs in every state: three failed (by a real worker), waiting ones (one with logs), prioritized, delayed. */
async function seed(lib: BullmqLib, { queue, prefix }: QueueFixture) {
  // Failed jobs first, through a real worker, then close it so the rest stays where it is.
  await queue.addBulk([1, 2, 3].map((n) => ({ name: 'report.build', data: { n }, opts: { attempts: 1 } })));
  const failer = new lib.Worker(
    queueName,
    async () => {
      throw new Error('upstream 502');
    },
    { connection: connectionFor(redisUrl), prefix },
  );
  await waitFor('three failures', async () => (await queue.getJobCounts('failed')).failed === 3);
  await failer.close();
  const job = await queue.add('event.ingest', { n: 0 }, { jobId: 'custom-1' });
  await job.log('first line');
  await job.log('second line');
  await queue.addBulk(
    Array.from({ length: 300 }, (_, n) => ({ name: 'event.ingest', data: { n: n + 1, secret: 'tok' } })),
  );
  await queue.addBulk([7, 8].map((n) => ({ name: 'event.vip', data: { n }, opts: { priority: n } })));
  await queue.addBulk([1, 2].map((n) => ({ name: 'event.later', data: { n }, opts: { delay: 3_600_000 } })));
}

describe.each(LIBS.map((l) => [l.major, l.lib] as const))(
  'purge of every state of a BullMQ %i.x queue from the command line, then its undo',
  (major, lib) => {
    const fx = useQueue(major, lib, 'describe');
    let before: Awaited<ReturnType<typeof snapshot>>;
    let pending: RequestJson;
    let estimated = 0;

    it('asks for approval with a preview of how many jobs are archived where, never their data', async () => {
      const { redis, base, as } = fx;
      await seed(lib, fx);
      before = await snapshot(redis, base);
      expect(before.lists.wait).toHaveLength(301);

      const asked = await as('U0BOB', 'purge', target, 'all');
      expect(asked.code, asked.stdout + asked.stderr).toBe(0);
      pending = requestOf(asked);
      expect(pending).toMatchObject({ action: 'purge', status: 'pending' });
      expect(pending.preview).toContain('308 jobs will be archived');
      expect(pending.preview).toContain(join(archiveDirOf(fx.tmp.dir), pending.id));
      expect(pending.preview).not.toContain('tok');
      estimated = bytesSaid(pending.preview);
    }, 60_000);

    it('purges every state into the archive once approved', async () => {
      const { redis, base, queue, as } = fx;
      const approved = await as('U0ERIN', 'approve', pending.id);
      expect(approved.code, approved.stdout + approved.stderr).toBe(0);
      const done = requestOf(approved);
      expect(done.status).toBe('done');
      expect(done.result).toEqual({
        purged: 308,
        newSincePreview: 0,
        archived: 308,
        purgeId: pending.id,
        archivePath: join(archiveDirOf(fx.tmp.dir), pending.id),
      });
      expect(await queue.getJobCounts('wait', 'prioritized', 'delayed', 'failed')).toEqual({
        wait: 0,
        prioritized: 0,
        delayed: 0,
        failed: 0,
      });
      expect(await redis.exists(`${base}custom-1`, `${base}custom-1:logs`)).toBe(0);
      expect(readdirSync(done.result!.archivePath as string)).toContain('manifest.json');
      // The preview's "about … kB" is the archive as written (chunks and manifest), within a sane factor.
      const written = archiveBytes(done.result!.archivePath as string);
      expect(estimated / written, `estimated ${estimated} B, written ${written} B`).toBeGreaterThan(0.6);
      expect(estimated / written, `estimated ${estimated} B, written ${written} B`).toBeLessThan(1.6);
    }, 60_000);

    it('undo brings back the exact keys', async () => {
      const { redis, base, as } = fx;
      const undoAsked = requestOf(await as('U0BOB', 'undo', pending.id));
      expect(undoAsked).toMatchObject({ action: 'undo', status: 'pending' });
      const undone = await as('U0ERIN', 'approve', undoAsked.id);
      expect(undone.code, undone.stdout + undone.stderr).toBe(0);
      expect(requestOf(undone)).toMatchObject({
        status: 'done',
        result: { restored: 308, purgeId: pending.id },
      });
      expect(await snapshot(redis, base)).toEqual(before);
    }, 60_000);

    it('a real worker then runs the waiting jobs', async () => {
      const { queue, prefix } = fx;
      const ran: string[] = [];
      const worker = new lib.Worker(
        queueName,
        async (job) => {
          ran.push(job.name);
        },
        { connection: connectionFor(redisUrl), prefix },
      );
      try {
        await waitFor('the worker to run the restored jobs', async () => ran.length >= 303);
        expect(ran.filter((name) => name === 'event.vip')).toHaveLength(2);
        // Delayed jobs are back in the delayed set, waiting for their time.
        expect((await queue.getJobCounts('delayed')).delayed).toBe(2);
      } finally {
        await worker.close();
      }
    }, 60_000);

    it('undo asked again is refused: already undone', async () => {
      const again = await fx.as('U0BOB', 'undo', pending.id);
      expect(again.code).toBe(1);
      expect(jsonOf(again).error?.message).toContain('already undone');
    });
  },
);

describe.each(LIBS.map((l) => [l.major, l.lib] as const))(
  'purge and undo of a BullMQ %i.x queue from the command line',
  (major, lib) => {
    const fx = useQueue(major, lib, 'test');

    it('undo leaves a job whose id exists again as it is, restores the others, and says how many were already there', async () => {
      const { queue, redis, base, as } = fx;
      await queue.add('event.ingest', { n: 0 }, { jobId: 'custom-1' });
      await queue.add('event.ingest', { n: 1 }, { jobId: 'custom-2' });
      const pending = requestOf(await as('U0BOB', 'purge', target));
      expect(requestOf(await as('U0ERIN', 'approve', pending.id)).result).toMatchObject({ purged: 2 });
      await queue.add('event.new', { n: 9 }, { jobId: 'custom-2' });
      const undo = requestOf(await as('U0BOB', 'undo', pending.id));
      expect(undo.preview).toContain('is left as it is and counted, never put back twice');
      const approved = await as('U0ERIN', 'approve', undo.id);
      expect(approved.code, approved.stdout).toBe(0);
      expect(requestOf(approved)).toMatchObject({
        status: 'done',
        result: { restored: 1, alreadyThere: 1, purgeId: pending.id },
      });
      expect(JSON.stringify(jsonOf(approved).message.blocks)).toContain(
        `Restored 1 job of purge ${pending.id}. 1 was already in Redis under the same id and was left as it was, not put back twice.`,
      );
      expect(await redis.hget(`${base}custom-2`, 'name')).toBe('event.new');
      expect(await redis.hget(`${base}custom-1`, 'name')).toBe('event.ingest');
      expect((await redis.lrange(`${base}wait`, 0, -1)).sort()).toEqual(['custom-1', 'custom-2']);
    }, 60_000);

    it('undo refuses to restore from an archive file that no longer matches its manifest, naming the file', async () => {
      const { queue, as } = fx;
      await queue.addBulk([1, 2, 3].map((n) => ({ name: 'event.ingest', data: { n } })));
      const pending = requestOf(await as('U0BOB', 'purge', target));
      const result = requestOf(await as('U0ERIN', 'approve', pending.id)).result!;
      const chunk = join(String(result.archivePath), 'chunk-000001.jsonl.gz');
      expect(existsSync(chunk)).toBe(true);
      writeFileSync(chunk, 'not the archive any more');
      const refused = await as('U0BOB', 'undo', pending.id);
      expect(refused.code).toBe(1);
      expect(jsonOf(refused).error?.message).toContain('chunk-000001.jsonl.gz');
      expect(jsonOf(refused).error?.message).toContain('sha256 mismatch');
      expect((await queue.getJobCounts('wait')).wait).toBe(0);
    }, 60_000);

    it('an archive file changed between the undo request and its approval is refused when it runs, nothing restored', async () => {
      const { queue, as } = fx;
      await queue.addBulk([1, 2, 3].map((n) => ({ name: 'event.ingest', data: { n } })));
      const pending = requestOf(await as('U0BOB', 'purge', target));
      const result = requestOf(await as('U0ERIN', 'approve', pending.id)).result!;
      const undo = requestOf(await as('U0BOB', 'undo', pending.id));
      expect(undo.status).toBe('pending');
      writeFileSync(join(String(result.archivePath), 'chunk-000001.jsonl.gz'), 'not the archive any more');
      const refused = await as('U0ERIN', 'approve', undo.id);
      expect(refused.code).toBe(1);
      expect(jsonOf(refused).error?.message).toContain('sha256 mismatch');
      expect((await queue.getJobCounts('wait')).wait).toBe(0);
      // Still undoable once the file is right again: refused, not left half-way.
      const again = await as('U0BOB', 'undo', pending.id);
      expect(jsonOf(again).error?.message).toContain('sha256 mismatch');
    }, 60_000);
  },
);
