import { ErrorCode, OpsError } from '../errors.js';
import type { Store } from './store.js';

/** The PostgreSQL store (and `pg`), for `store: postgres://…`. */
const loadPostgresStore = () => import('./postgres.js');

/** The SQLite store (and `better-sqlite3`), for `store: sqlite:…`. */
const loadSqliteStore = () => import('./sqlite.js');

/**
 * Opens the store named by the `store:` config value: `sqlite:<path>` (relative paths are relative
 * to the working directory; `sqlite::memory:` for a throwaway) or `postgres://…` / `postgresql://…`.
 * A PostgreSQL URL may name the schema to keep the tables in with `?schema=<name>` (created if
 * missing), so several bots, or test runs, can share one database; without it the connection's
 * default search_path applies. Call `migrate()` on the result before use.
 *
 * Async because only the driver the spec names is loaded (the two seams above): the command line with
 * a SQLite store never loads `pg`, and the other way round.
 */
export async function openStore(spec: string): Promise<Store> {
  if (spec.startsWith('sqlite:')) {
    const path = spec.slice('sqlite:'.length);
    if (!path) throw new OpsError(ErrorCode.BadArgument, { message: '`store: sqlite:` needs a file path' });
    return (await loadSqliteStore()).createSqliteStore(path);
  }
  if (/^postgres(ql)?:\/\//.test(spec)) {
    const { url, schema } = splitSchema(spec);
    return (await loadPostgresStore()).createPostgresStore(url, schema === undefined ? {} : { schema });
  }
  throw new OpsError(ErrorCode.BadArgument, {
    message: 'The `store` setting is not valid.',
    valid: '`sqlite:<path>` or `postgres://…`',
  });
}

/** Takes `schema` out of a PostgreSQL URL's query: it is ours, not a libpq parameter. */
function splitSchema(spec: string): { url: string; schema?: string } {
  const query = spec.indexOf('?');
  if (query === -1) return { url: spec };
  const params = new URLSearchParams(spec.slice(query + 1));
  const schema = params.get('schema');
  if (schema === null) return { url: spec };
  if (schema === '') {
    throw new OpsError(ErrorCode.BadArgument, { message: '`?schema=` in the `store` URL needs a name' });
  }
  params.delete('schema');
  const rest = params.toString();
  return { url: spec.slice(0, query) + (rest ? `?${rest}` : ''), schema };
}
