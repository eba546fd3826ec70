import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { loadConfigFile } from '../../src/config/load.js';
import { messages } from '../../src/i18n/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { fillDisk, whyNoMountAndChattr } from '../helpers/disk-faults.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();

const cannot = whyNoMountAndChattr();
if (cannot) console.warn(`test/faults/sqlite-full: skipped, needs mount and chattr (root): ${cannot}`);

/**
 * The SQLite store failing for real: its filesystem full (a 2 MB tmpfs filled up, so SQLite's own
 * write gets ENOSPC and says SQLITE_FULL), and its file made read-only (`chattr +i`: root ignores
 * permission bits, not the immutable flag). Each time an action answers one clear line, nothing
 * runs half-way, the audit chain keeps every entry whole and verifies, and once the disk has room
 * (or the file is writable) again the same commands work.
 */
describe.skipIf(Boolean(cannot))('the SQLite store on a full disk or a read-only file', () => {
  const prefix = randomName('sf');
  let tmp: ReturnType<typeof tempDir>;
  let redis: Redis;
  let queue: Queue;

  beforeAll(async () => {
    tmp = tempDir('sqlitefault');
    redis = new Redis(redisUrl);
    queue = new Queue('dispatch-ios', { connection: connectionFor(redisUrl), prefix });
    await queue.add('send', {});
  });

  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  const paused = async () => (await redis.hexists(`${prefix}:dispatch-ios:meta`, 'paused')) === 1;

  /** A config whose store is `dbFile`; pause runs at once (no approval) so a write failure shows. */
  const configFor = (dir: string, dbFile: string) =>
    writeConfigFile(dir, {
      store: `sqlite:${dbFile}`,
      roles: TEST_ROLES,
      slack: { allowedChannels: ['C0INCIDENT'] },
      archive: { dir: join(tmp.dir, 'archive') },
      systems: [bullmqSystem('pushizo', redisUrl, prefix)],
    });

  /** Runs one command, --json, as an operator. */
  const as = (config: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', 'U0ALICE', '--json', ...words]);

  /** Entries, and that the head row names the newest whole entry (nothing written half-way). */
  function chainOf(dbFile: string) {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    try {
      const entries = db.prepare('SELECT seq, action, hash FROM audit_log ORDER BY seq').all() as {
        seq: number;
        action: string;
        hash: string;
      }[];
      const head = db.prepare('SELECT seq, hash FROM audit_head WHERE id = 1').get() as {
        seq: number;
        hash: string;
      };
      return { entries, head };
    } finally {
      db.close();
    }
  }

  async function expectRefusedCleanly(config: string, dbFile: string, reason: string) {
    const before = chainOf(dbFile);
    const run = await as(config, 'pause', 'pushizo/dispatch-ios');
    expect(run.code).toBe(1);
    const out = jsonOf(run);
    expect(out.error?.code).toBe('StoreUnavailable');
    expect(out.error?.message).toContain(reason);
    expect(out.error?.message).toContain('nothing was changed');
    expect(out.message.text.split('\n')).toHaveLength(1);
    expect(run.stdout).not.toMatch(/\n\s+at /);
    // Nothing half-done: the queue is as it was and no request was left behind.
    expect(await paused()).toBe(false);
    const after = chainOf(dbFile);
    expect(after).toEqual(before);
    expect(after.head).toEqual({ seq: after.entries.at(-1)!.seq, hash: after.entries.at(-1)!.hash });
    const verify = jsonOf(await as(config, 'audit', 'verify'));
    expect(verify.ok, JSON.stringify(verify)).toBe(true);
    // Read-only commands still answer.
    expect((await as(config, 'status', 'pushizo')).code).toBe(0);
    return before.entries.length;
  }

  async function expectWorksAgain(config: string, dbFile: string, entriesBefore: number) {
    const run = await as(config, 'pause', 'pushizo/dispatch-ios');
    expect(run.code, run.stdout).toBe(0);
    expect(await paused()).toBe(true);
    expect((await as(config, 'resume', 'pushizo/dispatch-ios')).code).toBe(0);
    expect(await paused()).toBe(false);
    const verify = jsonOf(await as(config, 'audit', 'verify'));
    expect(verify.ok, JSON.stringify(verify)).toBe(true);
    const { entries } = chainOf(dbFile);
    expect(entries.length).toBeGreaterThan(entriesBefore);
    expect(entries.filter((e) => e.action === 'action.pause').length).toBeGreaterThanOrEqual(2);
  }

  describe('on a full disk', () => {
    let mount: string;
    let mounted = false;
    let dbFile: string;
    let config: string;
    let runtime: QueueOps | undefined;
    let before: ReturnType<typeof chainOf>;
    let line: string;
    const ask = (...words: string[]) =>
      runtime!.dispatcher.handle({
        actor: { id: 'U0ALICE' },
        via: 'slack',
        channel: 'C0INCIDENT',
        words,
        locale: 'en',
      });

    beforeAll(async () => {
      mount = join(tmp.dir, 'small-disk');
      mkdirSync(mount);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mount]);
      mounted = true;
      dbFile = join(mount, 'queue-ops.db');
      config = configFor(tmp.dir, dbFile);
      // The bot's process: its store opened (and kept open) before the disk fills.
      runtime = await createQueueOps({
        config: loadConfigFile(config, {}),
        env: {},
        logger: createLogger({ level: 'silent' }),
      });
      // A chain to protect: an action and its undoing.
      const first = await ask('pause', 'pushizo/dispatch-ios');
      expect(first.ok, first.message.text).toBe(true);
      expect((await ask('resume', 'pushizo/dispatch-ios')).ok).toBe(true);
      before = chainOf(dbFile);
      fillDisk(join(mount, 'filler'));
    });

    afterAll(async () => {
      await runtime?.close();
      if (mounted) execFileSync('umount', ['-l', mount]);
    });

    it('the running bot answers SQLITE_FULL in one clear line', async () => {
      const refused = await ask('pause', 'pushizo/dispatch-ios');
      expect(refused.ok).toBe(false);
      expect(refused.error?.code).toBe('StoreUnavailable');
      line = messages('en').errors.describe({
        code: 'StoreUnavailable',
        params: refused.error!.params ?? {},
      });
      expect(line).toContain('SQLITE_FULL');
      expect(line).toContain('nothing was changed');
      expect(refused.message.text.split('\n')).toHaveLength(1);
      expect(refused.message.text).not.toMatch(/\n\s+at |Error:/);
    });

    it('the running bot runs nothing', async () => {
      expect(await paused()).toBe(false);
    });

    it('the running bot keeps its chain whole: it verifies while the disk is still full', async () => {
      // Read by the same process that was refused.
      expect(await runtime!.audit.verify()).toMatchObject({ ok: true, count: before.entries.length });
    });

    it('the running bot still answers status', async () => {
      expect((await ask('status', 'pushizo')).ok).toBe(true);
    });

    it('a command line started meanwhile answers the same way', async () => {
      // The bot keeps SQLite's -shm open.
      const cli = await as(config, 'pause', 'pushizo/dispatch-ios');
      expect(cli.code).toBe(1);
      expect(jsonOf(cli).error).toMatchObject({ code: 'StoreUnavailable', message: line });
      expect(await paused()).toBe(false);
    });

    it('a command line started meanwhile still answers status', async () => {
      expect((await as(config, 'status', 'pushizo')).code).toBe(0);
    });

    it('with room again, the chain is the whole one from before', () => {
      rmSync(join(mount, 'filler'));
      const after = chainOf(dbFile);
      expect(after).toEqual(before);
      expect(after.head).toEqual({ seq: after.entries.at(-1)!.seq, hash: after.entries.at(-1)!.hash });
    });

    it('with room again, the running bot’s next request works, without a restart', async () => {
      expect((await ask('pause', 'pushizo/dispatch-ios')).ok).toBe(true);
      expect(await paused()).toBe(true);
      expect((await ask('resume', 'pushizo/dispatch-ios')).ok).toBe(true);
    });

    it('with room again, the command line works', async () => {
      await runtime!.close();
      runtime = undefined;
      await expectWorksAgain(config, dbFile, before.entries.length);
    });
  });

  describe('on a read-only file (chattr +i)', () => {
    let dbFile: string;
    let config: string;
    let count: number;

    beforeAll(async () => {
      const dir = join(tmp.dir, 'immutable');
      mkdirSync(dir);
      dbFile = join(dir, 'queue-ops.db');
      config = configFor(tmp.dir, dbFile);
      expect((await as(config, 'pause', 'pushizo/dispatch-ios')).code).toBe(0);
      expect((await as(config, 'resume', 'pushizo/dispatch-ios')).code).toBe(0);
      execFileSync('chattr', ['+i', dbFile]);
    });

    afterAll(() => {
      if (dbFile) execFileSync('chattr', ['-i', dbFile]);
    });

    it('SQLITE_READONLY is one clear line, nothing runs, the chain verifies', async () => {
      count = await expectRefusedCleanly(config, dbFile, 'SQLITE_READONLY');
    });

    it('writable again, it all works', async () => {
      execFileSync('chattr', ['-i', dbFile]);
      await expectWorksAgain(config, dbFile, count);
    });
  });
});
