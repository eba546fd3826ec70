import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAudit } from '../../src/audit/audit.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';

/**
 * Two hundred slash commands arriving together each write a seen signature (before the ack) and
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
