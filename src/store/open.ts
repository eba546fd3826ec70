import { ErrorCode, OpsError } from '../errors.js';
import { createPostgresStore } from './postgres.js';
import { createSqliteStore } from './sqlite.js';
import type { Store } from './store.js';

/**
 * Opens the store named by the `store:` config value: `sqlite:<path>` (relative paths are relative
 * to the working directory; `sqlite::memory:` for a throwaway) or `postgres://…` / `postgresql://…`.
 * Call `migrate()` on the result before use.
 */
export function openStore(spec: string): Store {
  if (spec.startsWith('sqlite:')) {
    const path = spec.slice('sqlite:'.length);
    if (!path) throw new OpsError(ErrorCode.BadArgument, { message: '`store: sqlite:` needs a file path' });
    return createSqliteStore(path);
  }
  if (/^postgres(ql)?:\/\//.test(spec)) return createPostgresStore(spec);
  throw new OpsError(ErrorCode.BadArgument, {
    message: 'The `store` setting is not valid.',
    valid: '`sqlite:<path>` or `postgres://…`',
  });
}
