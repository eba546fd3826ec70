import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { OpsError } from '../../src/errors.js';
import { messages } from '../../src/i18n/index.js';
import { createPostgresStore } from '../../src/store/postgres.js';
import { describePostgres, POSTGRES_SHOWN, POSTGRES_URL } from '../helpers/postgres.js';
import { describeStore, type StoreHarness, sampleRequest } from './store-contract.js';

const url = POSTGRES_URL;
const shownUrl = POSTGRES_SHOWN;

/** Each test gets its own schema, dropped afterwards, so runs never see each other's rows. */
async function makePostgresHarness(): Promise<StoreHarness & { schema: string }> {
  const schema = `qo_test_${randomBytes(6).toString('hex')}`;
  const raw = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await raw.connect();
  return {
    schema,
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

  describe('postgres store whose COMMIT goes unanswered', () => {
    it('says it is not known whether it was saved, and it was (the server committed after the client gave up)', async () => {
      const harness = await makePostgresHarness();
      const store = createPostgresStore(url, { schema: harness.schema, queryTimeoutMs: 1_000 });
      try {
        await store.migrate();
        // A deferred trigger runs at COMMIT: the server takes 3 s to commit, the client waits 1 s.
        await harness.sql(`CREATE FUNCTION slow_commit() RETURNS trigger AS $$
          BEGIN PERFORM pg_sleep(3); RETURN NULL; END $$ LANGUAGE plpgsql`);
        await harness.sql(`CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON approval_requests
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`);
        const request = sampleRequest();
        const error = await store.createRequest(request).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpsError);
        expect((error as OpsError).params).toMatchObject({ unsure: true });
        expect(messages('en').errors.describe(error as OpsError)).toMatch(
          /^The bot's own store stopped answering while saving \(.+\); whether it was saved is not known: look with `\/queue pending`/,
        );
        await harness.sql('DROP TRIGGER slow_commit ON approval_requests');
        // The server went on and committed: "nothing was changed" would have been wrong.
        let stored = await store.getRequest(request.id);
        for (let i = 0; !stored && i < 50; i++) {
          await new Promise((r) => setTimeout(r, 200));
          stored = await store.getRequest(request.id);
        }
        expect(stored?.id).toBe(request.id);
      } finally {
        await store.close();
        await harness.destroy();
      }
    }, 30_000);
  });
});
