import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messages } from '../../src/i18n/index.js';
import { jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { writeConfigFile } from '../helpers/config-file.js';
import { purgeAloneConfig } from '../helpers/purge-config.js';
import { BULLMQ_FAULT_BACKEND, CELERY_FAULT_BACKEND } from './fault-backends.js';
import { auditEntries, expectOneLineNaming, FaultyRedis, storedRequest, until } from './fault-fixture.js';

const N = 20_000;

/**
 * An undo of 20,000 jobs whose Redis is SIGKILLed halfway through putting them back. The user is
 * told in one line how far it got; asked again meanwhile, it says the undo goes on by itself; once
 * Redis is back (from its append-only file), the next command line finishes it from the marker
 * Redis kept with the jobs: the queue is exactly what was purged (Celery byte for byte: its
 * messages have no id, so a message pushed twice could not be told apart), and the audit and the
 * request say what happened.
 */
describe.each([BULLMQ_FAULT_BACKEND, CELERY_FAULT_BACKEND])(
  'a $kind undo whose Redis is killed halfway',
  (kind) => {
    let redis: FaultyRedis;
    let client: Redis;
    let tmp: ReturnType<typeof tempDir>;
    let config: string;
    let before: string[];
    let purgeId: string;
    const target = `${kind.system}/${kind.queue}`;
    const as = (...words: string[]) =>
      runCliInProcess(['--config', config, '--user', 'U0BOB', '--json', ...words]);

    beforeAll(async () => {
      redis = await FaultyRedis.start();
      client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      client.on('error', () => {});
      tmp = tempDir(`fault-undo-${kind.system}`);
      config = writeConfigFile(tmp.dir, purgeAloneConfig(tmp.dir, kind.systemConfig(redis.url)));
      await kind.seed(client, N);
      before = await client.lrange(kind.list, 0, -1);
      expect(before).toHaveLength(N);
      const purged = requestOf(await as('purge', target));
      expect(purged.status).toBe('done');
      purgeId = purged.id;
      expect(await client.llen(kind.list)).toBe(0);
    }, 120_000);

    afterAll(async () => {
      client?.disconnect();
      await redis?.stop();
      tmp?.remove();
    });

    it('says how far it got, goes on by itself once Redis is back, and puts every job back exactly once', async () => {
      const undoing = as('undo', purgeId);
      await until('the first jobs are back', async () => (await client.llen(kind.list)) > 0);
      await redis.kill();
      const interrupted = await undoing;
      expect(interrupted.code).toBe(1);
      const line = expectOneLineNaming(interrupted, kind.system);
      expect(line).toMatch(
        new RegExp(
          `^Redis for \`${kind.system}\` stopped answering during the undo of \`${purgeId}\` \\(connection (lost|refused)\\): [\\d,]+ of 20,000 jobs of \`${target.replace('/', '\\/')}\` are back, the rest are still in the archive\\.`,
        ),
      );
      const undoRequest = requestOf(interrupted);
      expect(undoRequest.status).toBe('failed');

      // Asked again while Redis is away: no second undo, the user is told this one goes on by itself.
      const again = await as('undo', purgeId);
      expect(again.code).toBe(1);
      expect(jsonOf(again).message.text).toContain(messages('en').purge.undoResuming);

      await redis.restart();
      const leftAtRestart = await client.llen(kind.list);
      expect(leftAtRestart).toBeGreaterThan(0);
      expect(leftAtRestart).toBeLessThan(N);

      const next = await as('pending');
      expect(next.code, next.stdout + next.stderr).toBe(0);
      expect(await client.lrange(kind.list, 0, -1)).toEqual(before);

      const audit = (await auditEntries(config)).filter((e) => e.target === target && /undo/.test(e.action));
      expect(audit.map((e) => [e.actorId, e.action, e.outcome, e.error ?? null])).toEqual([
        ['U0BOB', 'action.undo', 'failed', 'UndoInterrupted'],
        ['queue-ops', 'undo.recovered', 'finished', null],
      ]);
      expect(audit[1]!.params).toMatchObject({ purge: purgeId, request: undoRequest.id, restored: N });
      expect(storedRequest(tmp.dir, undoRequest.id)).toMatchObject({
        status: 'done',
        result: { restored: N, purgeId },
      });
      const verified = await as('audit', 'verify');
      expect(jsonOf(verified).ok).toBe(true);
      // Done: the marker kept in Redis for a resume is gone with it.
      expect(await client.keys('*queue-ops:undo:*')).toEqual([]);
    }, 300_000);
  },
);
