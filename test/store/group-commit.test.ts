import { fsync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAudit } from '../../src/audit/audit.js';
import { groupCommit } from '../../src/store/group-commit.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import { walSync } from '../../src/store/wal-sync.js';

/**
 * Two hundred slash commands arriving together each write a seen signature (after the ack) and
 * an audit entry (before the answer). With `synchronous=FULL` each commit is an fsync on the
 * event loop; written together they share one commit. Counted in WAL frames: every commit
 * appends the pages it changed, so 100 commits of one entry each write hundreds of frames, one
 * commit of 100 entries a handful.
 */
describe('the SQLite store under a burst of concurrent writes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-group-'));
  const path = join(dir, 'queue-ops.db');
  let store: SqliteStore;
  let raw: Database.Database;

  beforeAll(async () => {
    store = createSqliteStore(path);
    await store.migrate();
    raw = new Database(path);
  });
  afterAll(async () => {
    raw.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Frames in the WAL after emptying it first: what the writes in between committed. */
  async function framesWrittenBy(writes: () => Promise<unknown>): Promise<number> {
    raw.pragma('wal_checkpoint(TRUNCATE)');
    await writes();
    const [result] = raw.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
    return result!.log;
  }

  it('commits 100 concurrent audit entries together, each in its place in one unbroken chain', async () => {
    const frames = await framesWrittenBy(() =>
      Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          store.appendAudit({
            at: new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString(),
            actorId: `U${i}`,
            via: 'slack',
            action: 'command.status',
            outcome: 'ok',
          }),
        ),
      ),
    );
    // 100 commits of their own write at least two pages each (the entry, the chain head).
    expect(frames).toBeLessThan(30);
    const entries = await store.listAudit({ limit: 200 });
    expect(entries).toHaveLength(100);
    expect([...entries].sort((a, b) => a.seq - b.seq).map((e) => e.actorId)).toEqual(
      Array.from({ length: 100 }, (_, i) => `U${i}`),
    );
    expect(await createAudit({ store, now: () => new Date() }).verify()).toEqual({ ok: true, count: 100 });
  });

  it('commits 100 concurrent seen signatures together, and a signature offered twice in one burst counts once', async () => {
    const seenAt = new Date().toISOString();
    const forget = new Date(Date.now() - 6 * 60_000).toISOString();
    let answers: boolean[] = [];
    const frames = await framesWrittenBy(async () => {
      answers = await Promise.all([
        ...Array.from({ length: 100 }, (_, i) => store.rememberSignature(`v0=burst-${i}`, seenAt, forget)),
        store.rememberSignature('v0=burst-7', seenAt, forget),
      ]);
    });
    expect(frames).toBeLessThan(30);
    expect(answers.slice(0, 100).every(Boolean)).toBe(true);
    expect(answers[100]).toBe(false);
    // Committed, not only answered: a fresh connection sees all of them.
    const stored = raw
      .prepare("SELECT COUNT(*) AS n FROM seen_signatures WHERE signature LIKE 'v0=burst-%'")
      .get() as {
      n: number;
    };
    expect(stored.n).toBe(100);
  });

  it('writes what waits for the next commit when the store is closed, instead of dropping it', async () => {
    const other = createSqliteStore(path);
    const pending = other.appendAudit({
      at: new Date().toISOString(),
      actorId: 'U0LAST',
      via: 'slack',
      action: 'command.status',
      outcome: 'ok',
    });
    await other.close();
    expect((await pending).actorId).toBe('U0LAST');
    const last = raw.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE actor_id = 'U0LAST'").get() as {
      n: number;
    };
    expect(last.n).toBe(1);
  });
});

/** A `durable` the test completes by hand, counting how often it was asked. */
function manualDurable() {
  const waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  return {
    durable: () => new Promise<void>((resolve, reject) => waiting.push({ resolve, reject })),
    calls: () => waiting.length,
    complete: () => waiting.shift()!.resolve(),
    fail: (error: unknown) => waiting.shift()!.reject(error),
  };
}

describe('group commit with the fsync off the event loop', () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-group-durable-'));
  let db: Database.Database;
  let n = 0;

  beforeAll(() => {
    db = new Database(join(dir, 'g.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (v TEXT NOT NULL)');
  });
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (v: string) => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;
  const settled = (p: Promise<unknown>) => {
    const state = { done: false };
    p.then(
      () => {
        state.done = true;
      },
      () => {
        state.done = true;
      },
    );
    return state;
  };

  it('answers the writes of one turn only once their one durable call resolved, and commits them at NORMAL', async () => {
    const manual = manualDurable();
    const write = groupCommit(db, insert, { durable: manual.durable });
    const tag = `turn-${++n}`;
    const writes = Array.from({ length: 5 }, () => write(tag));
    const states = writes.map(settled);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    // Committed (another connection sees the rows), not yet answered, and one fsync asked for.
    expect((db.prepare('SELECT COUNT(*) AS c FROM t WHERE v = ?').get(tag) as { c: number }).c).toBe(5);
    expect(manual.calls()).toBe(1);
    expect(states.some((s) => s.done)).toBe(false);
    // Every other write of the connection still commits with FULL.
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    manual.complete();
    expect(await Promise.all(writes)).toEqual([1, 1, 1, 1, 1]);
  });

  it('fails every write of a group whose fsync failed, mapped by toError', async () => {
    const manual = manualDurable();
    const write = groupCommit(db, insert, {
      durable: manual.durable,
      toError: (error) => new Error(`mapped: ${(error as Error).message}`),
    });
    const writes = [write('a'), write('b')];
    await new Promise((r) => setImmediate(r));
    manual.fail(new Error('EIO'));
    for (const w of writes) await expect(w).rejects.toThrow('mapped: EIO');
  });

  it('flush() commits what waits at FULL and answers without waiting for an fsync', async () => {
    const manual = manualDurable();
    const write = groupCommit(db, insert, { durable: manual.durable });
    const pending = write('closing');
    write.flush();
    expect(await pending).toBe(1);
    expect(manual.calls()).toBe(0);
  });
});

