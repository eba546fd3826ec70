import type { RunSql } from './purges.js';
import type { LimitRecord, LimitState, LimitStore } from './store.js';

type Row = Record<string, unknown>;

function rowToLimit(row: Row): LimitRecord {
  const out: LimitRecord = {
    id: String(row.id),
    system: String(row.system),
    target: String(row.target),
    kind: String(row.kind) as LimitRecord['kind'],
    value: JSON.parse(String(row.value)) as LimitRecord['value'],
    previous: JSON.parse(String(row.previous)) as LimitRecord['previous'],
    state: String(row.state) as LimitState,
    setBy: String(row.set_by),
    setAt: String(row.set_at),
  };
  if (row.expires_at) out.expiresAt = String(row.expires_at);
  if (row.ended_at) out.endedAt = String(row.ended_at);
  if (row.ended_by) out.endedBy = String(row.ended_by);
  return out;
}

/** The limit bookkeeping, the same SQL on SQLite and PostgreSQL. */
export function limitMethods(run: RunSql): LimitStore {
  return {
    async recordLimit(limit, at) {
      // The unique index allows one active limit per target and kind: the one in force is
      // replaced first (the new one carries its `previous`, see the limits service).
      await run(
        "UPDATE queue_limits SET state = 'replaced', ended_at = ?, ended_by = ? WHERE system = ? AND target = ? AND kind = ? AND state = 'active'",
        [at, limit.id, limit.system, limit.target, limit.kind],
      );
      await run(
        `INSERT INTO queue_limits (id, system, target, kind, value, previous, state, set_by, set_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)`,
        [
          limit.id,
          limit.system,
          limit.target,
          limit.kind,
          JSON.stringify(limit.value),
          JSON.stringify(limit.previous),
          limit.setBy,
          limit.setAt,
          limit.expiresAt ?? null,
        ],
      );
    },

    async activeLimits(system) {
      const { rows } = await run(
        system === undefined
          ? "SELECT * FROM queue_limits WHERE state = 'active' ORDER BY system, target, kind"
          : "SELECT * FROM queue_limits WHERE state = 'active' AND system = ? ORDER BY target, kind",
        system === undefined ? [] : [system],
      );
      return rows.map(rowToLimit);
    },

    async dueLimits(at) {
      const { rows } = await run(
        "SELECT * FROM queue_limits WHERE state = 'active' AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at, id",
        [at],
      );
      return rows.map(rowToLimit);
    },

    async endLimit(id, state, at, by) {
      const { changes } = await run(
        "UPDATE queue_limits SET state = ?, ended_at = ?, ended_by = ? WHERE id = ? AND state = 'active'",
        [state, at, by, id],
      );
      return changes === 1;
    },

    async queueLimitNotice(limitId, payload, at) {
      // `alert_id` holds the limit's id: a notice belongs to no alert, and the outbox knows it by kind.
      await run(
        `INSERT INTO escalation_outbox (alert_id, kind, payload, created_at, not_before) VALUES (?, 'notice', ?, ?, ?)`,
        [limitId, JSON.stringify(payload), at, at],
      );
    },
  };
}
