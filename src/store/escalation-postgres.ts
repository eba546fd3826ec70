import type pg from 'pg';
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

/** A sample row as pg gives it (a BIGSERIAL id comes as text). */
const sampleRow = (row: { id: string | number; at: string; data: string }): SampleRow => ({
  id: Number(row.id),
  at: row.at,
  data: row.data,
});

type Row = Record<string, unknown>;

/**
 * A `WITH` that turns `synchronous_commit` off for the transaction of the one statement it
 * prefixes: the server answers without waiting for the commit to reach its disk, and a crash of
 * the server loses at most its last fraction of a second of such commits. The statement must
 * read `unsynced` (a `WITH` nobody reads is not run); a statement that changes no row commits
 * nothing to wait for either way. For what the monitor writes every tick besides its alerts: see
 * `createPostgresEscalation`.
 */
const UNSYNCED = "WITH unsynced AS (SELECT set_config('synchronous_commit', 'off', true) AS off)";

/** Runs a statement, its failure mapped to a coded value. */
export type Wrap = <T>(fn: () => Promise<T>) => Promise<T>;
/** Runs `fn` in one transaction on one client. */
export type InTransaction = <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

/** Queues `items` for an alert inside the caller's transaction; an update already waiting is not queued twice. */
async function enqueue(client: pg.PoolClient, alertId: string, items: readonly OutboxInput[], at: string) {
  for (const item of items) {
    if (item.kind === 'update') {
      // The caller's write holds the alert row, so two writers cannot both decide "none waiting".
      const waiting = await client.query(
        `SELECT 1 FROM escalation_outbox WHERE alert_id = $1 AND kind = 'update'
             AND done_at IS NULL AND claimed_by IS NULL LIMIT 1`,
        [alertId],
      );
      if (waiting.rowCount) continue;
    }
    await client.query(
      `INSERT INTO escalation_outbox (alert_id, kind, payload, created_at, not_before)
         VALUES ($1, $2, $3, $4, $4)`,
      [alertId, item.kind, JSON.stringify(item.payload), at],
    );
  }
}

/** The sample history: written and pruned `UNSYNCED`. */
function postgresSamples(pool: pg.Pool, wrap: Wrap): SampleMethods {
  return {
    appendSample: (at, data) =>
      wrap(async () => {
        const result = await pool.query(
          `${UNSYNCED} INSERT INTO escalation_samples (at, data) SELECT $1, $2 FROM unsynced RETURNING id`,
          [at, data],
        );
        return Number((result.rows[0] as { id: string | number }).id);
      }),
    listSamples: (sinceAt, page) =>
      wrap(async () => {
        if (!page)
          return (
            await pool.query('SELECT id, at, data FROM escalation_samples WHERE at >= $1 ORDER BY at, id', [
              sinceAt,
            ])
          ).rows.map(sampleRow);
        const after = page.after ?? { at: '', id: 0 };
        return (
          await pool.query(
            'SELECT id, at, data FROM escalation_samples WHERE at >= $1 AND (at > $2 OR (at = $2 AND id > $3)) ORDER BY at, id LIMIT $4',
            [sinceAt, after.at, after.id, page.limit],
          )
        ).rows.map(sampleRow);
      }),
    newestSamples: (limit) =>
      wrap(async () =>
        (
          await pool.query('SELECT id, at, data FROM escalation_samples ORDER BY at DESC, id DESC LIMIT $1', [
            limit,
          ])
        ).rows.map(sampleRow),
      ),
    pruneSamples: (beforeAt) =>
      wrap(
        async () =>
          (
            await pool.query(`${UNSYNCED} DELETE FROM escalation_samples USING unsynced WHERE at < $1`, [
              beforeAt,
            ])
          ).rowCount ?? 0,
      ),
  };
}

