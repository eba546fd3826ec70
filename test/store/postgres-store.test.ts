import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { OpsError } from '../../src/errors.js';
import { createPostgresStore } from '../../src/store/postgres.js';
import { describePostgres, POSTGRES_SHOWN, POSTGRES_URL } from '../helpers/postgres.js';
import { describeStore, type StoreHarness } from './store-contract.js';

const url = POSTGRES_URL;
const shownUrl = POSTGRES_SHOWN;

/** Each test gets its own schema, dropped afterwards, so runs never see each other's rows. */
async function makePostgresHarness(): Promise<StoreHarness> {
  const schema = `qo_test_${randomBytes(6).toString('hex')}`;
  const raw = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await raw.connect();
  return {
    open: () => createPostgresStore(url, { schema }),
    async sql(query, params = []) {
      let n = 0;
      const text = query.replace(/\?/g, () => `$${++n}`);
      return (await raw.query(text, params)).rows;
    },
    async holdMigrationLock() {
      // The key src/store/postgres.ts migrates under.
      const key = `queue-ops.migrate:${schema}`;
      await raw.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
      return async () => {
        await raw.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
      };
    },
    async destroy() {
      await raw.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await raw.end();
    },
  };
}

await describePostgres('the PostgreSQL store', () => {
  describeStore(`postgres store (${shownUrl}, a fresh schema per test)`, makePostgresHarness);

  describe('postgres store that refuses us', () => {
    it('a wrong role or database is StoreUnavailable naming it, never the password', async () => {
      for (const [change, named] of [
        [
          (u: URL) => {
            u.username = 'qo_no_such_role';
          },
          'qo_no_such_role',
        ],
        [
          (u: URL) => {
            u.pathname = '/qo_no_such_db';
          },
          'qo_no_such_db',
        ],
      ] as const) {
        const wrong = new URL(url);
        wrong.password = 'hunter2-secret';
        change(wrong);
        const store = createPostgresStore(wrong.toString());
        const error = await store.migrate().catch((e: unknown) => e);
        await store.close();
        expect(error).toBeInstanceOf(OpsError);
        expect((error as OpsError).code).toBe('StoreUnavailable');
        expect(String((error as OpsError).params.reason)).toContain(named);
        expect(JSON.stringify(error) + String(error)).not.toContain('hunter2');
      }
    });
  });
});
