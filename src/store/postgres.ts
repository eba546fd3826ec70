import pg from 'pg';
import { ErrorCode, OpsError } from '../errors.js';
import type { AuditKey } from './audit-hash.js';
import { createPostgresEscalation, type InTransaction, type Wrap } from './escalation-postgres.js';
import { limitMethods } from './limits.js';
import { migrations } from './migrations.js';
import { purgeMethods, type RunSql } from './purges.js';
import {
  AUDIT_HEAD_SQL,
  approvalRefusal,
  auditColumns,
  auditValues,
  chainEntry,
  insertValues,
  PENDING_BY_KEY_SQL,
  patchAssignments,
  rowToAudit,
  rowToRequest,
} from './rows.js';
import {
  type ActionRequest,
  type Approval,
  type ApprovalCheck,
  type ApprovalOutcome,
  type AuditEntry,
  type AuditEntryInput,
  type AuditMethods,
  type CreateRequestResult,
  type RateMethods,
  type RateTake,
  type RequestMethods,
  type RequestPatch,
  RequestStatus,
  type Store,
  type TransitionCheck,
} from './store.js';

/** The pool, or one client inside a transaction: both run a statement the same way. */
type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

type Row = Record<string, unknown>;

/** Options for {@link createPostgresStore}. */
export interface PostgresStoreOptions {
  /**
   * Keep every table in this schema (created if missing) instead of the connection's default.
   * Lets tests, or several bots sharing one database, stay apart.
   */
  schema?: string;
  /** Pool size; default 10. */
  max?: number;
  /** How long a statement may go unanswered before StoreUnavailable; default {@link QUERY_TIMEOUT_MS}. */
  queryTimeoutMs?: number;
}

// Connection-level failures: the database is not there, not the query being wrong.
const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08006',
]);

// The server answered but will not let us in: a wrong role, password or database name. The bot
// cannot use its store any more than if it were down, and PostgreSQL's message names the role or
// database (never the password), which is what the operator needs to fix the URL.
const refusedCodes = new Set(['28000', '28P01', '3D000']);

/**
 * How long a statement may go without an answer. Through a network partition nothing comes back
 * and nothing fails: without a limit a request would wait until the partition heals (a test saw
 * 30 s and more); with it, the user is told the store is not answering. Far above any statement
 * the bot runs (audit reads are paged); migrations, which may rewrite a big table, get their own.
 */
export const QUERY_TIMEOUT_MS = 15_000;
const MIGRATION_TIMEOUT_MS = 10 * 60_000;

/** A statement allowed {@link MIGRATION_TIMEOUT_MS} (pg reads `query_timeout` per query; its types omit it). */
const longQuery = (text: string, values: unknown[] = []): pg.QueryConfig =>
  Object.assign({ text, values }, { query_timeout: MIGRATION_TIMEOUT_MS });

/**
 * A statement on a client whose connection already failed (reset while the client sat between
 * two statements of a transaction): pg refuses it at once with this, and no code.
 */
const NOT_QUERYABLE = /is not queryable/i;

/** The connection itself failed (no answer, reset, terminated): it must not go back to the pool. */
const connectionLost = (error: unknown) =>
  error instanceof Error &&
  (/Connection terminated|Query read timeout/i.test(error.message) ||
    NOT_QUERYABLE.test(error.message) ||
    ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02'].includes(
      String((error as { code?: unknown }).code),
    ));

/**
 * A statement was sent and its connection failed before the answer: the server may have run it.
 * (A client already not queryable refuses before sending: that one certainly did not run.)
 */
const lostInFlight = (error: unknown) =>
  connectionLost(error) && !NOT_QUERYABLE.test(String((error as Error).message));

/** StoreUnavailable for a write or COMMIT that got no answer: whether it was saved is not known. */
async function commitUnsure(error: unknown, timeoutMs?: number): Promise<unknown> {
  const mapped = await wrap(() => Promise.reject(error), { timeoutMs }).catch((e: unknown) => e);
  return mapped instanceof OpsError && mapped.code === ErrorCode.StoreUnavailable
    ? new OpsError(ErrorCode.StoreUnavailable, { ...mapped.params, unsure: true })
    : mapped;
}