/** An alert inserted, unless one with its open key is open already, with its outbox items. */
async function insertAlertOn(
  client: pg.PoolClient,
  alert: Alert,
  outbox: readonly OutboxInput[],
): Promise<Alert | undefined> {
  const c = alertColumns(alert);
  const done = await client.query(
    `INSERT INTO escalation_alerts
               (id, alert_key, open_key, status, version, opened_at, updated_at, data, group_id, cause_id)
             VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
    [
      c.id,
      c.alert_key,
      c.open_key,
      c.status,
      c.opened_at,
      c.updated_at,
      alertRowData(alert),
      c.group_id,
      c.cause_id,
    ],
  );
  if (!done.rowCount) return undefined;
  await enqueue(client, alert.id, outbox, alert.updatedAt);
  return { ...alert, version: 1 };
}

/** An alert written over the version it was read at, with its outbox items. */
async function writeAlertOn(
  client: pg.PoolClient,
  alert: Alert,
  outbox: readonly OutboxInput[],
): Promise<Alert | undefined> {
  const c = alertColumns(alert);
  const done = await client.query(
    `UPDATE escalation_alerts SET open_key = $1, status = $2, version = version + 1,
                 updated_at = $3, data = $4, group_id = $7, cause_id = $8 WHERE id = $5 AND version = $6`,
    [
      c.open_key,
      c.status,
      c.updated_at,
      alertRowData(alert),
      alert.id,
      alert.version,
      c.group_id,
      c.cause_id,
    ],
  );
  if (!done.rowCount) return undefined;
  await enqueue(client, alert.id, outbox, alert.updatedAt);
  return { ...alert, version: alert.version + 1 };
}

/** Alerts: each write one conditional statement, in a transaction with its outbox rows. */
function postgresAlerts(pool: pg.Pool, wrap: Wrap, inTransaction: InTransaction): AlertMethods {
  return {
    getAlert: (id) =>
      wrap(async () => {
        const row = (await pool.query('SELECT * FROM escalation_alerts WHERE id = $1', [id])).rows[0] as
          | Row
          | undefined;
        return row ? rowToAlert(row) : undefined;
      }),
    listAlerts: (options) =>
      wrap(async () => {
        if (options.status === 'firing') {
          return (
            await pool.query("SELECT * FROM escalation_alerts WHERE status = 'firing' ORDER BY opened_at, id")
          ).rows.map(rowToAlert);
        }
        if (options.keys.length === 0) return [];
        return (
          await pool.query(
            `SELECT DISTINCT ON (alert_key) * FROM escalation_alerts
              WHERE status = 'resolved' AND alert_key = ANY($1) ORDER BY alert_key, updated_at DESC`,
            [[...options.keys]],
          )
        ).rows.map(rowToAlert);
      }),
    listAlertsInSpan: (sinceAt, untilAt, limit) =>
      wrap(async () =>
        (
          await pool.query(
            `SELECT * FROM escalation_alerts WHERE opened_at <= $1
                 AND (status = 'firing' OR updated_at >= $2) ORDER BY opened_at, id LIMIT $3`,
            [untilAt, sinceAt, limit],
          )
        ).rows.map(rowToAlert),
      ),
    insertAlert: (alert, outbox) =>
      wrap(() => inTransaction((client) => insertAlertOn(client, alert, outbox))),
    writeAlert: (alert, outbox) =>
      wrap(async () => {
        try {
          return await inTransaction((client) => writeAlertOn(client, alert, outbox));
        } catch (error) {
          // Reopening while a newer alert with the same key fires: that one stands.
          if ((error as { code?: unknown }).code === '23505') return undefined;
          throw error;
        }
      }),

    listGroup: (groupId) =>
      wrap(async () =>
        (
          await pool.query('SELECT * FROM escalation_alerts WHERE group_id = $1 ORDER BY opened_at, id', [
            groupId,
          ])
        ).rows.map(rowToAlert),
      ),
  };
}

/** The outbox's delivery: claimed by one sender, completed with the message it posted in one transaction. */
function postgresOutbox(pool: pg.Pool, wrap: Wrap, inTransaction: InTransaction): OutboxMethods {
  return {
    nextOutbox: (lane, now) =>
      wrap(async () => {
        let n = 0;
        const [where, params] = outboxLaneFilter(lane, now, () => `$${++n}`);
        const row = (
          await pool.query(
            `SELECT * FROM escalation_outbox o WHERE done_at IS NULL ${where} ORDER BY seq LIMIT 1`,
            params,
          )
        ).rows[0] as Row | undefined;
        return row ? rowToOutbox(row) : undefined;
      }),
    claimOutbox: (seq, owner, until, now) =>
      wrap(
        async () =>
          (
            await pool.query(
              `UPDATE escalation_outbox SET claimed_by = $1, claimed_until = $2
                WHERE seq = $3 AND done_at IS NULL
                  AND (claimed_until IS NULL OR claimed_until < $4 OR claimed_by = $1)`,
              [owner, until, seq, now],
            )
          ).rowCount === 1,
      ),
    completeOutbox: (seq, at, outcome, message, error) =>
      wrap(() =>
        inTransaction(async (client) => {
          await client.query(
            'UPDATE escalation_outbox SET done_at = $1, outcome = $2, last_error = $3, claimed_until = NULL WHERE seq = $4',
            [at, outcome, error ?? null, seq],
          );
          if (!message) return;
          const row = (
            await client.query('SELECT * FROM escalation_alerts WHERE id = $1 FOR UPDATE', [message.alertId])
          ).rows[0] as Row | undefined;
          if (!row) return;
          const alert = rowToAlert(row);
          await client.query('UPDATE escalation_alerts SET data = $1, version = version + 1 WHERE id = $2', [
            alertRowData({ ...alert, channel: message.channel, messageTs: message.ts }),
            message.alertId,
          ]);
        }),
      ),
    retryOutbox: (seq, error, notBefore) =>
      wrap(async () => {
        await pool.query(
          `UPDATE escalation_outbox SET attempts = attempts + 1, last_error = $1, not_before = $2,
             claimed_by = NULL, claimed_until = NULL WHERE seq = $3`,
          [error, notBefore, seq],
        );
      }),
    pendingOutbox: () =>
      wrap(async () =>
        Number(
          (await pool.query('SELECT COUNT(*) AS n FROM escalation_outbox WHERE done_at IS NULL')).rows[0]
            ?.n ?? 0,
        ),
      ),
    pruneOutbox: (beforeAt) =>
      wrap(
        async () =>
          (
            await pool.query(
              `${UNSYNCED} DELETE FROM escalation_outbox USING unsynced WHERE done_at IS NOT NULL AND done_at < $1`,
              [beforeAt],
            )
          ).rowCount ?? 0,
      ),
  };
}

function postgresSilences(pool: pg.Pool, wrap: Wrap): SilenceMethods {
  return {
    insertSilence: (silence) =>
      wrap(async () => {
        await pool.query(
          `INSERT INTO escalation_silences (${SILENCE_INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`,
          silenceValues(silence),
        );
      }),
    getSilence: (id) =>
      wrap(async () => {
        const row = (await pool.query('SELECT * FROM escalation_silences WHERE id = $1', [id])).rows[0] as
          | Row
          | undefined;
        return row ? rowToSilence(row) : undefined;
      }),
    listSilences: (at) =>
      wrap(async () =>
        (
          await pool.query(
            `SELECT * FROM escalation_silences WHERE lifted_at IS NULL AND expires_at > $1
             ORDER BY created_at, id`,
            [at],
          )
        ).rows.map(rowToSilence),
      ),
    liftSilence: (id, by, at) =>
      wrap(async () => {
        const lifted = (
          await pool.query(
            `UPDATE escalation_silences SET lifted_by = $1, lifted_at = $2
             WHERE id = $3 AND lifted_at IS NULL AND expires_at > $2 RETURNING *`,
            [by, at, id],
          )
        ).rows[0] as Row | undefined;
        if (lifted) return { silence: rowToSilence(lifted), changed: true };
        const row = (await pool.query('SELECT * FROM escalation_silences WHERE id = $1', [id])).rows[0] as
          | Row
          | undefined;
        return row ? { silence: rowToSilence(row), changed: false } : undefined;
      }),
  };
}

/** The leader lease: renewed `UNSYNCED`, taken (or taken over) as the server commits. */
function postgresLease(pool: pg.Pool, wrap: Wrap): LeaseMethods {
  return {
    acquireLease: (name, owner, until, now) =>
      wrap(async () => {
        // Ours already (whether or not it ran out meanwhile, as the take below allows): renewed.
        const renewed = await pool.query(
          `${UNSYNCED} UPDATE escalation_lease SET expires_at = $1 FROM unsynced WHERE name = $2 AND owner = $3`,
          [until, name, owner],
        );
        if (renewed.rowCount === 1) return true;
        const result = await pool.query(
          `INSERT INTO escalation_lease (name, owner, expires_at) VALUES ($1, $2, $3)
           ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
           WHERE escalation_lease.owner = EXCLUDED.owner OR escalation_lease.expires_at < $4
           RETURNING owner`,
          [name, owner, until, now],
        );
        return result.rowCount === 1;
      }),
    releaseLease: (name, owner) =>
      wrap(async () => {
        await pool.query('DELETE FROM escalation_lease WHERE name = $1 AND owner = $2', [name, owner]);
      }),
    getLease: (name) =>
      wrap(async () => {
        const row = (
          await pool.query('SELECT owner, expires_at FROM escalation_lease WHERE name = $1', [name])
        ).rows[0] as { owner: string; expires_at: string } | undefined;
        return row ? { owner: row.owner, expiresAt: row.expires_at } : undefined;
      }),
  };
}

/**
 * The escalation tables on PostgreSQL: each alert write is one conditional UPDATE (or an INSERT
 * that yields to the UNIQUE open key) in a transaction with its outbox rows, so two monitors
 * during a handover can never both open, or both post, the same alert.
 *
 * Alerts, their outbox items and a lease changing hands are committed as the server is set to.
 * What the monitor writes every tick besides is committed `UNSYNCED`: the sample history
 * (monitoring data), its pruning, and the renewal of a lease already held. A renewal lost with a
 * crash of the server leaves the lease as the previous one wrote it, half an interval earlier
 * and still ours; the holder renews it again as soon as the server is back.
 */
export function createPostgresEscalation(
  pool: pg.Pool,
  wrap: Wrap,
  inTransaction: InTransaction,
): EscalationStore {
  return {
    ...postgresSamples(pool, wrap),
    ...postgresAlerts(pool, wrap, inTransaction),
    ...postgresOutbox(pool, wrap, inTransaction),
    ...postgresSilences(pool, wrap),
    ...postgresLease(pool, wrap),
  };
}
