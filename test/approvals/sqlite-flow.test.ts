import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describeTwoPersonFlow } from '../helpers/two-person-flow.js';

describeTwoPersonFlow('SQLite store', async (dir) => {
  const file = join(dir, 'queue-ops.db');
  return {
    spec: `sqlite:${file}`,
    async sql(query, params = []) {
      // A connection per statement, closed at once: the CLI runs in between and must find no lock.
      const db = new Database(file);
      try {
        const statement = db.prepare(query);
        if (statement.reader) return statement.all(...params) as Record<string, unknown>[];
        statement.run(...params);
        return [];
      } finally {
        db.close();
      }
    },
    async destroy() {},
  };
});
