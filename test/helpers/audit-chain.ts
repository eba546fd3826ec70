import Database from 'better-sqlite3';
import type { AuditKey } from '../../src/store/audit-hash.js';
import { auditColumns, auditValues, chainEntry } from '../../src/store/rows.js';

/**
 * Writes a valid chain of `count` entries straight into a migrated SQLite file, in batches inside
 * transactions: the same rows `appendAudit` would write, without one fsync per entry, so tests and
 * the bench can have tens of thousands (or a million) of them in seconds.
 */
export function seedAuditChain(path: string, count: number, key?: AuditKey): void {
  const db = new Database(path);
  try {
    const insert = db.prepare(
      `INSERT INTO audit_log (${auditColumns.join(', ')}) VALUES (${auditColumns.map(() => '?').join(', ')})`,
    );
    const setHead = db.prepare('UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1');
    let head = db.prepare('SELECT seq, hash FROM audit_head WHERE id = 1').get() as {
      seq: number;
      hash: string;
    };
    const t0 = Date.parse('2030-01-01T00:00:00.000Z');
    const batch = db.transaction((n: number) => {
      for (let i = 0; i < n; i++) {
        const seq = head.seq + 1;
        const entry = chainEntry(
          {
            at: new Date(t0 + seq * 1000).toISOString(),
            actorId: `U0ACTOR${seq % 7}`,
            actorName: `actor ${seq % 7}`,
            via: seq % 2 ? 'slack' : 'cli',
            channel: 'C0INCIDENT',
            action: seq % 5 ? 'command.status' : 'action.pause',
            target: `pushizo/queue-${seq % 50}`,
            params: { args: [`pushizo/queue-${seq % 50}`] },
            outcome: 'ok',
          },
          head,
          key,
        );
        insert.run(...auditValues(entry));
        head = { seq: entry.seq, hash: entry.hash };
      }
      setHead.run(head.seq, head.hash);
    });
    for (let done = 0; done < count; done += 10_000) batch(Math.min(10_000, count - done));
  } finally {
    db.close();
  }
}