/** `relation … does not exist`: the store's tables (or its schema) have not been created yet. */
const UNDEFINED_TABLE = '42P01';

interface WrapOptions {
  /**
   * The statements write: a connection lost or timed out while one was in flight (sent, never
   * answered) may still have changed something, and the user is told it is not known.
   */
  writes?: boolean;
  /** The pool's statement timeout, named in the answer. */
  timeoutMs?: number;
}

async function wrap<T>(fn: () => Promise<T>, options: WrapOptions = {}): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    // Already a coded answer (a COMMIT that went unanswered, a refusal of ours): passed on as it is.
    if (error instanceof OpsError) throw error;
    if (options.writes && lostInFlight(error)) throw await commitUnsure(error, options.timeoutMs);
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && unavailableCodes.has(code)) {
      throw new OpsError(ErrorCode.StoreUnavailable, { reason: code });
    }
    if (typeof code === 'string' && refusedCodes.has(code) && error instanceof Error) {
      throw new OpsError(ErrorCode.StoreUnavailable, { reason: error.message });
    }
    if (
      error instanceof Error &&
      (/Connection terminated|timeout exceeded when trying to connect/i.test(error.message) ||
        NOT_QUERYABLE.test(error.message))
    ) {
      throw new OpsError(ErrorCode.StoreUnavailable, { reason: error.message });
    }
    if (error instanceof Error && /Query read timeout/i.test(error.message)) {
      const seconds = (options.timeoutMs ?? QUERY_TIMEOUT_MS) / 1000;
      throw new OpsError(ErrorCode.StoreUnavailable, { reason: `no answer in ${seconds} s` });
    }
    throw error;
  }
}

/** `?` placeholders as PostgreSQL's `$1, $2, …`. */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** A second pending request for the same thing, refused by the partial unique index. */
const isPendingKeyTaken = (error: unknown) =>
  (error as { code?: unknown }).code === '23505' &&
  (error as { constraint?: unknown }).constraint === 'approval_requests_pending_key';

/** Times a create is tried when the pending request that refused it was decided before we read it. */
const CREATE_ATTEMPTS = 5;

/** `$1, $2, …` from `start`. */
const placeholders = (count: number, start = 1) =>
  Array.from({ length: count }, (_, i) => `$${i + start}`).join(', ');

/** What every part of the store runs its statements through: one pool, its timeout, its transactions. */
interface PostgresSession {
  pool: pg.Pool;
  schema?: string;
  timeoutMs: number;
  /** Every statement's failure as a coded value. */
  guard: Wrap;
  /** As `guard`, for the statements that change what users see: an unanswered one may have landed. */
  writing: Wrap;
  /** `fn` between BEGIN and COMMIT on one client, rolled back (or the client dropped) on failure. */
  inTransaction: InTransaction;
}

const json = (value: unknown) => JSON.stringify(value);

