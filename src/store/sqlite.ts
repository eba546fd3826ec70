import { closeSync, mkdirSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCode, OpsError } from '../errors.js';
import type { AuditKey } from './audit-hash.js';
import { createSqliteEscalation, type Prepared } from './escalation-sqlite.js';
import { type GroupCommitOptions, groupCommit } from './group-commit.js';
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
  type AuditAppend,
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
import { type SyncFile, walSync } from './wal-sync.js';

type Row = Record<string, unknown>;

const unavailableCodes = new Set([
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_READONLY',
]);

/** Store errors that mean "the database is not usable right now" become a StoreUnavailable value. */
function wrap<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(storeError(error));
  }
}

/** SQLite's "cannot reach the file" codes become `StoreUnavailable`; anything else stays as it is. */
function storeError(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && [...unavailableCodes].some((c) => code.startsWith(c))) {
    return new OpsError(ErrorCode.StoreUnavailable, { reason: code });
  }
  return error;
}

/** The SQLite store, plus what `doctor`-style checks and tests want to see of its connection. */
export interface SqliteStore extends Store {
  readonly path: string;
  /** The connection's journal mode (`wal`) and synchronous level (2 = FULL). */
  settings(): { journalMode: string; synchronous: number };
}

/** The main database's file as SQLite resolved it (`PRAGMA database_list`). */
function mainDatabaseFile(db: Database.Database): string | undefined {
  const list = db.pragma('database_list') as { name: string; file: string }[];
  const file = list.find((d) => d.name === 'main')?.file;
  return file ? file : undefined;
}

export interface SqliteStoreOptions {
  /** The fsync of the WAL (tests: which file it syncs, a disk that fails). */
  syncFile?: SyncFile;
}

/**
 * Creates the store's file (and any directory missing above it) readable by its owner only, 0600
 * and 0700, as the archives are: it holds the audit trail, the requests and their previews. SQLite
 * gives its `-wal` and `-shm` files the database file's mode, so they are 0600 too. A file that
 * exists keeps its mode (`chmod 600` one created 0644 by an earlier version).
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    // `wx`: create only. An existing file is left to SQLite, which opens it read-only when it
    // cannot write it (an immutable file is then refused at its first write, in one line).
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * better-sqlite3's native addon by its path, found once by Node's own resolution. Without it the
 * package asks `bindings`, which reads the call stack and tries a dozen folders, on every start of
 * the command line. Undefined (the package's own search) when an install keeps it elsewhere.
 */
function addonPath(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
  } catch {
    return undefined;
  }
}

/** Opens the file (created privately) with its busy timeout, WAL and `synchronous=FULL`. */
function openDatabase(path: string): Database.Database {
  let db: Database.Database;
  try {
    if (path !== ':memory:' && path !== '') createPrivately(path);
    const nativeBinding = addonPath();
    db = new Database(path, nativeBinding ? { nativeBinding } : {});
  } catch (error) {
    throw new OpsError(ErrorCode.StoreUnavailable, {
      reason: `cannot open ${path}: ${(error as Error).message}`,
    });
  }
  try {
    db.pragma('busy_timeout = 5000');
    // WAL mode opens (or creates) the `-wal` and `-shm` files: on a full disk or a read-only
    // directory that fails ("disk I/O error", "unable to open database file"), and the command
    // line's read-only commands must still answer.
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
  } catch (error) {
    db.close();
    const code = (error as { code?: unknown }).code;
    throw new OpsError(ErrorCode.StoreUnavailable, {
      reason: `cannot open ${path}: ${typeof code === 'string' ? `${code}, ` : ''}${(error as Error).message}`,
    });
  }
  return db;
}

const json = (value: unknown) => JSON.stringify(value);

/**
 * Every command line run opens the store: when the schema is current, one read of the applied
 * versions is all it costs (no write lock, no fsync). Anything unexpected takes the full path.
 */
function isCurrent(db: Database.Database): boolean {
  try {
    const applied = new Set(
      (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) =>
        Number(r.version),
      ),
    );
    return migrations.every((m) => applied.has(m.version));
  } catch {
    return false;
  }
}

