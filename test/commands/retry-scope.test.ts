import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorGroupKey } from '../../src/backends/error-groups.js';
import { ActionId, wordsForAction } from '../../src/blocks/action-ids.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { type BullmqLib, failEachWith, LIBS } from '../helpers/bullmq-libs.js';
import { jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * Issue 34 §1, §5; issue 36 §4; issue 38 §3: what the approver saw is the most that runs, error
 * groups group, "Retry this group" matches its group exactly, and "nothing matched" is not "empty".
 * Real BullMQ (both majors): a real worker fails each job with the error its data names.
 */
describe.each(LIBS.map((l) => [l.major, l.lib] as const))(
  'retry of BullMQ %i: the previewed jobs, and only they',
  (_major, lib: BullmqLib) => {
    const redisUrl = testRedisUrl();
    const queueName = 'dispatch-ios';
    const target = `pushizo/${queueName}`;
    let prefix: string;
    let tmp: ReturnType<typeof tempDir>;
    let config: string;
    const closers: (() => Promise<unknown>)[] = [];

    const as = (user: string, ...words: string[]) =>
      runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

    /** Adds one job per error and lets a real worker fail each with it; resolves once all are failed. */
    async function fail(errors: string[]): Promise<void> {
      const queue: InstanceType<BullmqLib['Queue']> = new lib.Queue(queueName, {
        connection: connectionFor(redisUrl),
        prefix,
      });
      closers.push(() => queue.close());
      await failEachWith(lib, queue, { url: redisUrl, prefix }, errors);
    }

    async function failedIds(): Promise<string[]> {
      const queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix });
      closers.push(() => queue.close());
      return (await queue.getFailed(0, -1)).map((j) => j.id!);
    }

    /** The params of the newest audit entry of `action` (the stored request's params are in it). */
    async function audited(action: string): Promise<{ params: Record<string, unknown> }> {
      const exported = await runCliInProcess(['--config', config, 'audit', 'export']);
      const entries = exported.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { action: string; params: Record<string, unknown> })
        .filter((entry) => entry.action === action);
      return entries[entries.length - 1]!;
    }

    async function failedReasons(): Promise<string[]> {
      const queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix });
      closers.push(() => queue.close());
      return (await queue.getFailed(0, -1)).map((j) => j.failedReason);
    }

    beforeEach(() => {
      prefix = randomName('rs');
      tmp = tempDir('retry-scope');
      config = writeConfigFile(tmp.dir, {
        store: `sqlite:${tmp.dir}/queue-ops.db`,
        roles: TEST_ROLES,
        approvals: { cliSameOsUser: 'allow' },
        policies: { retry: { role: 'operator', approvals: 1 } },
        systems: [bullmqSystem('pushizo', redisUrl, prefix)],
      });
    });

    afterEach(async () => {
      for (const close of closers.splice(0)) await close().catch(() => undefined);
      await deletePrefix(redisUrl, prefix);
      tmp?.remove();
    });

    it('previews 25, 340 failures arrive before the approval, and exactly the 25 previewed are retried; newSincePreview says 340 were left', async () => {
      await fail([...Array(20).fill('timeout'), ...Array(5).fill('db timeout after 30s')]);
      for (const filter of [[], ['--error', 'timeout']]) {
        const asked = await as('U0ALICE', 'retry', target, 'all', ...filter);
        expect(asked.code, asked.stdout + asked.stderr).toBe(0);
        const pending = requestOf(asked);
        expect(pending.preview).toContain('25 failed jobs');
        expect(pending.preview).toContain('This is exactly what will run: these 25 jobs');
        const previewed = await failedIds();
        expect(previewed).toHaveLength(25);

        // Before the second person approves: 40 "timeout" and 300 "network timeout", an error
        // that did not exist at the preview.
        await fail([...Array(40).fill('timeout'), ...Array(300).fill('network timeout')]);

        // Asked again meanwhile, it is still the same request (the pinned ids are not what it is about).
        const twice = await as('U0BOB', 'retry', target, 'all', ...filter);
        expect(jsonOf(twice).error?.code).toBe('DuplicateRequest');

        const approved = await as('U0CAROL', 'approve', pending.id);
        expect(approved.code, approved.stdout + approved.stderr).toBe(0);
        const done = requestOf(approved);
        expect(done.status).toBe('done');
        expect(done.result).toMatchObject({ retried: 25, skipped: 0, newSincePreview: 340 });
        expect(Object.keys(done.result!.ids as Record<string, string>).sort()).toEqual([...previewed].sort());
        expect(jsonOf(approved).message.text + JSON.stringify(jsonOf(approved).message.blocks)).toContain(
          '340 matching failures arrived after the preview and were left',
        );
        // The 25 went back (and the retry-less test has no worker: they wait); the 340 stay failed.
        const left = await failedReasons();
        expect(left).toHaveLength(340);
        expect(left.filter((r) => r === 'network timeout')).toHaveLength(300);

        // The next round starts from the 340 left: clear them for the filtered pass.
        const queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix });
        closers.push(() => queue.close());
        await queue.clean(0, 10_000, 'failed');
        await queue.drain();
        if (filter.length === 0)
          await fail([...Array(20).fill('timeout'), ...Array(5).fill('db timeout after 30s')]);
      }
    }, 240_000);

    it('groups 300 "FCM 503 Unavailable (token N)" as one, and the group button retries that group exactly, not every message containing its text', async () => {
      await fail([
        ...Array.from({ length: 300 }, (_, i) => `FCM 503 Unavailable (token ${i + 1})`),
        ...Array(5).fill('timeout'),
        ...Array.from({ length: 20 }, (_, i) => `db timeout after ${30 + i}s`),
      ]);
      const dlq = await as('U0ALICE', 'dlq', target);
      expect(dlq.code, dlq.stdout + dlq.stderr).toBe(0);
      const groups = (jsonOf(dlq).data as { topErrors: { error: string; count: number; example?: string }[] })
        .topErrors;
      expect(groups.map((g) => [g.error, g.count])).toEqual([
        ['FCM 503 Unavailable (token <n>)', 300],
        ['db timeout after <n>s', 20],
        ['timeout', 5],
      ]);
      expect(groups[0]!.example).toMatch(/^FCM 503 Unavailable \(token \d+\)$/);
      const text = JSON.stringify(jsonOf(dlq).message.blocks);
      expect(text).toContain('FCM 503 Unavailable (token &lt;n&gt;)');

      // The "timeout" group's button: 5 jobs, not the 25 whose message contains "timeout".
      const value = `${errorGroupKey('timeout')}/${target}`;
      expect(text).toContain(`"value":"${value}"`);
      const words = wordsForAction(ActionId.DlqRetryGroup, value)!;
      const asked = await as('U0ALICE', ...words);
      expect(asked.code, asked.stdout + asked.stderr).toBe(0);
      const pending = requestOf(asked);
      expect(pending.preview).toContain('retry pushizo/dispatch-ios: 5 failed jobs of 325');
      const approved = await as('U0CAROL', 'approve', pending.id);
      expect(requestOf(approved).result).toMatchObject({ retried: 5, newSincePreview: 0 });
      expect((await audited('action.retry')).params).toMatchObject({ filter: { group: 'timeout' } });
      const left = await failedReasons();
      expect(left).toHaveLength(320);
      expect(left.filter((r) => r === 'timeout')).toHaveLength(0);

      // Typed as text, the group matches exactly too: one preview lists the FCM group once.
      const fcm = await as('U0ALICE', 'retry', target, 'all', '--group', 'FCM 503 Unavailable (token <n>)');
      expect(fcm.code, fcm.stdout + fcm.stderr).toBe(0);
      const fcmPreview = requestOf(fcm).preview;
      expect(fcmPreview).toContain('300 failed jobs of 320');
      expect(fcmPreview).toContain(
        'Errors: 300× FCM 503 Unavailable (token <n>) (e.g. FCM 503 Unavailable (token',
      );
    }, 240_000);

    it('a filter that matches none of 12 failures says so and names the groups that do exist', async () => {
      await fail([...Array(6).fill('APNs 429 TooManyRequests'), ...Array(6).fill('APNs 410 Unregistered')]);
      const asked = await as('U0ALICE', 'retry', target, 'all', '--error', 'nomatchzzz');
      expect(asked.code).not.toBe(0);
      expect(jsonOf(asked).error?.code).toBe('NothingToRetry');
      expect(jsonOf(asked).error?.message).toBe(
        'None of the 12 failed jobs of `pushizo/dispatch-ios` matches --error nomatchzzz; nothing was changed. ' +
          'Error groups there: 6× APNs 410 Unregistered; 6× APNs 429 TooManyRequests (`/queue dlq pushizo/dispatch-ios`).',
      );
      const trConfig = writeConfigFile(
        tmp.dir,
        {
          store: `sqlite:${tmp.dir}/queue-ops.db`,
          locale: 'tr',
          roles: TEST_ROLES,
          approvals: { cliSameOsUser: 'allow' },
          policies: { retry: { role: 'operator', approvals: 1 } },
          systems: [bullmqSystem('pushizo', redisUrl, prefix)],
        },
        'tr.yml',
      );
      const tr = await runCliInProcess([
        '--config',
        trConfig,
        '--user',
        'U0ALICE',
        '--json',
        'retry',
        target,
        'all',
        '--error',
        'nomatchzzz',
      ]);
      expect(jsonOf(tr).error?.message).toContain(
        '12 başarısız işin hiçbiri --error nomatchzzz ile eşleşmiyor',
      );
    }, 120_000);
  },
);
