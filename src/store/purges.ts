import type { PurgeChunk, PurgeRecord, PurgeState, PurgeStore } from './store.js';

type Row = Record<string, unknown>;

/**
 * How both stores run one statement: SQL with `?` placeholders (PostgreSQL's adapter numbers
 * them), returning the rows of a `RETURNING` or `SELECT`, and how many rows a write changed.
 */
export type RunSql = (sql: string, params: unknown[]) => Promise<{ rows: Row[]; changes: number }>;

const columns: Record<keyof PurgeRecord, string> = {
  id: 'id',
  system: 'system',
  queue: 'queue',
  backend: 'backend',
  states: 'states',
  state: 'state',
  archivePath: 'archive_path',
  total: 'total',
  chunks: 'chunks',
  archived: 'archived',
  purged: 'purged',
  owner: 'owner',
  heartbeatAt: 'heartbeat_at',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  finishedAt: 'finished_at',
  error: 'error',
  undoneBy: 'undone_by',
  archiveRemovedAt: 'archive_removed_at',
};

const toColumn = (key: keyof PurgeRecord, value: unknown) =>
  key === 'states' ? JSON.stringify(value) : value === undefined ? null : value;

function rowToPurge(row: Row): PurgeRecord {
  const out: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(columns)) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    if (key === 'states') out[key] = JSON.parse(String(value));
    else if (['total', 'chunks', 'archived', 'purged'].includes(key)) out[key] = Number(value);
    else out[key] = value;
  }
  return out as unknown as PurgeRecord;
}

function rowToChunk(row: Row): PurgeChunk {
  return {
    purgeId: String(row.purge_id),
    seq: Number(row.seq),
    file: String(row.file),
    sha256: String(row.sha256),
    bytes: Number(row.bytes),
    records: Number(row.records),
    deleted: Number(row.deleted) === 1,
    purged: Number(row.purged),
    skipped: JSON.parse(String(row.skipped)) as string[],
  };
}

/** The purge bookkeeping, the same SQL on SQLite and PostgreSQL. */
export function purgeMethods(run: RunSql): PurgeStore {
  return {
    async createPurge(purge) {
      const keys = Object.keys(columns) as (keyof PurgeRecord)[];
      await run(
        `INSERT INTO purges (${keys.map((k) => columns[k]).join(', ')}) VALUES (${keys.map(() => '?').join(', ')})`,
        keys.map((k) => toColumn(k, purge[k])),
      );
    },

    async getPurge(id) {
      const { rows } = await run('SELECT * FROM purges WHERE id = ?', [id]);
      return rows[0] ? rowToPurge(rows[0]) : undefined;
    },

    async listPurges(options = {}) {
      const states = options.states;
      if (states && states.length === 0) return [];
      const { rows } = await run(
        `SELECT * FROM purges${states ? ` WHERE state IN (${states.map(() => '?').join(', ')})` : ''} ORDER BY created_at, id`,
        states ? [...states] : [],
      );
      return rows.map(rowToPurge);
    },

    async updatePurge(id, from, patch, owner) {
      if (from.length === 0) return undefined;
      const keys = (Object.keys(patch) as (keyof PurgeRecord)[]).filter((k) => k in columns);
      const assignments = keys.length ? keys.map((k) => `${columns[k]} = ?`).join(', ') : 'state = state';
      const params: unknown[] = keys.map((k) => toColumn(k, (patch as Partial<PurgeRecord>)[k]));
      const where = ['id = ?', `state IN (${from.map(() => '?').join(', ')})`];
      params.push(id, ...from);
      if (owner === null) where.push('owner IS NULL');
      else if (owner !== undefined) {
        where.push('owner = ?');
        params.push(owner);
      }
      const { rows } = await run(
        `UPDATE purges SET ${assignments} WHERE ${where.join(' AND ')} RETURNING *`,
        params,
      );
      return rows[0] ? rowToPurge(rows[0]) : undefined;
    },

    async addPurgeChunk(chunk) {
      await run(
        `INSERT INTO purge_chunks (purge_id, seq, file, sha256, bytes, records, deleted, purged, skipped)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          chunk.purgeId,
          chunk.seq,
          chunk.file,
          chunk.sha256,
          chunk.bytes,
          chunk.records,
          chunk.deleted ? 1 : 0,
          chunk.purged,
          JSON.stringify(chunk.skipped),
        ],
      );
    },

    async markPurgeChunk(purgeId, seq, outcome) {
      await run(
        'UPDATE purge_chunks SET deleted = 1, purged = ?, skipped = ? WHERE purge_id = ? AND seq = ?',
        [outcome.purged, JSON.stringify(outcome.skipped), purgeId, seq],
      );
    },

    async listPurgeChunks(purgeId) {
      const { rows } = await run('SELECT * FROM purge_chunks WHERE purge_id = ? ORDER BY seq', [purgeId]);
      return rows.map(rowToChunk);
    },

    async claimPeriodic(name, at, dueBefore) {
      const updated = await run('UPDATE periodic_runs SET last_at = ? WHERE name = ? AND last_at <= ?', [
        at,
        name,
        dueBefore,
      ]);
      if (updated.changes > 0) return true;
      const inserted = await run(
        'INSERT INTO periodic_runs (name, last_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
        [name, at],
      );
      return inserted.changes > 0;
    },
  };
}

export type { PurgeState };