/** The pool, with the listeners that keep a dropped connection from ending the process. */
function openPool(url: string, options: PostgresStoreOptions): PostgresSession {
  const { schema } = options;
  const timeoutMs = options.queryTimeoutMs ?? QUERY_TIMEOUT_MS;
  // Every statement's failure as a coded value; `writing` for the ones that change what users see.
  const guard = <T>(fn: () => Promise<T>) => wrap(fn, { timeoutMs });
  const writing = <T>(fn: () => Promise<T>) => wrap(fn, { timeoutMs, writes: true });
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/i.test(schema)) {
    throw new OpsError(ErrorCode.BadArgument, { message: `\`${schema}\` is not a plain schema name` });
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 10_000,
    query_timeout: timeoutMs,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle connection dropped by the server would otherwise crash the process; the next query
  // gets a fresh connection or reports StoreUnavailable.
  pool.on('error', () => {});
  // The pool listens only to idle connections. One checked out for a transaction whose socket is
  // reset between two statements (a restart, a proxy or firewall cutting it) emits 'error' with no
  // query to hand it to, and an unheard 'error' ends the process. Heard here, the client is left
  // unqueryable: its next statement fails, the transaction reports StoreUnavailable, and the pool
  // discards it on release.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });

  async function inTransaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let lost = false;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      try {
        await client.query('COMMIT');
      } catch (error) {
        if (!lostInFlight(error)) throw error;
        // The COMMIT was sent and never answered: the server may have committed it, or may once
        // the network heals. "Nothing was changed" could be wrong, so the user is told it is not known.
        lost = true;
        throw await commitUnsure(error, timeoutMs);
      }
      return result;
    } catch (error) {
      // A connection that stopped answering gets no ROLLBACK (it would wait as long again) and is
      // closed instead of pooled: the server rolls back what it never saw committed.
      lost ||= connectionLost(error);
      if (!lost) await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release(lost);
    }
  }

  return { pool, ...(schema !== undefined ? { schema } : {}), timeoutMs, guard, writing, inTransaction };
}

/**
 * Every command line run opens the store: when the schema is current, one read of the applied
 * versions is all it costs (no advisory lock, no DDL). A missing table (or schema) means a first
 * start: the locked path below creates it.
 */
async function isCurrent(pool: pg.Pool): Promise<boolean> {
  try {
    const { rows } = await pool.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => Number(r.version)));
    return migrations.every((m) => applied.has(m.version));
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return false;
    throw error;
  }
}

async function migrate({ pool, schema }: PostgresSession): Promise<void> {
  if (await isCurrent(pool)) return;
  const client = await pool.connect();
  const lockKey = `queue-ops.migrate:${schema ?? ''}`;
  try {
    // Several replicas may start at once: one migrates, the others wait and then find it done.
    await client.query(longQuery('SELECT pg_advisory_lock(hashtext($1))', [lockKey]));
    try {
      if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
          version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
      const applied = new Set(
        (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) =>
          Number(r.version),
        ),
      );
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(longQuery(migration.postgres));
          if (migration.fill) {
            const { rows } = await client.query(longQuery(migration.fill.select));
            for (const update of migration.fill.updates(rows)) {
              await client.query(longQuery(numbered(update.sql), update.params));
            }
          }
          await client.query(
            'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
            [migration.version, migration.name, new Date().toISOString()],
          );
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          throw error;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]).catch(() => {});
    }
  } finally {
    client.release();
  }
}

/** Appends one entry on `client`, inside its transaction: the head row is the chain's lock. */
async function appendOn(client: pg.PoolClient, entry: AuditEntryInput, key?: AuditKey): Promise<AuditEntry> {
  // A second replica waits here until this append commits.
  const head = (await client.query('SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE')).rows[0] as
    | { seq: string | number; hash: string }
    | undefined;
  if (!head) throw new Error('audit_head row is missing: was migrate() run?');
  const next = chainEntry(entry, { seq: Number(head.seq), hash: head.hash }, key);
  await client.query(
    `INSERT INTO audit_log (${auditColumns.join(', ')}) VALUES (${placeholders(auditColumns.length)})`,
    auditValues(next),
  );
  await client.query('UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1', [next.seq, next.hash]);
  return next;
}

