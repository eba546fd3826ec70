import pg from 'pg';

/** The machine's PostgreSQL for tests: `TEST_POSTGRES_URL` or the local trust-auth one. */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The URL as it may be printed: the password masked. */
export const POSTGRES_SHOWN = POSTGRES_URL.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
/** Under CI, or with REQUIRE_POSTGRES=1, an unreachable PostgreSQL is a failure, not a skip. */
export const POSTGRES_REQUIRED = Boolean(process.env.CI) || process.env.REQUIRE_POSTGRES === '1';

/** Undefined when PostgreSQL answers; otherwise why not. */
export async function probePostgres(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}
