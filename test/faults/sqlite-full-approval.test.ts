import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
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
import { jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();
const t = messages('en');

/** Whether this process may mount a tmpfs (root, as in CI's container); why not, when it may not. */
function probe(): string | undefined {
  const dir = tempDir('probe');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir.dir], { stdio: 'ignore' });
    execFileSync('umount', [dir.dir], { stdio: 'ignore' });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    dir.remove();
  }
}
const cannot = probe();
if (cannot) {
  console.warn(
    `test/faults/sqlite-full-approval: SKIPPED, this environment may not mount a tmpfs (it needs root, as CI has): ${cannot}`,
  );
}

/** What the store and Redis show of one request after its approval was tried. */
interface Seen {
  level: number;
  status: string;
  approvals: number;
  entries: string[];
  paused: boolean;
}

/**
 * Issue 34 §2, as it was reproduced: the store is SQLite on a 2 MB tmpfs that fills at the moment
 * of an approval. A ladder of free space, 0 to 160 KB a page at a time, so that each write of the
 * approval (the approval, the start, the outcome) is in turn the one the disk refuses. At every
 * step: an approval is stored with its entry or not at all (never "approved but pending"), nothing
 * runs without `request.executing`, a request with its start stored has it with its entry, and an
 * outcome is stored with its entry. The command line exits 1 naming the write that failed; the bot
 * keeps the outcome and writes it once there is room. The sweep says "did not run" only of a
 * request still `approved`, and "may have run" of a lapsed execution.
 */
