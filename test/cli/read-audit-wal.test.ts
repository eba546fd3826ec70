import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonOf, runCli, tempDir, writeConfig } from '../actions/cli-helpers.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();

/**
 * A read-only verb from the binary is audited like any other, but its process exits right after:
 * the SQLite store is closed without the last connection's checkpoint and the WAL is kept (two to
 * four fsyncs less a run). What was committed stays durable and is read back by the next process.
 */
describe('the audit of a read-only command line run, SQLite store', () => {
  const dirs: { remove(): void }[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.remove();
  });

  it('records every `--json status` run, readable by the next process, with the WAL left in place', async () => {
    const tmp = tempDir('read-audit');
    dirs.push(tmp);
    const store = join(tmp.dir, 'store.db');
    const config = writeConfig(tmp.dir, `sqlite:${store}`, [
      'systems:',
      `  - { name: hs, type: bullmq, redis: "${redisUrl}", prefix: "ra${process.pid}" }`,
    ]);
    for (let run = 1; run <= 3; run++) {
      const out = await runCli(['--config', config, '--json', 'status']);
      expect(jsonOf(out).ok, out.stderr).toBe(true);
      // Kept for the next process: not checkpointed into the database file and deleted at exit.
      expect(existsSync(`${store}-wal`)).toBe(true);
      const db = new Database(store, { readonly: true });
      try {
        const rows = db.prepare('SELECT seq, action FROM audit_log ORDER BY seq').all() as {
          seq: number;
          action: string;
        }[];
        expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: run }, (_, i) => i + 1));
      } finally {
        db.close();
      }
    }
    const verify = await runCli(['--config', config, '--json', 'audit', 'verify']);
    expect(jsonOf(verify).ok, verify.stdout).toBe(true);
  }, 60_000);
});
