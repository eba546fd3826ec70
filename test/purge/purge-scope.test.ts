import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { type BullmqLib, failEachWith, LIBS } from '../helpers/bullmq-libs.js';
import { type CliRun, jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { twoAdminsPurgeConfig } from '../helpers/purge-config.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * Issue 34 §1 and §6, issue 38 §3 for purge: every purge deletes at most the previewed count of
 * each state, oldest first, and says what arrived since and was left; an undo of a filtered
 * purge restores exactly what it took; `--keep` that keeps everything says so. Real BullMQ, both
 * majors.
 */
describe.each(LIBS.map((l) => [l.major, l.lib] as const))(
  'purge of a BullMQ %i.x queue: the previewed count is the most that goes',
  (major, lib: BullmqLib) => {
    const redisUrl = testRedisUrl();
    const queueName = 'events';
    const target = `hs/${queueName}`;
    let prefix: string;
    let base: string;
    let redis: Redis;
    let queue: InstanceType<BullmqLib['Queue']>;
    let tmp: ReturnType<typeof tempDir>;
    let config: string;
    const as = (user: string, ...words: string[]): Promise<CliRun> =>
      runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

    /** One job per error, each failed by a real worker with it. */
    async function fail(errors: string[]): Promise<void> {
      await failEachWith(lib, queue, { url: redisUrl, prefix }, errors);
    }

    beforeEach(() => {
      prefix = randomName(`ps${major}`);
      base = `${prefix}:${queueName}:`;
      redis = new Redis(redisUrl);
      queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix });
      tmp = tempDir(`purge-scope${major}`);
      config = writeConfigFile(tmp.dir, twoAdminsPurgeConfig(tmp.dir, bullmqSystem('hs', redisUrl, prefix)));
    });

    afterEach(async () => {
      await queue?.close();
      redis?.disconnect();
      await deletePrefix(redisUrl, prefix);
      tmp?.remove();
    });

    it('previews 25 waiting, 340 more arrive, and the approval deletes the 25 oldest only; 340 are reported left', async () => {
      const first = await queue.addBulk(
        Array.from({ length: 25 }, (_, n) => ({ name: 'event.ingest', data: { n } })),
      );
      const asked = await as('U0BOB', 'purge', target, 'waiting');
      expect(asked.code, asked.stdout + asked.stderr).toBe(0);
      const pending = requestOf(asked);
      expect(pending.preview).toContain('25 jobs will be archived, then deleted');
      // The request's own id, not a placeholder the approver has to fill in.
      expect(pending.preview).toContain(`Undo with \`/queue undo ${pending.id}\`.`);
      expect(pending.preview).toContain('This is exactly what will run: at most these 25 jobs');

      const later = await queue.addBulk(
        Array.from({ length: 340 }, (_, n) => ({ name: 'event.ingest', data: { n: 100 + n } })),
      );
      const approved = await as('U0ERIN', 'approve', pending.id);
      expect(approved.code, approved.stdout + approved.stderr).toBe(0);
      const done = requestOf(approved);
      expect(done.result).toMatchObject({ purged: 25, archived: 25, newSincePreview: 340 });
      expect(JSON.stringify(jsonOf(approved).message)).toContain(
        '340 jobs arrived after the preview and were left',
      );
      const left = await redis.lrange(`${base}wait`, 0, -1);
      expect(left.sort()).toEqual(later.map((j) => j.id!).sort());
      for (const job of first) expect(await redis.exists(`${base}${job.id}`)).toBe(0);
    }, 120_000);

    it('an undo of a filtered purge restores exactly what it took, and leaves what arrived after the preview', async () => {
      await fail([...Array(8).fill('APNs 429 TooManyRequests'), ...Array(4).fill('APNs 410 Unregistered')]);
      const before = await redis.zrange(`${base}failed`, 0, -1);
      const asked = requestOf(await as('U0BOB', 'purge', target, 'failed', '--error', '429'));
      expect(asked.preview).toContain('8 jobs will be archived, then deleted');
      // Six more that match, after the preview.
      await fail(Array(6).fill('APNs 429 TooManyRequests'));
      const withNew = await redis.zrange(`${base}failed`, 0, -1);
      const arrived = withNew.filter((id) => !before.includes(id));
      expect(arrived).toHaveLength(6);

      const hashes = Object.fromEntries(
        await Promise.all(withNew.map(async (id) => [id, await redis.hgetall(`${base}${id}`)] as const)),
      );
      const approved = await as('U0ERIN', 'approve', asked.id);
      expect(approved.code, approved.stdout + approved.stderr).toBe(0);
      expect(requestOf(approved).result).toMatchObject({ purged: 8, archived: 8, newSincePreview: 6 });
      const afterPurge = await redis.zrange(`${base}failed`, 0, -1);
      // The 8 previewed (the oldest matches) went; the 4 others and the 6 new stayed.
      const taken = withNew.filter((id) => !afterPurge.includes(id));
      expect(taken).toHaveLength(8);
      expect(taken.every((id) => before.includes(id))).toBe(true);
      expect(afterPurge.filter((id) => arrived.includes(id))).toHaveLength(6);

      const undo = requestOf(await as('U0BOB', 'undo', asked.id));
      const undone = await as('U0ERIN', 'approve', undo.id);
      expect(undone.code, undone.stdout + undone.stderr).toBe(0);
      expect(requestOf(undone).result).toMatchObject({ restored: 8, alreadyThere: 0, purgeId: asked.id });
      // Exactly what it took is back, as it was; nothing else moved.
      expect((await redis.zrange(`${base}failed`, 0, -1)).sort()).toEqual([...withNew].sort());
      for (const id of taken) expect(await redis.hgetall(`${base}${id}`)).toEqual(hashes[id]);
    }, 120_000);

    it('--keep 1000 of 12 failures says 12 ≤ 1000 so nothing is deleted, not that the state is empty', async () => {
      await fail(Array(12).fill('APNs 429 TooManyRequests'));
      const run = await as('U0BOB', 'purge', target, 'failed', '--keep', '1000');
      expect(run.code).not.toBe(0);
      expect(jsonOf(run).error).toEqual({
        code: 'AlreadyInState',
        message:
          '`hs/events` holds 12 failed jobs, and 12 ≤ 1,000 (--keep 1000): all are kept, so nothing would be deleted; nothing was changed.',
      });
      const none = await as('U0BOB', 'purge', target, 'failed', '--error', 'nomatchzzz');
      expect(jsonOf(none).error?.message).toBe(
        'None of the 12 failed jobs of `hs/events` matches --error nomatchzzz; nothing was changed.',
      );
      expect((await queue.getJobCounts('failed')).failed).toBe(12);
    }, 120_000);
  },
);
