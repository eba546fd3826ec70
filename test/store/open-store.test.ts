import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { OpsError } from '../../src/errors.js';
import { openStore } from '../../src/store/open.js';
import { createSqliteStore } from '../../src/store/sqlite.js';

let dir: string;
let cwd: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'queue-ops-open-'));
  cwd = process.cwd();
});
afterEach(() => {
  process.chdir(cwd);
  rmSync(dir, { recursive: true, force: true });
});

it('the default sqlite:./data/queue-ops.db creates ./data and a WAL database with synchronous=FULL', async () => {
  process.chdir(dir);
  const store = await openStore('sqlite:./data/queue-ops.db');
  await store.migrate();
  await store.appendAudit({
    at: new Date().toISOString(),
    actorId: 'cli:ops',
    via: 'cli',
    action: 'x',
    outcome: 'ok',
  });
  await store.close();
  const file = join(dir, 'data', 'queue-ops.db');
  expect(existsSync(file)).toBe(true);
  const raw = new Database(file);
  expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
  raw.close();
});

it('a sqlite store runs its connection in WAL mode with synchronous=FULL, back at it after each unsynced tick write', async () => {
  const store = createSqliteStore(join(dir, 'nested', 'deeper', 'sync.db'));
  await store.migrate();
  expect(store.settings()).toEqual({ journalMode: 'wal', synchronous: 2 });
  // What a monitor tick writes without an fsync; the audit entry and alert after it still get one.
  const at = new Date().toISOString();
  await store.escalation.acquireLease('monitor', 'me', at, at);
  await store.escalation.acquireLease('monitor', 'me', at, at);
  await store.escalation.appendSample(at, '{}');
  await store.escalation.pruneSamples(at);
  await store.escalation.pruneOutbox(at);
  expect(store.settings()).toEqual({ journalMode: 'wal', synchronous: 2 });
  await store.close();
});

it('a postgres:// or postgresql:// value opens a PostgreSQL store without connecting yet', async () => {
  for (const spec of ['postgres://postgres@127.0.0.1:1/none', 'postgresql://postgres@127.0.0.1:1/none']) {
    const store = await openStore(spec);
    await expect(store.migrate()).rejects.toMatchObject({ code: 'StoreUnavailable' });
    await store.close();
  }
});

it('any other value is a BadArgument naming the accepted forms', async () => {
  await expect(openStore('mysql://x')).rejects.toThrow(OpsError);
  await expect(openStore('sqlite:')).rejects.toThrow(OpsError);
});
