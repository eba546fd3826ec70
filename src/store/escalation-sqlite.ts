import type Database from 'better-sqlite3';
import type { Alert } from './alert.js';
import {
  alertColumns,
  alertRowData,
  outboxLaneFilter,
  rowToAlert,
  rowToOutbox,
  rowToSilence,
  SILENCE_INSERT_COLUMNS,
  silenceValues,
} from './escalation-rows.js';
import { unsynced } from './group-commit.js';
import type {
  AlertMethods,
  EscalationStore,
  LeaseMethods,
  OutboxInput,
  OutboxMethods,
  SampleMethods,
  SampleRow,
  SilenceMethods,
} from './store.js';

type Row = Record<string, unknown>;

/** A statement prepared on its first use (after the migrations), then reused. */
export type Prepared = (sql: string) => () => Database.Statement;
type Wrap = <T>(fn: () => T) => Promise<T>;
/** Runs its commits without an fsync (see `unsynced`). */
type WithoutSync = <T>(fn: () => T) => T;

/** Queues `items` for an alert inside the caller's transaction; an update already waiting is not queued twice. */
function enqueue(db: Database.Database, alertId: string, items: readonly OutboxInput[], at: string): void {
  for (const item of items) {
    if (item.kind === 'update') {
      const waiting = db
        .prepare(
          `SELECT 1 FROM escalation_outbox WHERE alert_id = ? AND kind = 'update'
               AND done_at IS NULL AND claimed_by IS NULL`,
        )
        .get(alertId);
      if (waiting) continue;
    }
    db.prepare(
      `INSERT INTO escalation_outbox (alert_id, kind, payload, created_at, not_before)
         VALUES (?, ?, ?, ?, ?)`,
    ).run(alertId, item.kind, JSON.stringify(item.payload), at, at);
  }
}

/** The sample history, written and pruned without an fsync. */
function sqliteSamples(wrap: Wrap, prepared: Prepared, withoutSync: WithoutSync): SampleMethods {
  // What a tick runs, prepared once.
  const insertSample = prepared('INSERT INTO escalation_samples (at, data) VALUES (?, ?)');
  const newestSamples = prepared(
    'SELECT id, at, data FROM escalation_samples ORDER BY at DESC, id DESC LIMIT ?',
  );
  const samplesSince = prepared('SELECT id, at, data FROM escalation_samples WHERE at >= ? ORDER BY at, id');
  const samplesPage = prepared(
    'SELECT id, at, data FROM escalation_samples WHERE at >= ? AND (at > ? OR (at = ? AND id > ?)) ORDER BY at, id LIMIT ?',
  );
  const deleteSamples = prepared('DELETE FROM escalation_samples WHERE at < ?');
  return {
    appendSample: (at, data) =>
      wrap(() => Number(withoutSync(() => insertSample().run(at, data)).lastInsertRowid)),
    listSamples: (sinceAt, page) =>
      wrap(() => {
        if (!page) return samplesSince().all(sinceAt) as SampleRow[];
        const after = page.after ?? { at: '', id: 0 };
        return samplesPage().all(sinceAt, after.at, after.at, after.id, page.limit) as SampleRow[];
      }),
    newestSamples: (limit) => wrap(() => newestSamples().all(limit) as SampleRow[]),
    pruneSamples: (beforeAt) => wrap(() => withoutSync(() => deleteSamples().run(beforeAt).changes)),
  };
}

