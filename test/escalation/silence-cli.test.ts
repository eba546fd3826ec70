import { Queue } from 'bullmq';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli as runCliHere } from '../../src/transports/cli/run.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { jsonOf, runCli, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { backlogRule, bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { fakeSlack, kindOf } from './fake-slack.js';

/** `silence`, `silences`, `unsilence` and `ack all` on the command line, with their `--json`. */
describe('silences on the command line', () => {
  const redisUrl = testRedisUrl();
  let tmp: ReturnType<typeof tempDir>;
  let config: string;

  /** A directory of its own with `pushizo` (BullMQ, nothing under its prefix) and the usual roles. */
  const setUp = () => {
    tmp = tempDir('silence');
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: TEST_ROLES,
      systems: [bullmqSystem('pushizo', redisUrl, 'nothing-here')],
    });
  };
  const tearDown = () => tmp.remove();
  /** The same config in Turkish, beside it. */
  const trConfig = () =>
    writeConfigFile(
      tmp.dir,
      {
        store: `sqlite:${tmp.dir}/queue-ops.db`,
        roles: TEST_ROLES,
        locale: 'tr',
        systems: [bullmqSystem('pushizo', redisUrl, 'nothing-here')],
      },
      'tr.yml',
    );

  const as = (user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

  describe('silence, silences and unsilence in turn', () => {
    let silence: Record<string, unknown>;
    beforeAll(setUp);
    afterAll(tearDown);

    it('silence makes a silence of the pattern for the duration, with its reason and who made it', async () => {
      // pushizo has no queue yet: `--force` sets the silence for queues that do not exist yet.
      const made = jsonOf(
        await as('U0ALICE', 'silence', 'pushizo/dispatch-*', '2h', '--force', 'provider', 'outage'),
      );
      expect(made.ok).toBe(true);
      silence = (made.data as { silence: Record<string, unknown> }).silence;
      expect(silence).toMatchObject({
        pattern: 'pushizo/dispatch-*',
        reason: 'provider outage',
        createdBy: 'U0ALICE',
        liftedBy: null,
      });
      expect(Date.parse(String(silence.expiresAt)) - Date.parse(String(silence.createdAt))).toBe(
        2 * 3_600_000,
      );
    });

    it('silences, in a separate process, reads it back from the store', async () => {
      const listed = await runCli(['--config', config, '--json', 'silences']);
      expect(listed.code).toBe(0);
      expect(jsonOf(listed).data).toEqual({ silences: [silence] });
    });

    it('unsilence lifts it, naming who did', async () => {
      const lifted = jsonOf(await as('U0CAROL', 'unsilence', String(silence.id)));
      expect(lifted.data).toMatchObject({ changed: true, silence: { id: silence.id, liftedBy: 'U0CAROL' } });
    });

    it('a lifted silence is no longer listed', async () => {
      expect(jsonOf(await as('U0ALICE', 'silences')).data).toEqual({ silences: [] });
    });

    it('silence, silences and unsilence are each audited', async () => {
      const audit = jsonOf(await as('U0BOB', 'audit'));
      const actions = JSON.stringify(audit);
      for (const verb of ['command.silence', 'command.silences', 'command.unsilence'])
        expect(actions).toContain(verb);
    });
  });

  describe('bad input to silence is answered in one line naming what is valid', () => {
    beforeAll(setUp);
    afterAll(tearDown);

    it('a word that is no duration is answered with what a duration is', async () => {
      const bad = await as('U0ALICE', 'silence', 'pushizo/dispatch-*', 'forever');
      expect(bad.code).not.toBe(0);
      expect(jsonOf(bad).message.text).toBe(
        '`forever` is not a duration. Valid: a duration like 30m, 2h or 1d (at most 7d).',
      );
    });

    it('a duration over the 7d maximum is called that, not "not a duration" (issue 38 §6)', async () => {
      const long = jsonOf(await as('U0ALICE', 'silence', 'pushizo', '30d'));
      expect(long.message.text).toBe(
        '`30d` is longer than the 7d maximum. Valid: a duration like 30m, 2h or 1d (at most 7d).',
      );
      const tr = jsonOf(
        await runCliInProcess([
          '--config',
          trConfig(),
          '--user',
          'U0ALICE',
          '--json',
          'snooze',
          'a-1',
          '30d',
        ]),
      );
      expect(tr.message.text).toBe(
        '`30d` en fazla 7d olan sınırdan uzun. Geçerli: 30m, 2h ya da 1d gibi bir süre (en fazla 7d).',
      );
    });

    it('snooze without a duration is answered with a sentence and the usage', async () => {
      expect(jsonOf(await as('U0ALICE', 'snooze', 'a-1')).message.text).toBe(
        'Say for how long, e.g. 30m, 2h or 1d (at most 7d). Usage: `/queue snooze <alert-id> <duration>`',
      );
      const tr = jsonOf(
        await runCliInProcess(['--config', trConfig(), '--user', 'U0ALICE', '--json', 'snooze', 'a-1']),
      );
      expect(tr.message.text).toBe(
        'Ne kadar süre olacağını yazın, ör. 30m, 2h ya da 1d (en fazla 7d). Kullanım: `/queue snooze <alarm-id> <süre>`',
      );
    });

    it('silence without words is answered with its usage', async () => {
      const missing = jsonOf(await as('U0ALICE', 'silence'));
      expect(missing.message.text).toMatch(
        /^Name what to silence and for how long. Usage: `\/queue silence /,
      );
    });

    it('a viewer may not silence', async () => {
      const viewer = jsonOf(await as('U0NOBODY', 'silence', 'pushizo', '1h'));
      expect(viewer.ok).toBe(false);
      expect(viewer.error?.code).toBe('Forbidden');
    });
  });

  describe('a pattern that matches no queue (issue 38 §3)', () => {
    const prefix = randomName('typo');
    beforeAll(async () => {
      tmp = tempDir('silence-typo');
      const system = bullmqSystem('pushizo', redisUrl, prefix);
      config = writeConfigFile(tmp.dir, {
        store: `sqlite:${tmp.dir}/queue-ops.db`,
        roles: TEST_ROLES,
        systems: [system],
      });
      writeConfigFile(
        tmp.dir,
        { store: `sqlite:${tmp.dir}/queue-ops.db`, roles: TEST_ROLES, locale: 'tr', systems: [system] },
        'tr.yml',
      );
      for (const name of ['dispatch-ios', 'dispatch-android']) {
        const queue = new Queue(name, { connection: connectionFor(redisUrl), prefix });
        await queue.add('send', { n: 1 });
        await queue.close();
      }
    });
    afterAll(async () => {
      await deletePrefix(redisUrl, prefix);
      tearDown();
    });

    it('is refused in one line with the pattern meant, and no silence is made', async () => {
      const typo = await as('U0ALICE', 'silence', 'pushizo/dispach-*', '1h');
      expect(typo.code).not.toBe(0);
      const answer = jsonOf(typo);
      expect(answer.error?.code).toBe('BadArgument');
      expect(answer.message.text).toBe(
        '`pushizo/dispach-*` matches no queue of `pushizo`, so it would silence nothing. Did you mean `pushizo/dispatch-*`? Valid: a pattern that matches a queue, or add `--force` after the duration to silence a queue that does not exist yet.',
      );
      expect(jsonOf(await as('U0ALICE', 'silences')).data).toEqual({ silences: [] });
    });

    it('in Turkish too', async () => {
      const typo = jsonOf(
        await runCliInProcess([
          '--config',
          `${tmp.dir}/tr.yml`,
          '--user',
          'U0ALICE',
          '--json',
          'silence',
          'pushizo/dispach-*',
          '1h',
        ]),
      );
      expect(typo.message.text).toBe(
        '`pushizo/dispach-*` `pushizo` sisteminin hiçbir kuyruğuyla eşleşmiyor, yani hiçbir şeyi susturmaz. `pushizo/dispatch-*` mi demek istediniz? Geçerli: bir kuyrukla eşleşen bir desen; henüz var olmayan bir kuyruğu susturmak için süreden sonra `--force` ekleyin.',
      );
    });

    it('a pattern that matches, a new queue found by a fresh discovery, and --force with a reason are accepted', async () => {
      expect(jsonOf(await as('U0ALICE', 'silence', 'pushizo/dispatch-*', '1h')).ok).toBe(true);
      const late = new Queue('late-arrival', { connection: connectionFor(redisUrl), prefix });
      await late.add('send', { n: 1 });
      await late.close();
      expect(jsonOf(await as('U0ALICE', 'silence', 'pushizo/late-*', '1h')).ok).toBe(true);
      const forced = jsonOf(
        await as('U0ALICE', 'silence', 'pushizo/not-yet', '1h', '--force', 'new', 'rollout'),
      );
      expect(forced.ok).toBe(true);
      expect(forced.data).toMatchObject({ silence: { pattern: 'pushizo/not-yet', reason: 'new rollout' } });
    });
  });

  describe('ack all', () => {
    beforeEach(setUp);
    afterEach(tearDown);

    it('ack all <system> with nothing open says so', async () => {
      expect(jsonOf(await as('U0ALICE', 'ack', 'all', 'pushizo')).message.text).toBe(
        '`pushizo` has no unacknowledged open alert.',
      );
    });

    it('ack all with an unknown system names the valid ones', async () => {
      const unknown = jsonOf(await as('U0ALICE', 'ack', 'all', 'pushiz'));
      expect(unknown.error?.code).toBe('UnknownSystem');
      expect(unknown.message.text).toContain('Systems: `pushizo`');
    });
  });

  describe('monitor --once', () => {
    beforeEach(setUp);
    afterEach(tearDown);

    it('monitor --once posts one grouped message for a system’s alerts and leaves a silenced one out', async () => {
      const prefix = randomName('grp');
      const names = ['dispatch-ios', 'dispatch-android', 'maintenance'];
      const queues = names.map((n) => new Queue(n, { connection: connectionFor(redisUrl), prefix }));
      const SLACK = 'https://slack.group-cli.test';
      nock.disableNetConnect();
      nock.enableNetConnect('127.0.0.1');
      const slack = fakeSlack(SLACK);
      try {
        for (const q of queues)
          await q.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: 'send', data: { i } })));
        config = writeConfigFile(tmp.dir, {
          store: `sqlite:${tmp.dir}/queue-ops.db`,
          roles: TEST_ROLES,
          slack: { incidentChannel: 'C0INCIDENT' },
          systems: [bullmqSystem('pushizo', redisUrl, prefix, { queues: names })],
          escalation: {
            rules: [backlogRule(['pushizo/*'])],
          },
        });
        jsonOf(await as('U0ALICE', 'silence', 'pushizo/maintenance', '1h'));
        const out: string[] = [];
        const code = await runCliHere({
          argv: ['--config', config, 'monitor', '--once', '--json'],
          env: { SLACK_BOT_TOKEN: 'xoxb-group', SLACK_API_URL: `${SLACK}/api` },
          cwd: tmp.dir,
          stdout: (t) => out.push(t),
          stderr: () => undefined,
          osUser: 'cron',
        });
        expect(code).toBe(0);
        const run = JSON.parse(out.join('')) as { data: { firing: { subject: string }[] } };
        expect(run.data.firing.map((a) => a.subject).sort()).toEqual(names.map((n) => `pushizo/${n}`).sort());
        const posts = slack.delivered().filter((c) => kindOf(c) === 'post');
        expect(posts).toHaveLength(1);
        const text = JSON.stringify(posts[0]!.blocks);
        expect(text).toContain('CRITICAL · 2 alerts firing · pushizo');
        expect(text).toContain('1 more alert is silenced and not listed.');
        // Named only by the silence's note, never as a line of its own.
        expect(text).not.toContain('*backlog* · pushizo/maintenance');
        expect(text).toContain('(`pushizo/maintenance`)');
      } finally {
        slack.done();
        nock.cleanAll();
        nock.enableNetConnect();
        for (const q of queues) await q.close();
        await deletePrefix(redisUrl, prefix);
      }
    });
  });
});
