import pg from 'pg';
import { describe, it } from 'vitest';

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

/**
 * `describe` over the machine's PostgreSQL, `body` given its URL. When it does not answer: a failing
 * test under CI or REQUIRE_POSTGRES=1, otherwise skipped with a banner that says why and how to
 * run it.
 */
export async function describePostgres(title: string, body: (url: string) => void): Promise<void> {
  const unreachable = await probePostgres();
  if (unreachable && POSTGRES_REQUIRED) {
    describe(title, () => {
      it(`PostgreSQL is reachable at ${POSTGRES_SHOWN} (required because CI or REQUIRE_POSTGRES=1 is set)`, () => {
        throw new Error(`PostgreSQL is not reachable at ${POSTGRES_SHOWN}: ${unreachable}`);
      });
    });
    return;
  }
  if (unreachable)
    console.warn(
      [
        '',
        '!'.repeat(78),
        `!! SKIPPING ${title}: PostgreSQL not reachable at ${POSTGRES_SHOWN}`,
        `!! (${unreachable})`,
        '!! Set TEST_POSTGRES_URL, or REQUIRE_POSTGRES=1 to make this a failure.',
        '!'.repeat(78),
        '',
      ].join('\n'),
    );
  // Its own tests, each listed as skipped when PostgreSQL does not answer (and no hook runs).
  describe.skipIf(Boolean(unreachable))(title, () => body(POSTGRES_URL));
}
