import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../src/config/schema.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import { connectionFor, deletePrefix, waitFor } from '../helpers/bullmq-jobs.js';
import { type CliJsonOut, jsonOf, requestOf, runCli, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/** One terminal: an OS account on a host. `--user` on top of it is only a claim. */
interface Terminal {
  osUser: string;
  host: string;
}

describe('two-person approval from the command line counts OS accounts, not claimed ids', () => {
  const redisUrl = testRedisUrl();
  const queueName = 'dispatch-ios';
  const target = `pushizo/${queueName}`;
  let prefix: string;
  let queue: Queue;
  let tmp: ReturnType<typeof tempDir>;

  beforeEach(async () => {
    prefix = `qo${randomBytes(5).toString('hex')}`;
    queue = new Queue(queueName, { connection: connectionFor(redisUrl), prefix });
    await queue.add('deliver.apns', { n: 1 });
    tmp = tempDir('os-user');
  });

  afterEach(async () => {
    await queue?.close();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  /** Pause needs one approval; `more` adds policies of other actions, `approvals`, `archive`. */
  const configWith = (more: Pick<ConfigInput, 'policies' | 'approvals' | 'archive'> = {}) =>
    writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: TEST_ROLES,
      ...more,
      policies: { pause: { role: 'operator', approvals: 1 }, ...more.policies },
      systems: [bullmqSystem('pushizo', redisUrl, prefix, { queues: [queueName] })],
    });

  /** The command line in this process, as typed by `terminal`. */
  const typed = (config: string, terminal: Terminal, user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words], {
      cwd: tmp.dir,
      env: {},
      osUser: terminal.osUser,
      osHost: terminal.host,
    });

  const shown = (out: CliJsonOut) => `${out.message.text}\n${JSON.stringify(out.message.blocks)}`;

  async function auditTrail() {
    const store = createSqliteStore(`${tmp.dir}/queue-ops.db`);
    try {
      return await store.listAudit();
    } finally {
      await store.close();
    }
  }

  it('refuses an approval typed by the OS user who asked, whatever --user says, and shows who really approved', async () => {
    const config = configWith();
    const ayse = { osUser: 'ayse', host: 'ops-bastion' };
    const asked = await typed(config, ayse, 'U0ALICE', 'pause', target);
    expect(asked.code, asked.stderr).toBe(0);
    const request = requestOf(asked);
    expect(shown(jsonOf(asked))).toContain('Requested by U0ALICE via command line, OS user ayse');

    const self = await typed(config, ayse, 'U0CAROL', 'approve', request.id);
    expect(self.code).toBe(1);
    const refused = jsonOf(self);
    // The same answer Slack gives a requester pressing their own Approve.
    expect(refused.error).toEqual({
      code: 'SelfApproval',
      message: `You asked for \`${request.id}\` yourself; someone else has to approve it.`,
    });
    expect(await queue.isPaused()).toBe(false);

    const bora = { osUser: 'bora', host: 'ops-bastion' };
    const approved = await typed(config, bora, 'U0CAROL', 'approve', request.id);
    expect(approved.code, approved.stderr).toBe(0);
    expect(requestOf(approved)).toMatchObject({ status: 'done', approvals: ['U0CAROL'] });
    expect(await queue.isPaused()).toBe(true);
    // The reply is the request message Slack shows and updates in place.
    expect(shown(jsonOf(approved))).toContain('Approved by U0CAROL via command line, OS user bora');

    const entries = await auditTrail();
    const rejected = entries.find((e) => e.action === 'request.approve' && e.outcome === 'rejected');
    expect(rejected).toMatchObject({
      actorId: 'U0CAROL',
      via: 'cli',
      error: expect.stringContaining('the same OS user on the same host'),
      params: { origin: 'via command line, OS user ayse', osUser: 'ayse', host: 'ops-bastion' },
    });
    const approval = entries.find((e) => e.action === 'request.approved');
    expect(approval).toMatchObject({
      actorId: 'U0CAROL',
      params: { origin: 'via command line, OS user bora', osUser: 'bora' },
    });
  });

  it('with approvals.cliSameOsUser: allow, one OS user may play both people (demos, tests)', async () => {
    const config = configWith({ approvals: { cliSameOsUser: 'allow' } });
    const ayse = { osUser: 'ayse', host: 'ops-bastion' };
    const request = requestOf(await typed(config, ayse, 'U0ALICE', 'pause', target));
    const approved = await typed(config, ayse, 'U0CAROL', 'approve', request.id);
    expect(approved.code, approved.stderr).toBe(0);
    expect(requestOf(approved).status).toBe('done');
    expect(await queue.isPaused()).toBe(true);
  });

  // Every action that asks for a second person carries the OS user who asked, not only pause.
  for (const words of [
    ['purge', target],
    ['retry', target, 'all'],
    ['resume', target],
  ]) {
    it(`\`${words[0]}\` asked and approved by one OS user as two --user ids is refused, and nothing runs`, async () => {
      const config = configWith({
        policies: {
          purge: { role: 'operator', approvals: 1 },
          retry: { role: 'operator', approvals: 1 },
          resume: { role: 'operator', approvals: 1 },
        },
        archive: { dir: `${tmp.dir}/archive` },
      });
      if (words[0] === 'resume') await queue.pause();
      if (words[0] === 'retry') {
        // A real worker fails the queued job: the failed set holds one to retry.
        const failing = new Worker(
          queueName,
          async () => {
            throw new Error('APNs 410');
          },
          { connection: connectionFor(redisUrl), prefix },
        );
        await waitFor('one failure', async () => (await queue.getJobCounts('failed')).failed === 1);
        await failing.close();
      }
      const failedBefore = await queue.getJobCounts('failed');
      const waitingBefore = await queue.getWaitingCount();
      const ayse = { osUser: 'ayse', host: 'ops-bastion' };
      const asked = await typed(config, ayse, 'U0ALICE', ...words);
      expect(asked.code, asked.stdout + asked.stderr).toBe(0);
      const request = requestOf(asked);
      const self = await typed(config, ayse, 'U0CAROL', 'approve', request.id);
      expect(self.code, self.stdout).toBe(1);
      expect(jsonOf(self).error?.code).toBe('SelfApproval');
      expect(await queue.getWaitingCount()).toBe(waitingBefore);
      expect(await queue.getJobCounts('failed')).toEqual(failedBefore);
      expect(await queue.isPaused()).toBe(words[0] === 'resume');
    });
  }

  it('the real command line reads the OS user itself: two --user ids from one shell are refused by default', async () => {
    const config = configWith();
    const request = requestOf(
      await runCli(['--config', config, '--user', 'U0ALICE', '--json', 'pause', target]),
    );
    const run = await runCli(['--config', config, '--user', 'U0CAROL', '--json', 'approve', request.id]);
    expect(run.code).toBe(1);
    expect(jsonOf(run).error?.code).toBe('SelfApproval');
    expect(await queue.isPaused()).toBe(false);
  });
});