/** Alerts: each write conditional on its version, with the outbox items it causes, in one transaction. */
function sqliteAlerts(db: Database.Database, wrap: Wrap, prepared: Prepared): AlertMethods {
  const insert = db.transaction((alert: Alert, outbox: readonly OutboxInput[]): Alert | undefined => {
    const c = alertColumns(alert);
    const done = db
      .prepare(
        `INSERT OR IGNORE INTO escalation_alerts
           (id, alert_key, open_key, status, version, opened_at, updated_at, data, group_id, cause_id)
         VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`,
      )
      .run(
        c.id,
        c.alert_key,
        c.open_key,
        c.status,
        c.opened_at,
        c.updated_at,
        alertRowData(alert),
        c.group_id,
        c.cause_id,
      );
    if (done.changes === 0) return undefined;
    enqueue(db, alert.id, outbox, alert.updatedAt);
    return { ...alert, version: 1 };
  });

  const write = db.transaction((alert: Alert, outbox: readonly OutboxInput[]): Alert | undefined => {
    const c = alertColumns(alert);
    let changes: number;
    try {
      changes = db
        .prepare(
          `UPDATE escalation_alerts SET open_key = ?, status = ?, version = version + 1,
             updated_at = ?, data = ?, group_id = ?, cause_id = ? WHERE id = ? AND version = ?`,
        )
        .run(
          c.open_key,
          c.status,
          c.updated_at,
          alertRowData(alert),
          c.group_id,
          c.cause_id,
          alert.id,
          alert.version,
        ).changes;
    } catch (error) {
      // Reopening while a newer alert with the same key fires: that one stands.
      if (String((error as { code?: unknown }).code).startsWith('SQLITE_CONSTRAINT')) return undefined;
      throw error;
    }
    if (changes === 0) return undefined;
    enqueue(db, alert.id, outbox, alert.updatedAt);
    return { ...alert, version: alert.version + 1 };
  });

  const firingAlerts = prepared(
    "SELECT * FROM escalation_alerts WHERE status = 'firing' ORDER BY opened_at, id",
  );
  const newestResolved = prepared(
    `SELECT * FROM escalation_alerts WHERE alert_key = ? AND status = 'resolved'
     ORDER BY updated_at DESC LIMIT 1`,
  );

  return {
    getAlert: (id) =>
      wrap(() => {
        const row = db.prepare('SELECT * FROM escalation_alerts WHERE id = ?').get(id) as Row | undefined;
        return row ? rowToAlert(row) : undefined;
      }),
    listAlerts: (options) =>
      wrap(() => {
        if (options.status === 'firing') return (firingAlerts().all() as Row[]).map(rowToAlert);
        const out: Alert[] = [];
        for (const key of options.keys) {
          const row = newestResolved().get(key) as Row | undefined;
          if (row) out.push(rowToAlert(row));
        }
        return out;
      }),
    listAlertsInSpan: (sinceAt, untilAt, limit) =>
      wrap(() =>
        (
          db
            .prepare(
              `SELECT * FROM escalation_alerts WHERE opened_at <= ?
                 AND (status = 'firing' OR updated_at >= ?) ORDER BY opened_at, id LIMIT ?`,
            )
            .all(untilAt, sinceAt, limit) as Row[]
        ).map(rowToAlert),
      ),
    insertAlert: (alert, outbox) => wrap(() => insert.immediate(alert, outbox)),
    writeAlert: (alert, outbox) => wrap(() => write.immediate(alert, outbox)),

    listGroup: (groupId) =>
      wrap(() =>
        (
          db
            .prepare('SELECT * FROM escalation_alerts WHERE group_id = ? ORDER BY opened_at, id')
            .all(groupId) as Row[]
        ).map(rowToAlert),
      ),
  };
}

/** The outbox's delivery: claimed by one sender, completed with the message it posted in one transaction. */
function sqliteOutbox(
  db: Database.Database,
  wrap: Wrap,
  prepared: Prepared,
  withoutSync: WithoutSync,
): OutboxMethods {
  const complete = db.transaction(
    (
      seq: number,
      at: string,
      outcome: string,
      message: { alertId: string; channel: string; ts: string } | undefined,
      error: string | undefined,
    ) => {
      db.prepare(
        'UPDATE escalation_outbox SET done_at = ?, outcome = ?, last_error = ?, claimed_until = NULL WHERE seq = ?',
      ).run(at, outcome, error ?? null, seq);
      if (!message) return;
      const row = db.prepare('SELECT * FROM escalation_alerts WHERE id = ?').get(message.alertId) as
        | Row
        | undefined;
      if (!row) return;
      const alert = rowToAlert(row);
      db.prepare('UPDATE escalation_alerts SET data = ?, version = version + 1 WHERE id = ?').run(
        alertRowData({ ...alert, channel: message.channel, messageTs: message.ts }),
        message.alertId,
      );
    },
  );
  const deleteOutbox = prepared('DELETE FROM escalation_outbox WHERE done_at IS NOT NULL AND done_at < ?');

  return {
    nextOutbox: (lane, now) =>
      wrap(() => {
        const [where, params] = outboxLaneFilter(lane, now, () => '?');
        const row = db
          .prepare(`SELECT * FROM escalation_outbox o WHERE done_at IS NULL ${where} ORDER BY seq LIMIT 1`)
          .get(...params) as Row | undefined;
        return row ? rowToOutbox(row) : undefined;
      }),
    claimOutbox: (seq, owner, until, now) =>
      wrap(
        () =>
          db
            .prepare(
              `UPDATE escalation_outbox SET claimed_by = ?, claimed_until = ?
               WHERE seq = ? AND done_at IS NULL
                 AND (claimed_until IS NULL OR claimed_until < ? OR claimed_by = ?)`,
            )
            .run(owner, until, seq, now, owner).changes === 1,
      ),
    completeOutbox: (seq, at, outcome, message, error) =>
      wrap(() => complete.immediate(seq, at, outcome, message, error)),
    retryOutbox: (seq, error, notBefore) =>
      wrap(() => {
        db.prepare(
          `UPDATE escalation_outbox SET attempts = attempts + 1, last_error = ?, not_before = ?,
             claimed_by = NULL, claimed_until = NULL WHERE seq = ?`,
        ).run(error, notBefore, seq);
      }),
    pendingOutbox: () =>
      wrap(
        () =>
          (
            db.prepare('SELECT COUNT(*) AS n FROM escalation_outbox WHERE done_at IS NULL').get() as {
              n: number;
            }
          ).n,
      ),
    // Rows delivered a day ago: one back after a power cut goes with the next tick's pruning.
    pruneOutbox: (beforeAt) => wrap(() => withoutSync(() => deleteOutbox().run(beforeAt).changes)),
  };
}