describe.skipIf(Boolean(cannot))('an approval at the moment the SQLite store’s disk fills', () => {
  const prefix = randomName('sfa');
  let tmp: ReturnType<typeof tempDir>;
  let mount: string;
  let mounted = false;
  let redis: Redis;
  const queues: Queue[] = [];
  const filler = () => join(mount, 'filler');

  beforeAll(async () => {
    tmp = tempDir('sqlitefullapproval');
    mount = join(tmp.dir, 'small-disk');
    mkdirSync(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mount]);
    mounted = true;
    redis = new Redis(redisUrl);
  });

  afterAll(async () => {
    for (const queue of queues) await queue.close();
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    if (mounted) execFileSync('umount', ['-l', mount]);
    tmp?.remove();
  });

  /** Room again: the filler goes. */
  const room = () => rmSync(filler(), { force: true });

  /** Fills the tmpfs so that `bytes` are left free. */
  function leaveFree(bytes: number) {
    room();
    const fs = statfsSync(mount);
    const free = fs.bavail * fs.bsize;
    if (free > bytes) writeFileSync(filler(), Buffer.alloc(free - bytes));
  }

  const configFor = (name: string) =>
    writeConfigFile(
      tmp.dir,
      {
        store: `sqlite:${join(mount, `${name}.db`)}`,
        roles: TEST_ROLES,
        slack: { allowedChannels: ['C0INCIDENT'] },
        policies: { pause: { role: 'operator', approvals: 1 } },
        // Both people type on this one test account.
        approvals: { cliSameOsUser: 'allow' },
        // Eighty-odd actions in a minute, by two people.
        rateLimit: { perUserPerMinute: 1000 },
        archive: { dir: join(tmp.dir, 'archive') },
        systems: [bullmqSystem('pushizo', redisUrl, prefix)],
      },
      `${name}.yml`,
    );

  async function newQueue(name: string) {
    const queue = new Queue(name, { connection: connectionFor(redisUrl), prefix });
    queues.push(queue);
    await queue.add('send', {});
  }

  const paused = async (name: string) => (await redis.hexists(`${prefix}:${name}:meta`, 'paused')) === 1;

  /** The request's row and its audit entries, read from the file as it is on disk. */
  async function seen(dbFile: string, id: string, queue: string, level: number): Promise<Seen> {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    try {
      const row = db.prepare('SELECT status, approvals FROM approval_requests WHERE id = ?').get(id) as {
        status: string;
        approvals: string;
      };
      const entries = (
        db
          .prepare("SELECT action FROM audit_log WHERE json_extract(params, '$.request') = ? ORDER BY seq")
          .all(id) as { action: string }[]
      ).map((e) => e.action);
      return {
        level,
        status: row.status,
        approvals: (JSON.parse(row.approvals) as unknown[]).length,
        entries,
        paused: await paused(queue),
      };
    } finally {
      db.close();
    }
  }

  /** What must hold whatever write the disk refused; returns which write that was. */
  function classify(s: Seen): 'approval' | 'start' | 'outcome' | 'none' {
    const has = (action: string) => s.entries.includes(action);
    const why = JSON.stringify(s);
    // The approval and its entry together, or neither: never "approved but pending".
    expect(s.approvals > 0, why).toBe(has('request.approved'));
    if (s.status === 'pending') expect(s.approvals, why).toBe(0);
    // Nothing runs without `request.executing`, and a start is never stored without it.
    if (s.paused) expect(has('request.executing'), why).toBe(true);
    expect(['executing', 'done', 'failed'].includes(s.status), why).toBe(has('request.executing'));
    // An outcome is stored with its entry.
    expect(s.status === 'done', why).toBe(has('action.pause'));
    if (s.status === 'pending') return 'approval';
    if (s.status === 'approved') {
      expect(s.paused, why).toBe(false);
      return 'start';
    }
    if (s.status === 'executing') return 'outcome';
    expect(s.status, why).toBe('done');
    return 'none';
  }

  const LEVELS = Array.from({ length: 41 }, (_, i) => i * 4096);

  describe('through the command line', () => {
    const refused: Record<string, Seen[]> = { approval: [], start: [], outcome: [], none: [] };
    let config: string;
    const dbFile = () => join(mount, 'cli.db');
    const as = (user: string, ...words: string[]) =>
      runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

    beforeAll(async () => {
      config = configFor('cli');
      for (const level of LEVELS) {
        room();
        const queue = `cli-${level}`;
        await newQueue(queue);
        const asked = await as('U0ALICE', 'pause', `pushizo/${queue}`);
        const id = requestOf(asked).id;
        leaveFree(level);
        const run = await as('U0BOB', 'approve', id);
        room();
        const s = await seen(dbFile(), id, queue, level);
        const write = classify(s);
        refused[write]!.push(s);
        const out = jsonOf(run);
        // Exit 0 only when it is all written; otherwise 1, naming the write the store refused.
        if (write === 'none') {
          expect(run.code, run.stdout).toBe(0);
          expect(out.ok).toBe(true);
        } else {
          expect(run.code, `${JSON.stringify(s)} ${run.stdout}`).toBe(1);
          // The approval refused: by the store, or, when the command line could not even open it
          // (no room for its -shm), by the read-only runtime, which runs no action.
          const expected = {
            approval: ['StoreUnavailable', 'NotSupported'],
            start: ['StartNotStored'],
            outcome: ['OutcomeNotStored'],
          };
          expect(expected[write], run.stdout).toContain(out.error?.code);
          if (write === 'start') expect(out.error?.message).toContain('`request.executing`');
          if (write === 'outcome') expect(out.error?.message).toContain('`action.pause`');
          if (write !== 'approval') expect(out.error?.message).toContain('SQLITE_FULL');
          expect(out.message.text).not.toContain(t.approvals.status.pending);
        }
      }
    }, 240_000);

    it('refuses the approval whole on a full disk: no approval, no entry, nothing run, exit 1', () => {
      expect(refused.approval!.length).toBeGreaterThan(0);
    });

    it('never runs an action whose start the disk refused, and says so naming request.executing', () => {
      expect(refused.start!.length, JSON.stringify(refused)).toBeGreaterThan(0);
    });

    it('exits 1 naming the outcome’s write when the action ran but its outcome could not be written', () => {
      expect(refused.outcome!.length, JSON.stringify(refused)).toBeGreaterThan(0);
      for (const s of refused.outcome!) expect(s.paused).toBe(true);
    });

    it('runs it all with room to spare', () => {
      expect(refused.none!.length).toBeGreaterThan(0);
    });

    it('the chain verifies', async () => {
      const verify = jsonOf(await as('U0ALICE', 'audit', 'verify'));
      expect(verify.ok, JSON.stringify(verify)).toBe(true);
    });

    it('the sweep says "did not run" only of an approved request, "may have run" of a lapsed execution', async () => {
      const later = new Date(Date.now() + 5 * 60_000);
      const runtime = await createQueueOps({
        config: loadConfigFile(config, {}),
        env: {},
        logger: createLogger({ level: 'silent' }),
        now: () => later,
      });
      try {
        const swept = await runtime.approvals.recoverInterrupted();
        const byId = new Map(swept.map((r) => [r.id, r]));
        const db = new Database(dbFile(), { readonly: true });
        const idOf = (queue: string) =>
          (
            db.prepare('SELECT id FROM approval_requests WHERE target = ?').get(`pushizo/${queue}`) as {
              id: string;
            }
          ).id;
        // A command line of this file run more than a lease after these requests closes them
        // itself (reportInterrupted), as the sweep does: on a loaded machine that comes first.
        // Whoever closed it, the words must be these.
        const closed = async (queue: string) =>
          byId.get(idOf(queue)) ?? (await runtime.store.getRequest(idOf(queue)));
        for (const s of refused.start!) {
          const request = await closed(`cli-${s.level}`);
          expect(request?.error).toBe(t.approvals.neverStartedError);
          expect(request?.error).toContain('did not run');
        }
        for (const s of refused.outcome!) {
          const request = await closed(`cli-${s.level}`);
          expect(request?.error).toBe(t.approvals.interruptedError(`pushizo/cli-${s.level}`));
          expect(request?.error).toContain('may have run');
          expect(request?.error).not.toContain('did not run');
        }
        db.close();
        expect(await runtime.audit.verify()).toMatchObject({ ok: true });
      } finally {
        await runtime.close();
      }
    });
  });

  describe('in the bot', () => {
    let runtime: QueueOps;
    const dbFile = () => join(mount, 'bot.db');
    const outcomes: Seen[] = [];
    const written: Record<string, number> = { approval: 0, start: 0, outcome: 0, none: 0 };
    const ask = (user: string, ...words: string[]) =>
      runtime.dispatcher.handle({
        actor: { id: user },
        via: 'slack',
        channel: 'C0INCIDENT',
        words,
        locale: 'en',
      });

    /**
     * The bot keeps its file open, so its WAL only grows (to 1,000 pages before SQLite's own
     * checkpoint): more than this small disk. Each step starts from an emptied WAL, as a quiet
     * bot's does.
     */
    function checkpoint() {
      const db = new Database(dbFile());
      try {
        db.pragma('wal_checkpoint(TRUNCATE)');
      } finally {
        db.close();
      }
    }

    beforeAll(async () => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(join(mount, `cli.db${suffix}`), { force: true });
      room();
      // Made before the bot starts: it finds queues at its discovery (issue 34 §5, not this test's).
      for (const level of LEVELS) await newQueue(`bot-${level}`);
      runtime = await createQueueOps({
        config: loadConfigFile(configFor('bot'), {}),
        env: {},
        logger: createLogger({ level: 'silent' }),
      });
      for (const level of LEVELS) {
        room();
        const queue = `bot-${level}`;
        checkpoint();
        const asked = await ask('U0ALICE', 'pause', `pushizo/${queue}`);
        expect(asked.ok, asked.message.text).toBe(true);
        const id = (asked.data as { request: { id: string } }).request.id;
        leaveFree(level);
        const reply = await ask('U0BOB', 'approve', id);
        const s = await seen(dbFile(), id, queue, level);
        const write = classify(s);
        written[write]! += 1;
        room();
        expect(reply.message.text).not.toContain(t.approvals.status.pending);
        if (write === 'outcome') outcomes.push(s);
      }
    }, 240_000);

    afterAll(async () => {
      await runtime?.close();
    });

    it('meets each refused write on the way', () => {
      expect(written.approval).toBeGreaterThan(0);
      expect(written.start, JSON.stringify(written)).toBeGreaterThan(0);
      expect(written.outcome, JSON.stringify(written)).toBeGreaterThan(0);
    });

    it('keeps an outcome the disk refused and writes it, with its entry, once there is room', async () => {
      for (const s of outcomes) {
        const id = (
          new Database(dbFile(), { readonly: true })
            .prepare('SELECT id FROM approval_requests WHERE target = ?')
            .get(`pushizo/bot-${s.level}`) as { id: string }
        ).id;
        await expect
          .poll(async () => (await runtime.store.getRequest(id))?.status, { timeout: 40_000, interval: 200 })
          .toBe('done');
        const after = await seen(dbFile(), id, `bot-${s.level}`, s.level);
        expect(classify(after)).toBe('none');
        expect(after.entries.filter((e) => e === 'action.pause')).toHaveLength(1);
      }
      expect(await runtime.audit.verify()).toMatchObject({ ok: true });
    }, 120_000);
  });
});
