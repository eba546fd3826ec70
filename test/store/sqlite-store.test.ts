import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../../src/store/sqlite.js';
import { describeStore, type StoreHarness } from './store-contract.js';

async function makeSqliteHarness(): Promise<StoreHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-store-'));
  // A nested path: the store has to create its parent directory itself.
  const path = join(dir, 'data', 'queue-ops.db');
  let raw: Database.Database | undefined;
  return {
    open: () => createSqliteStore(path),
    async sql(query, params = []) {
      raw ??= new Database(path);
      raw.pragma('busy_timeout = 5000');
      const statement = raw.prepare(query);
      if (statement.reader) return statement.all(...params) as Record<string, unknown>[];
      statement.run(...params);
      return [];
    },
    async holdMigrationLock() {
      const holder = new Database(path);
      holder.exec('BEGIN IMMEDIATE');
      return async () => {
        holder.exec('ROLLBACK');
        holder.close();
      };
    },
    async destroy() {
      raw?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describeStore('sqlite store (a real temp file)', makeSqliteHarness);