/** One conditional UPDATE of a request (see Store.transitionRequest), on the pool or a transaction's client. */
async function transitionOn(
  db: Queryable,
  id: string,
  from: readonly RequestStatus[],
  patch: RequestPatch,
  check?: TransitionCheck,
): Promise<ActionRequest | undefined> {
  if (from.length === 0) return undefined;
  const sets = patchAssignments(patch, json);
  const params: unknown[] = sets.map((s) => s.value);
  const assignments = sets.length
    ? sets.map((s, i) => `${s.column} = $${i + 1}`).join(', ')
    : 'status = status';
  params.push(id, [...from]);
  const where = [`id = $${params.length - 1}`, `status = ANY($${params.length})`];
  if (check?.notExpiredAt !== undefined) {
    params.push(new Date(check.notExpiredAt).toISOString());
    where.push(`expires_at > $${params.length}`);
  }
  if (check?.expiredAt !== undefined) {
    params.push(new Date(check.expiredAt).toISOString());
    where.push(`expires_at <= $${params.length}`);
  }
  if (check?.approvalsComplete) where.push('jsonb_array_length(approvals) >= required_approvals');
  if (check?.leaseOwner !== undefined) {
    params.push(check.leaseOwner);
    where.push(`lease_owner = $${params.length}`);
  }
  if (check?.leaseExpiredAt !== undefined) {
    params.push(new Date(check.leaseExpiredAt).toISOString());
    where.push(`COALESCE(lease_until, started_at, updated_at) <= $${params.length}`);
  }
  // Under READ COMMITTED a concurrent UPDATE of the same row waits, then re-checks the WHERE
  // against the committed row: the second click finds the status already moved on.
  const row = (
    await db.query(
      `UPDATE approval_requests SET ${assignments} WHERE ${where.join(' AND ')} RETURNING *`,
      params,
    )
  ).rows[0] as Row | undefined;
  return row ? rowToRequest(row) : undefined;
}

/** Adds an approval (see Store.addApproval), on the pool or a transaction's client. */
async function approveOn(
  db: Queryable,
  id: string,
  approval: Approval,
  check: ApprovalCheck = {},
): Promise<ApprovalOutcome> {
  const params: unknown[] = [id, json(approval), approval.at, approval.userId];
  let sameOsUser = '';
  if (check.distinctOsUser && approval.osUser !== undefined) {
    // Re-checked on the committed row when two approvals race (READ COMMITTED re-evaluates
    // the WHERE after waiting), so two terminals of one OS user cannot both get in.
    params.push(approval.osUser, approval.host ?? null);
    sameOsUser = `
            AND NOT (requested_by_os_user IS NOT DISTINCT FROM $5::text
                     AND requested_on_host IS NOT DISTINCT FROM $6::text)
            AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(approvals) a
                             WHERE a->>'osUser' = $5::text AND (a->>'host') IS NOT DISTINCT FROM $6::text)`;
  }
  const updated = (
    await db.query(
      `UPDATE approval_requests
            SET approvals = approvals || jsonb_build_array($2::jsonb), updated_at = $3
          WHERE id = $1 AND status = 'pending' AND requested_by <> $4
            AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(approvals) a WHERE a->>'userId' = $4)${sameOsUser}
          RETURNING *`,
      params,
    )
  ).rows[0] as Row | undefined;
  if (updated) {
    const at = check.approveIfCompleteAt;
    const approved =
      at === undefined
        ? undefined
        : await transitionOn(
            db,
            id,
            [RequestStatus.Pending],
            { status: RequestStatus.Approved, updatedAt: new Date(at).toISOString() },
            { notExpiredAt: at, approvalsComplete: true },
          );
    return { ok: true as const, request: approved ?? rowToRequest(updated) };
  }
  const row = (await db.query('SELECT * FROM approval_requests WHERE id = $1', [id])).rows[0] as
    | Row
    | undefined;
  const request = row ? rowToRequest(row) : undefined;
  // The write changed nothing, so one of its conditions failed; name it from the row as it is now.
  return {
    ok: false as const,
    reason: approvalRefusal(request, approval, check) ?? 'not-pending',
    request,
  };
}

