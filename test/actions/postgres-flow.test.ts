import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, it } from 'vitest';
import { POSTGRES_REQUIRED, POSTGRES_SHOWN, POSTGRES_URL, probePostgres, withSchema } from './cli-helpers.js';
import { describeTwoPersonFlow } from './two-person-flow.js';

const unreachable = await probePostgres();

if (!unreachable) {
  // `store: postgres://…?schema=…`: the bot keeps its tables in a schema of this run's own, and the
  // tampering below goes to that schema, so it also proves the URL's schema is the one used.
  describeTwoPersonFlow(`PostgreSQL store at ${POSTGRES_SHOWN}, a fresh schema`, async () => {
    const schema = `qo_actions_${randomBytes(6).toString('hex')}`;
    const raw = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}` });
    await raw.connect();
    return {
      spec: withSchema(POSTGRES_URL, schema),
      async sql(query, params = []) {
        let n = 0;
        return (
          await raw.query(
            query.replace(/\?/g, () => `$${++n}`),
            params,
          )
        ).rows;
      },
      async destroy() {
        await raw.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await raw.end();
      },
    };
  });
} else if (POSTGRES_REQUIRED) {
  describe('two people pause and resume from the command line (PostgreSQL store)', () => {
    it(`PostgreSQL is reachable at ${POSTGRES_SHOWN} (required because CI or REQUIRE_POSTGRES=1 is set)`, () => {
      throw new Error(`PostgreSQL is not reachable at ${POSTGRES_SHOWN}: ${unreachable}`);
    });
  });
} else {
  console.warn(
    [
      '',
      '!'.repeat(78),
      `!! SKIPPING the CLI two-person flow on PostgreSQL: not reachable at ${POSTGRES_SHOWN}`,
      `!! (${unreachable})`,
      '!! Set TEST_POSTGRES_URL, or REQUIRE_POSTGRES=1 to make this a failure.',
      '!'.repeat(78),
      '',
    ].join('\n'),
  );
  describe.skipIf(true)(`two-person flow on PostgreSQL — SKIPPED: not reachable at ${POSTGRES_SHOWN}`, () => {
    it('takes a pause through approval with a PostgreSQL store', () => {});
  });
}
