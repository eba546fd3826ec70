import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { withSchema } from '../helpers/cli-run.js';
import { describePostgres, POSTGRES_SHOWN, POSTGRES_URL } from '../helpers/postgres.js';
import { describeTwoPersonFlow } from '../helpers/two-person-flow.js';

await describePostgres('two people pause and resume from the command line (PostgreSQL store)', () => {
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
});
