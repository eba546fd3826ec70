import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../src/config/schema.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import { connectionFor, deletePrefix } from '../helpers/bullmq-jobs.js';
import { type CliRun, jsonOf, requestOf, runCli, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * One OS account is one person (issue 34 §3). The command line reads the account from the kernel
 * (`os.userInfo()`) and the host from `os.hostname()`; inside a user namespace both are whatever
 * the namespace says, so there it refuses everything that changes something or approves. And an
 * id `cli.users` binds to an account is that account's alone; a claim never counts as the second
 * person against a bound account.
 */

const BIN = resolve(import.meta.dirname, '../../bin/queue-ops.js');
const WHOLE_SYSTEM = /^\s*0\s+0\s+4294967295\s*$/;

/** `cmd …` inside a new user namespace (`unshare -r -u`), with its own host name. */
function inNamespace(cmd: string[], hostName = 'elsewhere'): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      'unshare',
      ['-r', '-u', 'sh', '-c', `hostname ${hostName} && exec "$@"`, 'sh', ...cmd],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

describe('one OS account is one person', () => {
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
    tmp = tempDir('one-person');
  });
  afterEach(async () => {
    await queue?.close();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  /** Pause needs one approval by default here; `users` is `cli.users`. */
  const configWith = (users: Record<string, string[]> = {}, more: Partial<ConfigInput> = {}) =>
    writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: TEST_ROLES,
      policies: { pause: { role: 'operator', approvals: 1 } },
      cli: { users },
      systems: [bullmqSystem('pushizo', redisUrl, prefix, { queues: [queueName] })],
      ...more,
    });

  /** The command line in this process, typed by `osUser` on `host`. */
  const typed = (config: string, osUser: string, user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words], {
      cwd: tmp.dir,
      env: {},
      osUser,
      osHost: 'ops-bastion',
    });

  async function requests() {
    const store = createSqliteStore(`${tmp.dir}/queue-ops.db`);
    try {
      return await store.listRequests();
    } finally {
      await store.close();
    }
  }

  async function auditEntries() {
    const store = createSqliteStore(`${tmp.dir}/queue-ops.db`);
    try {
      return await store.listAudit();
    } finally {
      await store.close();
    }
  }

  describe('inside a user namespace (unshare -r -u, the built command line)', () => {
    it('is a namespace: /proc/self/uid_map there is not the whole-system map', async () => {
      const map = await inNamespace(['cat', '/proc/self/uid_map']);
      expect(map.code, map.stderr).toBe(0);
      expect(map.stdout).not.toMatch(WHOLE_SYSTEM);
    });

    it('refuses an approval (and any changing verb) in one line, while a read still answers', async () => {
      // The same account asks outside, then approves inside under another id and a host of its
      // choice: before, the namespace's `root@elsewhere` counted as a second person.
      const config = configWith();
      const asked = await runCli(['--config', config, '--user', 'U0ALICE', '--json', 'pause', target]);
      expect(asked.code, asked.stderr).toBe(0);
      const request = requestOf(asked);

      const approve = await inNamespace([
        process.execPath,
        BIN,
        '--config',
        config,
        '--user',
        'U0CAROL',
        'approve',
        request.id,
      ]);
      expect(approve.code).toBe(1);
      expect(approve.stdout).toBe('');
      const lines = approve.stderr.split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^queue-ops: The command line is running inside a user namespace \(\/proc\/self\/uid_map is `0 0 1`, not the whole-system map\).*`approve`.*Run it outside the namespace\.$/,
      );
      expect(await queue.isPaused()).toBe(false);
      expect((await requests()).map((r) => [r.id, r.status])).toEqual([[request.id, 'pending']]);
      // The attempt is in the audit trail, as a guard's refusal is, with what the namespace claimed.
      const refused = (await auditEntries()).filter((e) => e.action === 'denied');
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatchObject({
        actorId: 'U0CAROL',
        via: 'cli',
        outcome: 'denied',
        params: {
          command: 'approve',
          code: 'UserNamespace',
          host: 'elsewhere',
          details: { uidMap: '0 0 1' },
        },
      });
      expect(refused[0]?.error).toMatch(/inside a user namespace/);

      const pause = await inNamespace([process.execPath, BIN, '--config', config, '--json', 'pause', target]);
      expect(pause.code).toBe(1);
      expect(jsonOf(pause).error?.code).toBe('UserNamespace');
      expect(await requests()).toHaveLength(1);

      const status = await inNamespace([
        process.execPath,
        BIN,
        '--config',
        config,
        '--json',
        'status',
        target,
      ]);
      expect(status.code, status.stderr).toBe(0);
      expect(jsonOf(status).ok).toBe(true);
    });

    it('says it in Turkish when the config is Turkish', async () => {
      const config = configWith({}, { locale: 'tr' });
      const pause = await inNamespace([process.execPath, BIN, '--config', config, 'pause', target]);
      expect(pause.code).toBe(1);
      expect(pause.stderr).toContain('kullanıcı ad alanının (user namespace) içinde çalışıyor');
      expect(await queue.isPaused()).toBe(false);
    });
  });

  it('an id bound to one account is refused to every other account, asking and approving', async () => {
    const config = configWith({ alice: ['U0ALICE'], bob: ['U0BOB'] });
    const mallory = await typed(config, 'mallory', 'U0ALICE', 'pause', target);
    expect(mallory.code).toBe(1);
    expect(jsonOf(mallory).error).toEqual({
      code: 'IdentityNotBound',
      message:
        '`U0ALICE` belongs to OS user `alice` (`cli.users`), so OS user `mallory` cannot act as it; nothing was done.',
    });
    expect(await requests()).toEqual([]);

    // Command line to command line too: Alice asks from her own account, Mallory approves as Bob.
    const asked = await typed(config, 'alice', 'U0ALICE', 'pause', target);
    expect(asked.code, asked.stderr).toBe(0);
    const request = requestOf(asked);
    const asBob = await typed(config, 'mallory', 'U0BOB', 'approve', request.id);
    expect(asBob.code).toBe(1);
    expect(jsonOf(asBob).error?.code).toBe('IdentityNotBound');
    expect(await queue.isPaused()).toBe(false);
    expect((await requests())[0]?.status).toBe('pending');
  });

  it('a claimed identity never counts as the second person against a bound one', async () => {
    const config = configWith({ alice: ['U0ALICE'], bob: ['U0BOB'] });
    const request = requestOf(await typed(config, 'alice', 'U0ALICE', 'pause', target));
    // Carol is no one's in cli.users: from `mallory` she is only a claim.
    const claimed = await typed(config, 'mallory', 'U0CAROL', 'approve', request.id);
    expect(claimed.code).toBe(1);
    expect(jsonOf(claimed).error).toEqual({
      code: 'IdentityNotBound',
      message: `\`--user U0CAROL\` is only a claim (OS user \`mallory\` is not bound to it in \`cli.users\`), and \`${request.id}\` was asked or approved by OS user \`alice\`, which is bound: a claim never counts as the second person against a bound account; nothing was changed.`,
    });
    expect(await queue.isPaused()).toBe(false);

    // A bound second person does count.
    const bob = await typed(config, 'bob', 'U0BOB', 'approve', request.id);
    expect(bob.code, bob.stderr).toBe(0);
    expect(requestOf(bob)).toMatchObject({ status: 'done', approvals: ['U0BOB'] });
    expect(await queue.isPaused()).toBe(true);
  });
});
