import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectionFor, deletePrefix, LIBS, randomName, waitFor } from '../helpers/bullmq-jobs.js';
import {
  jsonOf,
  ONE_SHELL_TWO_PEOPLE,
  requestOf,
  runCliInProcess,
  tempDir,
  writeConfig,
} from '../helpers/cli-run.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const ADMINS = ['roles:', '  viewer: ["*"]', '  operator: [U0ALICE]', '  admin: [U0BOB, U0ERIN]'];

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

describe.each(LIBS.map((l) => [l.major, l.lib] as const))(
  'purge and undo of a BullMQ %i.x queue from the command line',
  (major, lib) => {
    const redisUrl = testRedisUrl();
    const queueName = 'events';
    let prefix: string;
    let base: string;
    let redis: Redis;
    let queue: InstanceType<typeof lib.Queue>;
    let tmp: ReturnType<typeof tempDir>;
    let config: string;
    const target = () => `hs/${queueName}`;
    const as = (user: string, ...words: string[]) =>
      runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

    beforeEach(async () => {
      prefix = randomName(`qp${major}`);
      base = `${prefix}:${queueName}:`;
      redis = new Redis(redisUrl);
      queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix });
      tmp = tempDir(`purge${major}`);
      config = writeConfig(tmp.dir, `sqlite:${tmp.dir}/queue-ops.db`, [
        ...ADMINS,
        ...ONE_SHELL_TWO_PEOPLE,
        'archive:',
        `  dir: ${JSON.stringify(join(tmp.dir, 'archive'))}`,
        'systems:',
        '  - name: hs',
        '    type: bullmq',
        `    redis: ${JSON.stringify(redisUrl)}`,
        `    prefix: ${prefix}`,
      ]);
    });

    afterEach(async () => {
      await queue?.close();
      redis?.disconnect();
      await deletePrefix(redisUrl, prefix);
      tmp?.remove();
    });

    async function seed() {
      // Failed jobs first, through a real worker, then close it so the rest stays where it is.
      await queue.addBulk(
        [1, 2, 3].map((n) => ({ name: 'report.build', data: { n }, opts: { attempts: 1 } })),
      );
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
      await queue.addBulk(
        [1, 2].map((n) => ({ name: 'event.later', data: { n }, opts: { delay: 3_600_000 } })),
      );
    }

    it('purges every state into the archive, and undo brings back the exact keys; a real worker then runs the waiting jobs', async () => {
      await seed();
      const before = await snapshot(redis, base);
      expect(before.lists.wait).toHaveLength(301);

      const asked = await as('U0BOB', 'purge', target(), 'all');
      expect(asked.code, asked.stdout + asked.stderr).toBe(0);
      const pending = requestOf(asked);
      expect(pending).toMatchObject({ action: 'purge', status: 'pending' });
      expect(pending.preview).toContain('308 jobs will be archived');
      expect(pending.preview).toContain(join(tmp.dir, 'archive', pending.id));
      expect(pending.preview).not.toContain('tok');

      const approved = await as('U0ERIN', 'approve', pending.id);
      expect(approved.code, approved.stdout + approved.stderr).toBe(0);
      const done = requestOf(approved);
      expect(done.status).toBe('done');
      expect(done.result).toEqual({
        purged: 308,
        archived: 308,
        purgeId: pending.id,
        archivePath: join(tmp.dir, 'archive', pending.id),
      });
      expect(await queue.getJobCounts('wait', 'prioritized', 'delayed', 'failed')).toEqual({
        wait: 0,
        prioritized: 0,
        delayed: 0,
        failed: 0,
      });
      expect(await redis.exists(`${base}custom-1`, `${base}custom-1:logs`)).toBe(0);
      expect(readdirSync(done.result!.archivePath as string)).toContain('manifest.json');

      const undoAsked = requestOf(await as('U0BOB', 'undo', pending.id));
      expect(undoAsked).toMatchObject({ action: 'undo', status: 'pending' });
      const undone = await as('U0ERIN', 'approve', undoAsked.id);
      expect(undone.code, undone.stdout + undone.stderr).toBe(0);
      expect(requestOf(undone)).toMatchObject({
        status: 'done',
        result: { restored: 308, purgeId: pending.id },
      });
      expect(await snapshot(redis, base)).toEqual(before);

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
      const again = await as('U0BOB', 'undo', pending.id);
      expect(again.code).toBe(1);
      expect(jsonOf(again).error?.message).toContain('already undone');
    }, 120_000);

    it('undo leaves a job whose id exists again as it is, restores the others, and says how many were already there', async () => {
      await queue.add('event.ingest', { n: 0 }, { jobId: 'custom-1' });
      await queue.add('event.ingest', { n: 1 }, { jobId: 'custom-2' });
      const pending = requestOf(await as('U0BOB', 'purge', target()));
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
      await queue.addBulk([1, 2, 3].map((n) => ({ name: 'event.ingest', data: { n } })));
      const pending = requestOf(await as('U0BOB', 'purge', target()));
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
      await queue.addBulk([1, 2, 3].map((n) => ({ name: 'event.ingest', data: { n } })));
      const pending = requestOf(await as('U0BOB', 'purge', target()));
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
