import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messages } from '../../src/i18n/index.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { jsonOf, killCliWhen, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();
const t = messages('en').approvals;

/**
 * The approver's command line (a real `bin/queue-ops.js` process) SIGKILLed at two points of one
 * action: after the approval is stored but before the action starts, and after the action ran but
 * before its outcome is stored. To land the kill there every time, a trigger in the database makes
 * that one write spin until the process dies (a disk that stalls on one write); the kill rolls the
 * write back, as a real crash would. Then the next command line, once the dead process's lease
 * is over, reports each: never started, or interrupted — never runs either again.
 */
describe('an approval whose command line is killed', () => {
  const prefix = randomName('ka');
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let dbFile: string;
  let redis: Redis;
  const queues: Queue[] = [];
  const ids: { beforeStart: string; afterRun: string } = { beforeStart: '', afterRun: '' };
  const cli = (user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);
  const row = (id: string) => {
    const db = new Database(dbFile, { readonly: true });
    try {
      return db.prepare('SELECT * FROM approval_requests WHERE id = ?').get(id) as Record<string, string>;
    } finally {
      db.close();
    }
  };
  const auditRows = (action: string, id: string) => {
    const db = new Database(dbFile, { readonly: true });
    try {
      return (
        db.prepare('SELECT * FROM audit_log WHERE action = ? ORDER BY seq').all(action) as Record<
          string,
          string
        >[]
      ).filter((r) => (JSON.parse(r.params!) as { request?: string }).request === id);
    } finally {
      db.close();
    }
  };
  const paused = async (queue: string) => (await redis.hexists(`${prefix}:${queue}:meta`, 'paused')) === 1;

  /** Runs `approve <id>` as a child, waits for `reached`, SIGKILLs it; the write it hangs in is lost. */
  async function approveAndKill(id: string, reached: () => boolean | Promise<boolean>) {
    await killCliWhen(
      ['--config', config, '--user', 'U0CAROL', '--json', 'approve', id],
      reached,
      `approve ${id} reaching the point to kill it at`,
      30_000,
    );
  }

  /** A trigger that spins inside the UPDATE moving request `id` to one of `statuses`. */
  function stallWrite(db: Database.Database, name: string, id: string, statuses: string[]) {
    db.exec(`CREATE TRIGGER ${name} BEFORE UPDATE OF status ON approval_requests
      WHEN NEW.id = '${id}' AND NEW.status IN (${statuses.map((s) => `'${s}'`).join(', ')})
      BEGIN SELECT sum(a.n * b.n * c.n) FROM stall a, stall b, stall c; END`);
  }

  beforeAll(async () => {
    tmp = tempDir('killapprove');
    dbFile = join(tmp.dir, 'queue-ops.db');
    redis = new Redis(redisUrl);
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${dbFile}`,
      roles: TEST_ROLES,
      approvals: { cliSameOsUser: 'allow' },
      policies: { pause: { role: 'operator', approvals: 1 } },
      systems: [bullmqSystem('pushizo', redisUrl, prefix)],
    });
    for (const name of ['before-start', 'after-run']) {
      const queue = new Queue(name, { connection: connectionFor(redisUrl), prefix });
      await queue.add('send', {});
      queues.push(queue);
    }
    ids.beforeStart = requestOf(await cli('U0ALICE', 'pause', 'pushizo/before-start')).id;
    ids.afterRun = requestOf(await cli('U0ALICE', 'pause', 'pushizo/after-run')).id;

    const db = new Database(dbFile);
    db.exec('CREATE TABLE stall (n INTEGER)');
    db.prepare('INSERT INTO stall (n) SELECT value FROM json_each(?)').run(
      JSON.stringify(Array.from({ length: 3000 }, (_, i) => i)),
    );
    stallWrite(db, 'stall_start', ids.beforeStart, ['executing']);
    stallWrite(db, 'stall_outcome', ids.afterRun, ['done', 'failed']);
    db.close();

    // One after the other: a process spinning inside a write holds SQLite's write lock.
    await approveAndKill(ids.beforeStart, () => row(ids.beforeStart).status === 'approved');
    // The queue is paused and the process spins in the write of the outcome (the status and its
    // `action.pause`, one transaction): killed there, neither is stored.
    await approveAndKill(ids.afterRun, () => paused('after-run'));

    const cleanup = new Database(dbFile);
    cleanup.exec('DROP TRIGGER stall_start; DROP TRIGGER stall_outcome; DROP TABLE stall');
    cleanup.close();
  }, 90_000);

  afterAll(async () => {
    for (const queue of queues) await queue.close();
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  it('leaves each as the kill found it while the dead process’s lease could still be renewed', async () => {
    const run = await cli('U0ALICE', 'pending');
    expect(run.code).toBe(0);
    expect(row(ids.beforeStart).status).toBe('approved');
    expect(row(ids.afterRun).status).toBe('executing');
    // The first never reached the queue; the second did, once.
    expect(await paused('before-start')).toBe(false);
    expect(await paused('after-run')).toBe(true);
  });

  it('reports each on the next command line once the lease is over: never started, or interrupted', async () => {
    // The lease (30 s) of the dead process must run out: that is how a live process is told from a dead one.
    const until = Math.max(
      Date.parse(row(ids.beforeStart).updated_at!) + 30_000,
      Date.parse(row(ids.afterRun).lease_until!),
    );
    await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now() + 500)));

    const next = await runCliInProcess(['--config', config, '--user', 'U0DAVE', 'status', 'pushizo']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(`${ids.beforeStart} (pause pushizo/before-start): ${t.neverStartedError}`);
    expect(next.stderr).toContain(
      `${ids.afterRun} (pause pushizo/after-run): ${t.interruptedError('pushizo/after-run')}`,
    );
    expect(next.stderr.trim().split('\n')).toHaveLength(2);

    expect(row(ids.beforeStart)).toMatchObject({ status: 'interrupted', error: t.neverStartedError });
    expect(row(ids.beforeStart).started_at).toBeNull();
    expect(row(ids.afterRun)).toMatchObject({
      status: 'interrupted',
      error: t.interruptedError('pushizo/after-run'),
    });
  }, 60_000);

  it('reports each once: a second start finds nothing left to report', async () => {
    const again = await runCliInProcess(['--config', config, '--user', 'U0DAVE', 'status', 'pushizo']);
    expect(again.stderr).toBe('');
    for (const id of [ids.beforeStart, ids.afterRun]) {
      expect(auditRows('request.interrupted', id)).toHaveLength(1);
    }
  });

  it('runs neither again', async () => {
    expect(auditRows('action.pause', ids.beforeStart)).toHaveLength(0);
    // It ran, and its start is in the trail; its outcome died with the process that was writing it.
    expect(auditRows('request.executing', ids.afterRun)).toHaveLength(1);
    expect(auditRows('action.pause', ids.afterRun)).toHaveLength(0);
    expect(auditRows('request.executing', ids.beforeStart)).toHaveLength(0);
    expect(await paused('before-start')).toBe(false);
  });

  it('refuses a new approval of the one never started, naming its state', async () => {
    // Asking again is how it is run.
    const approve = jsonOf(await cli('U0CAROL', 'approve', ids.beforeStart));
    expect(approve.error?.code).toBe('RequestNotPending');
    expect(approve.error?.message).toContain('interrupted');
  });

  it('keeps an audit chain that verifies', async () => {
    const verify = jsonOf(await runCliInProcess(['--config', config, '--json', 'audit', 'verify']));
    expect(verify.ok, JSON.stringify(verify)).toBe(true);
  });
});