/**
 * A migrated SQLite store at `path` whose WAL fsyncs are told to `onSync` (with the synced file's
 * path) and then made, and one audit entry in it; closed after `test`.
 */
async function withSyncedStore(
  path: string,
  onSync: (file: string) => void,
  test: (store: SqliteStore) => Promise<void>,
): Promise<void> {
  const store = createSqliteStore(path, {
    syncFile: (fd, done) => {
      onSync(readlinkSync(`/proc/self/fd/${fd}`));
      fsync(fd, done);
    },
  });
  try {
    await store.migrate();
    await createAudit({ store, now: () => new Date() }).record({
      actorId: 'U0BOB',
      actorName: 'bob',
      via: 'cli',
      action: 'status',
      target: 'hs',
      params: {},
      outcome: 'ok',
    });
    await test(store);
  } finally {
    await store.close();
  }
}

describe('the WAL fsync', () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-wal-sync-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('once failed, fails every later sync too (a later fsync that succeeds would not mean the frames are on disk)', async () => {
    const path = join(dir, 'eio.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT)');
    let fails = 1;
    const wal = walSync(path, (fd, done) => {
      if (fails-- > 0) return done(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
      fsync(fd, done);
    });
    try {
      await expect(wal.sync()).rejects.toMatchObject({ code: 'EIO' });
      // The disk answers again: the store still says it cannot vouch for what it wrote.
      await expect(wal.sync()).rejects.toMatchObject({ code: 'EIO' });
    } finally {
      await wal.close();
      db.close();
    }
  });

  it('syncs the WAL SQLite writes, beside the file a symlinked path resolves to, not a stray one beside the link', async () => {
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real', 'q.db'), join(dir, 'link.db'));
    // A leftover file where the WAL of the configured path would be.
    writeFileSync(join(dir, 'link.db-wal'), '');
    const synced: string[] = [];
    await withSyncedStore(
      join(dir, 'link.db'),
      (file) => synced.push(file),
      async () => {
        expect(synced.length).toBeGreaterThan(0);
        expect(new Set(synced)).toEqual(new Set([join(dir, 'real', 'q.db-wal')]));
      },
    );
  });
});

describe("a purge's bookkeeping", () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-purge-sync-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers each write (the purge, a chunk, its mark) only once the WAL holding it is fsynced, off the event loop', async () => {
    const order: string[] = [];
    await withSyncedStore(
      join(dir, 'p.db'),
      (file) => order.push(`fsync ${file.endsWith('-wal') ? 'wal' : file}`),
      async (store) => {
        const at = new Date(0).toISOString();
        order.length = 0;
        await store.createPurge({
          id: 'r-sync',
          system: 'hs',
          queue: 'events',
          backend: 'bullmq',
          states: ['waiting'],
          state: 'archiving',
          archivePath: join(dir, 'r-sync'),
          total: 3,
          chunks: 0,
          archived: 0,
          purged: 0,
          owner: 'host:1',
          heartbeatAt: at,
          createdAt: at,
          updatedAt: at,
        });
        order.push('created');
        await store.addPurgeChunk({
          purgeId: 'r-sync',
          seq: 1,
          file: 'chunk-000001.jsonl.gz',
          sha256: 'ab',
          bytes: 10,
          records: 3,
          deleted: false,
          purged: 0,
          skipped: [],
        });
        order.push('chunk');
        expect(
          await store.updatePurge('r-sync', ['archiving'], { chunks: 1, archived: 3 }, 'host:1'),
        ).toMatchObject({
          chunks: 1,
          archived: 3,
        });
        order.push('updated');
        await store.markPurgeChunk('r-sync', 1, { purged: 3, skipped: [] });
        order.push('marked');
        expect(order).toEqual([
          'fsync wal',
          'created',
          'fsync wal',
          'chunk',
          'fsync wal',
          'updated',
          'fsync wal',
          'marked',
        ]);
        // A conditional write that matches nothing still answers as before.
        expect(await store.updatePurge('r-sync', ['archiving'], { chunks: 2 }, 'host:2')).toBeUndefined();
        expect(await store.listPurgeChunks('r-sync')).toEqual([
          expect.objectContaining({ seq: 1, deleted: true, purged: 3 }),
        ]);
      },
    );
  });
});

describe('an audit export', () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-export-sync-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes no entry out before the store has made it durable', async () => {
    const order: string[] = [];
    await withSyncedStore(
      join(dir, 'e.db'),
      () => order.push('fsync'),
      async (store) => {
        order.length = 0;
        const audit = createAudit({ store, now: () => new Date() });
        expect(await audit.export({}, () => order.push('line'))).toBe(1);
        expect(order).toEqual(['fsync', 'line']);
      },
    );
  });
});

describe('a group one of whose writes rolls back the whole transaction (SQLITE_FULL)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-group-full-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('fails as a whole: no write after it commits on its own while its caller is told it failed', async () => {
    const db = new Database(join(dir, 'full.db'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT NOT NULL)');
    db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true })) + 2}`);
    const write = groupCommit(db, (v: string) =>
      db.transaction(() => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes)(),
    );
    try {
      const outcomes = await Promise.allSettled(
        ['small1', 'x'.repeat(20_000), 'small2'].map((v) => write(v)),
      );
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(db.prepare('SELECT COUNT(*) AS c FROM t').get()).toEqual({ c: 0 });
      expect(db.inTransaction).toBe(false);
    } finally {
      db.close();
    }
  });
});
