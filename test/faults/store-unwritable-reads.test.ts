import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createLogger } from '../../src/lib/logger.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { fillDisk, whyNoMountAndChattr } from '../helpers/disk-faults.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();

const cannot = whyNoMountAndChattr();
if (cannot) {
  console.warn(
    `test/faults/store-unwritable-reads: SKIPPED, needs mount and chattr (root, as CI has): ${cannot}`,
  );
}

const NOTE =
  /Not audited: the bot's store cannot be written \(([^)]*)\)\. Reads still answer; actions and approvals are unavailable until it can\./;

/**
 * Issue 34 §5 "A read-only or full store breaks even reads": without a writable store, `status`
 * answers all the same, unaudited, and says so in one line with why actions are unavailable;
 * actions still refuse. Through the command line (a fresh process each time) and the bot's
 * pipeline, on a full disk, a read-only file and a read-only directory.
 */
describe.skipIf(Boolean(cannot))('reads without a writable store', () => {
  const prefix = randomName('ur');
  let tmp: ReturnType<typeof tempDir>;
  let queue: Queue;

  beforeAll(async () => {
    tmp = tempDir('unwritable');
    queue = new Queue('dispatch-ios', { connection: connectionFor(redisUrl), prefix });
    await queue.add('send', {});
  });

  afterAll(async () => {
    await queue?.close();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  const configFor = (dbFile: string, name: string) =>
    writeConfigFile(
      tmp.dir,
      {
        store: `sqlite:${dbFile}`,
        roles: TEST_ROLES,
        slack: { allowedChannels: ['C0INCIDENT'] },
        archive: { dir: join(tmp.dir, 'archive') },
        systems: [bullmqSystem('pushizo', redisUrl, prefix)],
      },
      `${name}.yml`,
    );

  const cli = (config: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', 'U0ALICE', ...words]);

  /** `status` answers, with the note naming `reason`; `pause` still refuses. */
  async function readsAnswer(config: string, reason: RegExp) {
    const text = await cli(config, 'status', 'pushizo');
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).toContain('dispatch-ios');
    const note = text.stdout.split('\n').filter((line) => NOTE.test(line));
    expect(note, text.stdout).toHaveLength(1);
    expect(note[0]).toMatch(reason);
    expect(text.stdout).not.toMatch(/unexpected failure|\n\s+at /);
    const json = jsonOf(await cli(config, '--json', 'status', 'pushizo'));
    expect(json.ok).toBe(true);
    expect(json.message.text).toMatch(NOTE);
    const pause = await cli(config, '--json', 'pause', 'pushizo/dispatch-ios');
    expect(pause.code).toBe(1);
    expect(jsonOf(pause).message.text).not.toMatch(NOTE);
    expect(await queue.isPaused()).toBe(false);
  }

  describe('on a full disk', () => {
    let mount: string;
    let mounted = false;
    let config: string;
    let runtime: QueueOps | undefined;

    beforeAll(async () => {
      mount = join(tmp.dir, 'full');
      mkdirSync(mount);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mount]);
      mounted = true;
      config = configFor(join(mount, 'queue-ops.db'), 'full');
      // A store with a chain in it, closed (its -wal and -shm gone), then the disk fills.
      expect((await cli(config, 'status', 'pushizo')).code).toBe(0);
      runtime = await createQueueOps({
        config: loadConfigFile(config, {}),
        env: {},
        logger: createLogger({ level: 'silent' }),
      });
      fillDisk(join(mount, 'filler'));
    });

    afterAll(async () => {
      await runtime?.close();
      if (mounted) execFileSync('umount', ['-l', mount]);
    });

    it('the bot’s pipeline answers status, saying in one line it is not audited and actions are unavailable', async () => {
      const reply = await runtime!.dispatcher.handle({
        actor: { id: 'U0ALICE' },
        via: 'slack',
        channel: 'C0INCIDENT',
        words: ['status', 'pushizo'],
        locale: 'en',
      });
      expect(reply.ok).toBe(true);
      expect(reply.message.text).toMatch(NOTE);
      expect(reply.message.text.match(new RegExp(NOTE, 'g'))).toHaveLength(1);
      expect(JSON.stringify(reply.message.blocks.at(-1))).toContain('SQLITE_FULL');
    });

    it('the Turkish answer says it in Turkish', async () => {
      const reply = await runtime!.dispatcher.handle({
        actor: { id: 'U0ALICE' },
        via: 'slack',
        channel: 'C0INCIDENT',
        words: ['status', 'pushizo'],
        locale: 'tr',
      });
      expect(reply.ok).toBe(true);
      expect(reply.message.text).toContain('Denetim kaydına yazılmadı');
      expect(reply.message.text).toContain('SQLITE_FULL');
    });

    it('a command line started meanwhile answers status with the same line (its store cannot even open)', async () => {
      await runtime!.close();
      runtime = undefined;
      // Closed: the -wal and -shm are gone, and there is no room to make them again.
      await readsAnswer(config, /disk I\/O error|SQLITE_FULL|SQLITE_IOERR/);
    });
  });

  describe('on a read-only file (chattr +i)', () => {
    let dbFile: string;
    let config: string;

    beforeAll(async () => {
      const dir = join(tmp.dir, 'immutable-file');
      mkdirSync(dir);
      dbFile = join(dir, 'queue-ops.db');
      config = configFor(dbFile, 'immutable-file');
      expect((await cli(config, 'status', 'pushizo')).code).toBe(0);
      execFileSync('chattr', ['+i', dbFile]);
    });

    afterAll(() => {
      if (dbFile) execFileSync('chattr', ['-i', dbFile]);
    });

    it('the command line answers status, not audited, naming SQLITE_READONLY', async () => {
      await readsAnswer(config, /SQLITE_READONLY/);
    });
  });

  describe('in a read-only directory (chattr +i: no -wal can be made)', () => {
    let dir: string;
    let config: string;

    beforeAll(async () => {
      dir = join(tmp.dir, 'immutable-dir');
      mkdirSync(dir);
      config = configFor(join(dir, 'queue-ops.db'), 'immutable-dir');
      expect((await cli(config, 'status', 'pushizo')).code).toBe(0);
      execFileSync('chattr', ['+i', dir]);
    });

    afterAll(() => {
      if (dir) execFileSync('chattr', ['-i', dir]);
    });

    it('the command line answers status, not audited, naming why the store would not open', async () => {
      await readsAnswer(config, /cannot open .*(unable to open database file|SQLITE_CANTOPEN)/);
    });
  });
});
