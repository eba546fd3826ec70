import type { Alert, Silence } from './alert.js';
import type { OutboxItem, OutboxLane } from './store.js';

/** The columns an alert is kept under, beside its JSON record. */
export function alertColumns(alert: Alert) {
  return {
    id: alert.id,
    alert_key: alert.key,
    open_key: alert.status === 'firing' ? alert.key : null,
    status: alert.status,
    opened_at: alert.openedAt,
    updated_at: alert.updatedAt,
    group_id: alert.groupId ?? null,
    cause_id: alert.cause?.id ?? null,
  };
}

/** A new silence's columns, in the order of {@link SILENCE_INSERT_COLUMNS}. */
export const SILENCE_INSERT_COLUMNS = 'id, pattern, reason, created_by, created_at, expires_at';
export function silenceValues(silence: Silence): (string | null)[] {
  return [
    silence.id,
    silence.pattern,
    silence.reason ?? null,
    silence.createdBy,
    silence.createdAt,
    silence.expiresAt,
  ];
}

export function rowToSilence(row: Record<string, unknown>): Silence {
  const silence: Silence = {
    id: String(row.id),
    pattern: String(row.pattern),
    createdBy: String(row.created_by),
    createdAt: String(row.created_at),
    expiresAt: String(row.expires_at),
  };
  if (row.reason !== null && row.reason !== undefined) silence.reason = String(row.reason);
  if (row.lifted_by !== null && row.lifted_by !== undefined) silence.liftedBy = String(row.lifted_by);
  if (row.lifted_at !== null && row.lifted_at !== undefined) silence.liftedAt = String(row.lifted_at);
  return silence;
}

/** The record without `version`, which lives in its own column (the condition of every write). */
export function alertRowData(alert: Alert): string {
  const { version: _version, ...rest } = alert;
  return JSON.stringify(rest);
}

export function rowToAlert(row: Record<string, unknown>): Alert {
  return { ...(JSON.parse(String(row.data)) as Omit<Alert, 'version'>), version: Number(row.version) };
}

export function rowToOutbox(row: Record<string, unknown>): OutboxItem {
  const item: OutboxItem = {
    seq: Number(row.seq),
    alertId: String(row.alert_id),
    kind: row.kind as OutboxItem['kind'],
    payload: JSON.parse(String(row.payload)) as Record<string, unknown>,
    createdAt: String(row.created_at),
    notBefore: String(row.not_before),
    attempts: Number(row.attempts),
  };
  if (row.last_error !== null && row.last_error !== undefined) item.lastError = String(row.last_error);
  if (row.claimed_by !== null && row.claimed_by !== undefined) item.claimedBefore = true;
  return item;
}

/**
 * The extra `WHERE` of `nextOutbox` for a lane, over the outbox aliased `o`, with its parameters
 * (`placeholder` gives each one's marker: `?` for SQLite, `$n` for PostgreSQL). The same SQL in
 * both dialects; `not_before` is an ISO 8601 UTC string, so text order is time order. Charts and
 * pages are each due on their own, after their alert's earlier items of their own kind (a chart
 * after every earlier message of its alert; a page's acknowledgement after its trigger).
 */
export function outboxLaneFilter(
  lane: OutboxLane | undefined,
  now: string | undefined,
  placeholder: () => string,
): [string, string[]] {
  if (lane === 'messages') return ["AND o.kind NOT IN ('chart', 'page')", []];
  if (lane !== 'charts' && lane !== 'pages') return ['', []];
  const due = now === undefined ? '' : `AND o.not_before <= ${placeholder()}`;
  const before = lane === 'charts' ? "m.kind NOT IN ('chart', 'page')" : "m.kind = 'page'";
  return [
    `AND o.kind = '${lane === 'charts' ? 'chart' : 'page'}' ${due}
     AND NOT EXISTS (SELECT 1 FROM escalation_outbox m WHERE m.alert_id = o.alert_id
       AND m.done_at IS NULL AND ${before} AND m.seq < o.seq)`,
    now === undefined ? [] : [now],
  ];
}