function sqliteSilences(db: Database.Database, wrap: Wrap, prepared: Prepared): SilenceMethods {
  const silencesAt = prepared(
    `SELECT * FROM escalation_silences WHERE lifted_at IS NULL AND expires_at > ? ORDER BY created_at, id`,
  );
  return {
    insertSilence: (silence) =>
      wrap(() => {
        db.prepare(
          `INSERT INTO escalation_silences (${SILENCE_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`,
        ).run(...silenceValues(silence));
      }),
    getSilence: (id) =>
      wrap(() => {
        const row = db.prepare('SELECT * FROM escalation_silences WHERE id = ?').get(id) as Row | undefined;
        return row ? rowToSilence(row) : undefined;
      }),
    listSilences: (at) => wrap(() => (silencesAt().all(at) as Row[]).map(rowToSilence)),
    liftSilence: (id, by, at) =>
      wrap(() => {
        const lifted = db
          .prepare(
            `UPDATE escalation_silences SET lifted_by = ?, lifted_at = ?
             WHERE id = ? AND lifted_at IS NULL AND expires_at > ? RETURNING *`,
          )
          // all(), not get(): a get() leaves this autocommit statement unfinished, and a commit
          // that failed (a full disk) would go unnoticed.
          .all(by, at, id, at)[0] as Row | undefined;
        if (lifted) return { silence: rowToSilence(lifted), changed: true };
        const row = db.prepare('SELECT * FROM escalation_silences WHERE id = ?').get(id) as Row | undefined;
        return row ? { silence: rowToSilence(row), changed: false } : undefined;
      }),
  };
}

/** The leader lease: renewed without an fsync, taken (or taken over) with one. */
function sqliteLease(
  db: Database.Database,
  wrap: Wrap,
  prepared: Prepared,
  withoutSync: WithoutSync,
): LeaseMethods {
  const renewLease = prepared('UPDATE escalation_lease SET expires_at = ? WHERE name = ? AND owner = ?');
  const lease = db.transaction((name: string, owner: string, until: string, now: string): boolean => {
    const row = db
      .prepare(
        `INSERT INTO escalation_lease (name, owner, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
         WHERE escalation_lease.owner = excluded.owner OR escalation_lease.expires_at < ?
         RETURNING owner`,
      )
      .get(name, owner, until, now);
    return row !== undefined;
  });

  return {
    // Ours already (whether or not it ran out meanwhile, as the take below allows): renewed
    // unsynced; taken, or taken over, with an fsync.
    acquireLease: (name, owner, until, now) =>
      wrap(
        () =>
          withoutSync(() => renewLease().run(until, name, owner).changes === 1) ||
          lease.immediate(name, owner, until, now),
      ),
    releaseLease: (name, owner) =>
      wrap(() => {
        db.prepare('DELETE FROM escalation_lease WHERE name = ? AND owner = ?').run(name, owner);
      }),
    getLease: (name) =>
      wrap(() => {
        const row = db.prepare('SELECT owner, expires_at FROM escalation_lease WHERE name = ?').get(name) as
          | { owner: string; expires_at: string }
          | undefined;
        return row ? { owner: row.owner, expiresAt: row.expires_at } : undefined;
      }),
  };
}

/**
 * The escalation tables on SQLite. Writes that read first run in `BEGIN IMMEDIATE`, so two
 * processes on one file (the bot and a `monitor --once`) take turns.
 *
 * Alerts, their outbox items and a lease changing hands are committed with the connection's
 * `synchronous=FULL`. What the monitor writes every tick besides is not fsynced (see `unsynced`):
 * the sample history (monitoring data, taken again next tick; a sample lost to a power cut is a
 * gap in a chart), its pruning, and the renewal of a lease already held. A lease matters only to
 * processes sharing this file, on one machine, which a power cut stops with it; and a renewal
 * lost with a crash leaves the lease as its previous renewal wrote it, still ours.
 */
export function createSqliteEscalation(
  db: Database.Database,
  wrap: Wrap,
  /** A statement prepared on its first use (after the migrations), then reused. */
  prepared: Prepared,
): EscalationStore {
  const withoutSync = unsynced(db);
  return {
    ...sqliteSamples(wrap, prepared, withoutSync),
    ...sqliteAlerts(db, wrap, prepared),
    ...sqliteOutbox(db, wrap, prepared, withoutSync),
    ...sqliteSilences(db, wrap, prepared),
    ...sqliteLease(db, wrap, prepared, withoutSync),
  };
}