/** The audit chain: appends serialise on the `audit_head` row. */
function postgresAudit({ pool, guard, inTransaction }: PostgresSession): AuditMethods {
  return {
    appendAudit: (entry, key) => guard(() => inTransaction((client) => appendOn(client, entry, key))),

    auditHead: () =>
      guard(async () => {
        // One statement, one snapshot: the head and the highest seq are from the same moment.
        const head = (await pool.query(AUDIT_HEAD_SQL)).rows[0] as
          | { seq: string | number; hash: string; max_seq: string | number | null }
          | undefined;
        return head
          ? { seq: Number(head.seq), hash: head.hash, maxSeq: Number(head.max_seq ?? 0) }
          : { seq: 0, hash: '', maxSeq: 0 };
      }),

    listAudit: (opts = {}) =>
      guard(async () => {
        const where: string[] = [];
        const params: unknown[] = [];
        if (opts.sinceAt !== undefined) {
          params.push(new Date(opts.sinceAt).toISOString());
          where.push(`at >= $${params.length}`);
        }
        if (opts.afterSeq !== undefined) {
          params.push(opts.afterSeq);
          where.push(`seq > $${params.length}`);
        }
        if (opts.visibleIn !== undefined) {
          params.push(opts.visibleIn);
          where.push(`(via <> 'slack' OR channel = $${params.length})`);
        }
        let sql = `SELECT * FROM audit_log${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
        sql += ` ORDER BY seq ${opts.newestFirst ? 'DESC' : 'ASC'}`;
        if (opts.limit !== undefined) {
          params.push(opts.limit);
          sql += ` LIMIT $${params.length}`;
        }
        return (await pool.query(sql, params)).rows.map(rowToAudit);
      }),
  };
}

/** Replay protection: the signatures of the Slack requests seen within the replay window. */
function postgresSignatures({ pool, guard }: PostgresSession): Pick<Store, 'rememberSignature'> {
  return {
    rememberSignature: (signature, seenAt, forgetBefore) =>
      guard(async () => {
        await pool.query('DELETE FROM seen_signatures WHERE seen_at < $1', [
          new Date(forgetBefore).toISOString(),
        ]);
        // Under concurrency the second INSERT waits for the first to commit, then does nothing.
        const inserted = await pool.query(
          'INSERT INTO seen_signatures (signature, seen_at) VALUES ($1, $2) ON CONFLICT (signature) DO NOTHING',
          [signature, new Date(seenAt).toISOString()],
        );
        return inserted.rowCount === 1;
      }),
  };
}

/** Approval requests: each step one conditional UPDATE; with its audit entry, one transaction. */
function postgresRequests({ pool, guard, writing, inTransaction }: PostgresSession): RequestMethods {
  return {
    createRequest: (request) =>
      writing(async (): Promise<CreateRequestResult> => {
        const { columns, values } = insertValues(request, json);
        const key = values[columns.indexOf('pending_key')];
        for (let attempt = 1; ; attempt++) {
          try {
            // The index decides between two replicas inserting at once: the second INSERT waits
            // for the first to commit, then fails on the key.
            await pool.query(
              `INSERT INTO approval_requests (${columns.join(', ')}) VALUES (${placeholders(columns.length)})`,
              values,
            );
            return { created: true };
          } catch (error) {
            if (!isPendingKeyTaken(error)) throw error;
          }
          const row = (await pool.query(numbered(PENDING_BY_KEY_SQL), [key])).rows[0] as Row | undefined;
          if (row) return { created: false, pending: rowToRequest(row) };
          // Approved, denied or expired between the two statements: the key is free again.
          if (attempt >= CREATE_ATTEMPTS) throw new Error('pending request key kept changing hands');
        }
      }),

    getRequest: (id) =>
      guard(async () => {
        const row = (await pool.query('SELECT * FROM approval_requests WHERE id = $1', [id])).rows[0] as
          | Row
          | undefined;
        return row ? rowToRequest(row) : undefined;
      }),

    listRequests: (opts = {}) =>
      guard(async () => {
        const statuses = opts.statuses;
        if (statuses && statuses.length === 0) return [];
        const sql = `SELECT * FROM approval_requests${statuses ? ' WHERE status = ANY($1)' : ''} ORDER BY created_at, id`;
        return (await pool.query(sql, statuses ? [statuses] : [])).rows.map(rowToRequest);
      }),

    transitionRequest: (id, from, patch, check) => writing(() => transitionOn(pool, id, from, patch, check)),

    transitionRequestAudited: (id, from, patch, check, audit) =>
      writing(() =>
        inTransaction(async (client) => {
          const request = await transitionOn(client, id, from, patch, check);
          return request ? { request, entry: await appendOn(client, audit.entry, audit.key) } : undefined;
        }),
      ),

    // Without `approveIfCompleteAt` one UPDATE (and a read when it changed nothing): no transaction needed.
    addApproval: (id, approval, check = {}) =>
      writing(() =>
        check.approveIfCompleteAt === undefined
          ? approveOn(pool, id, approval, check)
          : inTransaction((client) => approveOn(client, id, approval, check)),
      ),

    addApprovalAudited: (id, approval, check, audit) =>
      writing(() =>
        inTransaction(async (client) => {
          const outcome = await approveOn(client, id, approval, check);
          return outcome.ok ? { ...outcome, entry: await appendOn(client, audit.entry, audit.key) } : outcome;
        }),
      ),
  };
}

/** The rate limit's window: one key's uses counted one replica at a time (an advisory lock). */
function postgresRates({ pool, schema, guard, inTransaction }: PostgresSession): RateMethods {
  return {
    takeRate: (key, at, windowStart, limit) =>
      guard(() =>
        inTransaction(async (client): Promise<RateTake> => {
          // One user's uses are counted one replica at a time: count and insert cannot interleave.
          await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
            `queue-ops.rate:${schema ?? ''}:${key}`,
          ]);
          await client.query('DELETE FROM rate_events WHERE rate_key = $1 AND at <= $2', [
            key,
            new Date(windowStart).toISOString(),
          ]);
          const counted = (
            await client.query<{ n: number; oldest: string | null }>(
              'SELECT COUNT(*)::int AS n, MIN(at) AS oldest FROM rate_events WHERE rate_key = $1',
              [key],
            )
          ).rows[0]!;
          if (counted.n >= limit) return { taken: false, oldestAt: String(counted.oldest) };
          await client.query('INSERT INTO rate_events (rate_key, at) VALUES ($1, $2)', [
            key,
            new Date(at).toISOString(),
          ]);
          return { taken: true };
        }),
      ),

    releaseRate: (key, at) =>
      guard(async () => {
        await pool.query(
          'DELETE FROM rate_events WHERE ctid IN (SELECT ctid FROM rate_events WHERE rate_key = $1 AND at = $2 LIMIT 1)',
          [key, new Date(at).toISOString()],
        );
      }),

    pruneRate: (before) =>
      guard(
        async () =>
          (await pool.query('DELETE FROM rate_events WHERE at <= $1', [new Date(before).toISOString()]))
            .rowCount ?? 0,
      ),
  };
}

/**
 * The store for several replicas: one PostgreSQL database, a connection pool. Each approval step is
 * a single conditional UPDATE; audit appends serialise on the `audit_head` row (`FOR UPDATE`), and
 * migrations on an advisory lock, so replicas starting or writing at once cannot collide.
 */
export function createPostgresStore(url: string, options: PostgresStoreOptions = {}): Store {
  const session = openPool(url, options);
  const { pool, guard } = session;

  const runSql: RunSql = (sql, params) =>
    guard(async () => {
      const result = await pool.query(numbered(sql), params);
      return { rows: result.rows as Row[], changes: result.rowCount ?? 0 };
    });

  return {
    migrate: () => guard(() => migrate(session)),
    ...postgresAudit(session),
    ...postgresSignatures(session),
    ...postgresRequests(session),
    ...postgresRates(session),
    escalation: createPostgresEscalation(pool, guard, session.inTransaction),
    ...purgeMethods(runSql),
    ...limitMethods(runSql),

    close: async () => {
      if (!pool.ended) await pool.end();
    },
  };
}