function migrate(db: Database.Database): void {
  if (isCurrent(db)) return;
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  for (const migration of migrations) {
    db.transaction(() => {
      // Checked inside the write lock: another process may have applied it a moment ago.
      const done = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(migration.version);
      if (done) return;
      db.exec(migration.sqlite);
      if (migration.fill) {
        const rows = db.prepare(migration.fill.select).all() as Row[];
        for (const update of migration.fill.updates(rows)) db.prepare(update.sql).run(...update.params);
      }
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    }).immediate();
  }
}

/**
 * Prepared once, on first use (after migrate): a burst writes hundreds of entries and signatures,
 * and preparing was most of each write's cost.
 */
const preparedOn =
  (db: Database.Database): Prepared =>
  (sql) => {
    let statement: Database.Statement | undefined;
    return () => {
      statement ??= db.prepare(sql);
      return statement;
    };
  };

/** How a group commit is made durable and what its callers get when it is not. */
interface Durability {
  /** The WAL's own fsync; absent for `:memory:`. */
  wal?: ReturnType<typeof walSync>;
  durable?: () => Promise<void>;
  grouping: GroupCommitOptions;
}

function durability(db: Database.Database, path: string, syncFile: SyncFile | undefined): Durability {
  // The WAL SQLite really writes: beside the file it opened, symlinks resolved (not beside the
  // configured path, where a stray `-wal` would be synced in its place).
  const wal = path === ':memory:' ? undefined : walSync(mainDatabaseFile(db) ?? path, syncFile);
  // An fsync that fails (EIO, the file gone) leaves the group committed but not known to be on
  // disk: its callers get StoreUnavailable, as for a commit SQLite could not make.
  const durable = wal
    ? () =>
        wal.sync().catch((error: unknown) => {
          throw new OpsError(ErrorCode.StoreUnavailable, {
            reason: `fsync of the WAL failed: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
          });
        })
    : undefined;
  const grouping = { toError: storeError, ...(durable ? { durable } : {}) };
  return { ...(wal ? { wal } : {}), ...(durable ? { durable } : {}), grouping };
}

/** Appends one entry, chained to the head, in its own transaction or inside the caller's. */
type AppendAudit = Database.Transaction<(entry: AuditEntryInput, key: AuditKey | undefined) => AuditEntry>;

/** The audit chain; its appends join a group commit (see `createSqliteStore`). */
function sqliteAudit(db: Database.Database, prepared: Prepared, grouping: GroupCommitOptions) {
  const auditHeadRow = prepared('SELECT seq, hash FROM audit_head WHERE id = 1');
  const insertAudit = prepared(
    `INSERT INTO audit_log (${auditColumns.join(', ')}) VALUES (${auditColumns.map(() => '?').join(', ')})`,
  );
  const updateAuditHead = prepared('UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1');
  const append: AppendAudit = db.transaction(
    (entry: AuditEntryInput, key: AuditKey | undefined): AuditEntry => {
      const head = auditHeadRow().get() as { seq: number; hash: string };
      const next = chainEntry(entry, head, key);
      insertAudit().run(...auditValues(next));
      updateAuditHead().run(next.seq, next.hash);
      return next;
    },
  );
  const appendGrouped = groupCommit(
    db,
    ({ entry, key }: { entry: AuditEntryInput; key: AuditKey | undefined }) => append(entry, key),
    grouping,
  );
  const methods: AuditMethods = {
    appendAudit: (entry, key) => appendGrouped({ entry, key }),

    auditHead: () =>
      wrap(() => {
        const head = db.prepare(AUDIT_HEAD_SQL).get() as
          | { seq: number; hash: string; max_seq: number | null }
          | undefined;
        return head
          ? { seq: Number(head.seq), hash: head.hash, maxSeq: Number(head.max_seq ?? 0) }
          : { seq: 0, hash: '', maxSeq: 0 };
      }),

    listAudit: (options = {}) =>
      wrap(() => {
        const where: string[] = [];
        const params: unknown[] = [];
        if (options.sinceAt !== undefined) {
          where.push('at >= ?');
          params.push(new Date(options.sinceAt).toISOString());
        }
        if (options.afterSeq !== undefined) {
          where.push('seq > ?');
          params.push(options.afterSeq);
        }
        if (options.visibleIn !== undefined) {
          where.push("(via <> 'slack' OR channel = ?)");
          params.push(options.visibleIn);
        }
        let sql = `SELECT * FROM audit_log${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
        sql += ` ORDER BY seq ${options.newestFirst ? 'DESC' : 'ASC'}`;
        if (options.limit !== undefined) {
          sql += ' LIMIT ?';
          params.push(options.limit);
        }
        return (db.prepare(sql).all(...params) as Row[]).map(rowToAudit);
      }),
  };
  return { append, appendGrouped, methods };
}

/** Replay protection: the signatures of the Slack requests seen, written through a group commit. */
function sqliteSignatures(db: Database.Database, prepared: Prepared, grouping: GroupCommitOptions) {
  const forgetSignatures = prepared('DELETE FROM seen_signatures WHERE seen_at < ?');
  const insertSignature = prepared(
    'INSERT INTO seen_signatures (signature, seen_at) VALUES (?, ?) ON CONFLICT DO NOTHING',
  );
  const rememberGrouped = groupCommit(
    db,
    ({ signature, seenAt, forgetBefore }: { signature: string; seenAt: string; forgetBefore: string }) => {
      forgetSignatures().run(new Date(forgetBefore).toISOString());
      return insertSignature().run(signature, new Date(seenAt).toISOString()).changes === 1;
    },
    grouping,
  );
  const methods: Pick<Store, 'rememberSignature'> = {
    rememberSignature: (signature, seenAt, forgetBefore) =>
      rememberGrouped({ signature, seenAt, forgetBefore }),
  };
  return { rememberGrouped, methods };
}

/**
 * A conditional UPDATE of one request, run to completion with `all()`: a `get()` stops after the
 * first row, so an autocommit statement's own commit (SQLITE_FULL on a full disk) failed silently
 * and the row it returned was never stored.
 */
function transitionRow(
  db: Database.Database,
  id: string,
  from: readonly RequestStatus[],
  patch: RequestPatch,
  check: TransitionCheck | undefined,
): Row | undefined {
  if (from.length === 0) return undefined;
  const sets = patchAssignments(patch, json);
  // An empty patch still runs the conditional write, so it answers "does the condition hold?".
  const assignments = sets.length ? sets.map((s) => `${s.column} = ?`).join(', ') : 'status = status';
  const where = ['id = ?', `status IN (${from.map(() => '?').join(', ')})`];
  const params: unknown[] = [...sets.map((s) => s.value), id, ...from];
  if (check?.notExpiredAt !== undefined) {
    where.push('expires_at > ?');
    params.push(new Date(check.notExpiredAt).toISOString());
  }
  if (check?.expiredAt !== undefined) {
    where.push('expires_at <= ?');
    params.push(new Date(check.expiredAt).toISOString());
  }
  if (check?.approvalsComplete) where.push('json_array_length(approvals) >= required_approvals');
  if (check?.leaseOwner !== undefined) {
    where.push('lease_owner = ?');
    params.push(check.leaseOwner);
  }
  if (check?.leaseExpiredAt !== undefined) {
    where.push('COALESCE(lease_until, started_at, updated_at) <= ?');
    params.push(new Date(check.leaseExpiredAt).toISOString());
  }
  const rows = db
    .prepare(`UPDATE approval_requests SET ${assignments} WHERE ${where.join(' AND ')} RETURNING *`)
    .all(...params) as Row[];
  return rows[0];
}

const getRow = (db: Database.Database, id: string) =>
  db.prepare('SELECT * FROM approval_requests WHERE id = ?').get(id) as Row | undefined;

/** Adds an approval (see Store.addApproval); runs inside the caller's transaction. */
function approveRow(
  db: Database.Database,
  id: string,
  approval: Approval,
  check: ApprovalCheck = {},
): ApprovalOutcome {
  const row = getRow(db, id);
  const request = row ? rowToRequest(row) : undefined;
  const refusal = approvalRefusal(request, approval, check);
  if (refusal || !request) return { ok: false as const, reason: refusal ?? 'missing', request };
  const approvals = [...request.approvals, approval];
  let updated = db
    .prepare('UPDATE approval_requests SET approvals = ?, updated_at = ? WHERE id = ? RETURNING *')
    .all(json(approvals), approval.at, id)[0] as Row;
  if (check.approveIfCompleteAt !== undefined) {
    const at = new Date(check.approveIfCompleteAt).toISOString();
    updated =
      transitionRow(
        db,
        id,
        [RequestStatus.Pending],
        { status: RequestStatus.Approved, updatedAt: at },
        { notExpiredAt: at, approvalsComplete: true },
      ) ?? updated;
  }
  return { ok: true as const, request: rowToRequest(updated) };
}

/** Approval requests: every write that reads first in `BEGIN IMMEDIATE`, with its audit entry when it has one. */
function sqliteRequests(db: Database.Database, append: AppendAudit): RequestMethods {
  const approve = db.transaction((id: string, approval: Approval, check?: ApprovalCheck) =>
    approveRow(db, id, approval, check),
  );
  const approveAudited = db.transaction(
    (id: string, approval: Approval, check: ApprovalCheck | undefined, audit: AuditAppend) => {
      const outcome = approveRow(db, id, approval, check);
      return outcome.ok ? { ...outcome, entry: append(audit.entry, audit.key) } : outcome;
    },
  );
  const transitionAudited = db.transaction(
    (
      id: string,
      from: readonly RequestStatus[],
      patch: RequestPatch,
      check: TransitionCheck | undefined,
      audit: AuditAppend,
    ) => {
      const row = transitionRow(db, id, from, patch, check);
      return row ? { request: rowToRequest(row), entry: append(audit.entry, audit.key) } : undefined;
    },
  );

  // Inside the write lock: the conflicting pending row read back is the one that refused us.
  const create = db.transaction((request: ActionRequest): CreateRequestResult => {
    const { columns, values } = insertValues(request, json);
    try {
      db.prepare(
        `INSERT INTO approval_requests (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
      ).run(...values);
      return { created: true };
    } catch (error) {
      const pendingKeyTaken =
        (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE' &&
        String((error as Error).message).includes('pending_key');
      if (!pendingKeyTaken) throw error;
    }
    const row = db.prepare(PENDING_BY_KEY_SQL).get(values[columns.indexOf('pending_key')]) as Row;
    return { created: false, pending: rowToRequest(row) };
  });

  return {
    createRequest: (request) => wrap(() => create.immediate(request)),

    getRequest: (id) =>
      wrap(() => {
        const row = getRow(db, id);
        return row ? rowToRequest(row) : undefined;
      }),

    listRequests: (options = {}) =>
      wrap(() => {
        const statuses = options.statuses;
        if (statuses && statuses.length === 0) return [];
        const sql = `SELECT * FROM approval_requests${
          statuses ? ` WHERE status IN (${statuses.map(() => '?').join(', ')})` : ''
        } ORDER BY created_at, id`;
        return (db.prepare(sql).all(...(statuses ?? [])) as Row[]).map(rowToRequest);
      }),

    transitionRequest: (id, from, patch, check) =>
      wrap(() => {
        const row = transitionRow(db, id, from, patch, check);
        return row ? rowToRequest(row) : undefined;
      }),

    transitionRequestAudited: (id, from, patch, check, audit) =>
      wrap(() => transitionAudited.immediate(id, from, patch, check, audit)),

    addApproval: (id, approval, check) => wrap(() => approve.immediate(id, approval, check)),

    addApprovalAudited: (id, approval, check, audit) =>
      wrap(() => approveAudited.immediate(id, approval, check, audit)),
  };
}

/** The rate limit's window: count and insert in one `BEGIN IMMEDIATE`, so processes take turns. */
function sqliteRates(db: Database.Database): RateMethods {
  const takeRate = db.transaction((key: string, at: string, windowStart: string, limit: number): RateTake => {
    db.prepare('DELETE FROM rate_events WHERE rate_key = ? AND at <= ?').run(key, windowStart);
    const counted = db
      .prepare('SELECT COUNT(*) AS n, MIN(at) AS oldest FROM rate_events WHERE rate_key = ?')
      .get(key) as { n: number; oldest: string | null };
    if (counted.n >= limit) return { taken: false, oldestAt: String(counted.oldest) };
    db.prepare('INSERT INTO rate_events (rate_key, at) VALUES (?, ?)').run(key, at);
    return { taken: true };
  });

  return {
    takeRate: (key, at, windowStart, limit) =>
      wrap(() =>
        takeRate.immediate(key, new Date(at).toISOString(), new Date(windowStart).toISOString(), limit),
      ),

    releaseRate: (key, at) =>
      wrap(() => {
        db.prepare(
          'DELETE FROM rate_events WHERE rowid IN (SELECT rowid FROM rate_events WHERE rate_key = ? AND at = ? LIMIT 1)',
        ).run(key, new Date(at).toISOString());
      }),

    pruneRate: (before) =>
      wrap(
        () => db.prepare('DELETE FROM rate_events WHERE at <= ?').run(new Date(before).toISOString()).changes,
      ),
  };
}

const runPrepared = (statement: Database.Statement, params: unknown[]) =>
  statement.reader
    ? { rows: statement.all(...params) as Row[], changes: 0 }
    : { rows: [] as Row[], changes: statement.run(...params).changes };

/**
 * The SQL the purge and limit records run: the limits' as they come, the purges' writes through
 * their own group commit.
 */
function sqliteRecordSql(db: Database.Database, grouping: GroupCommitOptions) {
  const runSql: RunSql = (sql, params) => wrap(() => runPrepared(db.prepare(sql), params));
  // A purge records each chunk of 10,000 jobs and its heartbeat as it goes, and marks it deleted:
  // three commits a chunk. With synchronous=FULL each was an fsync on this thread, and the purge's
  // reads and archive lines stood still meanwhile. They join the group commit instead: the fsync
  // runs on libuv's pool, and each write is still answered only once it is on disk (a chunk's jobs
  // leave Redis only after its row is).
  const purgeWrites = groupCommit(
    db,
    ({ statement, params }: { statement: Database.Statement; params: unknown[] }) =>
      runPrepared(statement, params),
    grouping,
  );
  const runPurgeSql: RunSql = (sql, params) => {
    let statement: Database.Statement;
    try {
      statement = db.prepare(sql);
    } catch (error) {
      return Promise.reject(storeError(error));
    }
    if (statement.readonly) return wrap(() => runPrepared(statement, params));
    return purgeWrites({ statement, params });
  };
  return { runSql, runPurgeSql, purgeWrites };
}

/**
 * The default store: one SQLite file in WAL mode with `synchronous=FULL`, so an entry the user was
 * told about survives a power cut. Several processes may share the file: every write that reads
 * first runs in `BEGIN IMMEDIATE`, and `busy_timeout` makes the others wait their turn.
 */
export function createSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  const db = openDatabase(path);
  const prepared = preparedOn(db);
  // Every Slack command writes its signature after its ack and an audit entry before its answer:
  // those of commands arriving together share one commit and one fsync off the event loop (see
  // group-commit.ts); the two groups share the fsyncs too.
  const { wal, durable, grouping } = durability(db, path, options.syncFile);
  const audit = sqliteAudit(db, prepared, grouping);
  const signatures = sqliteSignatures(db, prepared, grouping);
  const records = sqliteRecordSql(db, grouping);

  return {
    path,
    settings: () => ({
      journalMode: String(db.pragma('journal_mode', { simple: true })),
      synchronous: Number(db.pragma('synchronous', { simple: true })),
    }),
    migrate: () => wrap(() => migrate(db)),
    ...audit.methods,
    ...signatures.methods,
    ...sqliteRequests(db, audit.append),
    ...sqliteRates(db),
    escalation: createSqliteEscalation(db, wrap, prepared),
    ...purgeMethods(records.runPurgeSql),
    ...limitMethods(records.runSql),

    sync: () => durable?.() ?? Promise.resolve(),

    close: () =>
      wrap(() => {
        if (!db.open) return;
        // What waits for the next group commit is written, not dropped.
        audit.appendGrouped.flush();
        signatures.rememberGrouped.flush();
        records.purgeWrites.flush();
        db.close();
      }).then(() => wal?.close()),
  };
}
