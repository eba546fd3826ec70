import { pendingKeyOf } from './pending-key.js';
import { rowToRequest } from './rows.js';

/**
 * Versioned schema changes, applied in order, each once, each in its own transaction, recorded in
 * `schema_migrations`. Never edit a migration that has shipped: add the next one.
 */
export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
  /**
   * Values only code can compute (a hash over canonical JSON), written after the SQL in the same
   * transaction: `select` reads the rows, `updates` turns them into statements (`?` placeholders).
   */
  fill?: {
    select: string;
    updates: (rows: Record<string, unknown>[]) => { sql: string; params: unknown[] }[];
  };
}

// The cause diagnosed when an alert opened (issue 36 §3): its id as a column, so alerts can be
// found by cause; the summary, evidence and fixes are in the alert's JSON record.
const causeColumn = `
ALTER TABLE escalation_alerts ADD COLUMN cause_id TEXT;
`;

const requestsTable = (json: string) => `
CREATE TABLE approval_requests (
  id TEXT PRIMARY KEY,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  params ${json} NOT NULL,
  status TEXT NOT NULL,
  requested_by TEXT NOT NULL,
  requested_by_name TEXT,
  via TEXT NOT NULL,
  channel TEXT,
  message_ts TEXT,
  required_approvals INTEGER NOT NULL,
  approvals ${json} NOT NULL,
  preview TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  denied_by TEXT,
  deny_reason TEXT,
  result ${json},
  error TEXT,
  started_at TEXT,
  finished_at TEXT
);
CREATE INDEX approval_requests_status ON approval_requests (status, created_at);
`;

// Times are ISO 8601 UTC text with milliseconds in both dialects: the audit hash covers the exact
// string, and text sorts in time order when every value has the same shape.
// audit_head is the one row appends lock, and it remembers the last seq and hash so that removing
// entries from the end of the log is detected too.
const auditTables = (seq: string) => `
CREATE TABLE audit_log (
  seq ${seq} PRIMARY KEY,
  at TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  actor_name TEXT,
  via TEXT NOT NULL,
  channel TEXT,
  action TEXT NOT NULL,
  target TEXT,
  params TEXT,
  outcome TEXT NOT NULL,
  error TEXT,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE TABLE audit_head (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  seq ${seq} NOT NULL,
  hash TEXT NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '');
`;

// The lease replaces a fixed staleness: an execution is only taken for dead once the replica
// running it stopped renewing `lease_until`. Executions already running when this is applied have
// no lease and are judged by `started_at`, as before.
const leaseAndOrigin = `
ALTER TABLE approval_requests ADD COLUMN lease_until TEXT;
ALTER TABLE approval_requests ADD COLUMN lease_owner TEXT;
ALTER TABLE approval_requests ADD COLUMN requested_by_os_user TEXT;
ALTER TABLE approval_requests ADD COLUMN requested_on_host TEXT;
`;

// Escalation: the monitor's sample history, alerts, the Slack outbox and the leader
// lease. Alerts keep their record as JSON text; `open_key` is the alert's key while it fires and
// NULL once resolved, so a UNIQUE index allows one firing alert per key even with two monitors.
const escalationTables = (serial: string) => `
CREATE TABLE escalation_samples (
  id ${serial},
  at TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX escalation_samples_at ON escalation_samples (at);
CREATE TABLE escalation_alerts (
  id TEXT PRIMARY KEY,
  alert_key TEXT NOT NULL,
  open_key TEXT UNIQUE,
  status TEXT NOT NULL,
  version INTEGER NOT NULL,
  opened_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX escalation_alerts_key ON escalation_alerts (alert_key, updated_at);
CREATE INDEX escalation_alerts_status ON escalation_alerts (status, opened_at);
CREATE TABLE escalation_outbox (
  seq ${serial},
  alert_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at TEXT NOT NULL,
  not_before TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  claimed_by TEXT,
  claimed_until TEXT,
  done_at TEXT,
  outcome TEXT
);
CREATE INDEX escalation_outbox_pending ON escalation_outbox (done_at, seq);
CREATE TABLE escalation_lease (
  name TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
`;

// A purge's progress lives here, not in the Redis it empties (that Redis may be out of memory):
// a process killed mid-purge leaves a row in `archiving` and its chunks, which the next start
// finishes from. Lists are JSON text in both dialects (only read back whole).
const purgeTables = `
CREATE TABLE purges (
  id TEXT PRIMARY KEY,
  system TEXT NOT NULL,
  queue TEXT NOT NULL,
  backend TEXT NOT NULL,
  states TEXT NOT NULL,
  state TEXT NOT NULL,
  archive_path TEXT NOT NULL,
  total INTEGER NOT NULL,
  chunks INTEGER NOT NULL,
  archived INTEGER NOT NULL,
  purged INTEGER NOT NULL,
  owner TEXT,
  heartbeat_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finished_at TEXT,
  error TEXT,
  undone_by TEXT,
  archive_removed_at TEXT
);
CREATE INDEX purges_state ON purges (state);
CREATE TABLE purge_chunks (
  purge_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  file TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  records INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  purged INTEGER NOT NULL,
  skipped TEXT NOT NULL,
  PRIMARY KEY (purge_id, seq)
);
CREATE TABLE periodic_runs (
  name TEXT PRIMARY KEY,
  last_at TEXT NOT NULL
);
`;

// One pending request per action, target, channel and params: two replicas asked the
// same thing at the same instant both read "nothing waiting" and both inserted. `pending_key` is a
// hash the store computes at insert (src/store/pending-key.ts); the index covers pending rows only,
// so decided requests keep their key and never block a new one.
const pendingKey = `
ALTER TABLE approval_requests ADD COLUMN pending_key TEXT;
CREATE UNIQUE INDEX approval_requests_pending_key ON approval_requests (pending_key) WHERE status = 'pending';
`;

// The per-user rate limit, shared by replicas: one row per counted command, a sliding minute.
const rateEvents = `
CREATE TABLE rate_events (rate_key TEXT NOT NULL, at TEXT NOT NULL);
CREATE INDEX rate_events_key_at ON rate_events (rate_key, at);
CREATE INDEX rate_events_at ON rate_events (at);
`;

// Silences (`silence`, `unsilence`), and the group an alert is listed in when alerts
// share one message (`escalation.groupBy`). Times are ISO text like everywhere else.
const silencesAndGroups = `
CREATE TABLE escalation_silences (
  id TEXT PRIMARY KEY,
  pattern TEXT NOT NULL,
  reason TEXT,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  lifted_by TEXT,
  lifted_at TEXT
);
CREATE INDEX escalation_silences_expires ON escalation_silences (expires_at);
ALTER TABLE escalation_alerts ADD COLUMN group_id TEXT;
CREATE INDEX escalation_alerts_group ON escalation_alerts (group_id);
`;

// Limits queue-ops set (`rate-limit`, `concurrency`): what it set, what was there before (to put
// back exactly), and when it lifts by itself. The monitor's leader lifts the due ones; a restart
// finds them here. One active row per system, target and kind (a new limit replaces the old).
const queueLimits = `
CREATE TABLE queue_limits (
  id TEXT PRIMARY KEY,
  system TEXT NOT NULL,
  target TEXT NOT NULL,
  kind TEXT NOT NULL,
  value TEXT NOT NULL,
  previous TEXT NOT NULL,
  state TEXT NOT NULL,
  set_by TEXT NOT NULL,
  set_at TEXT NOT NULL,
  expires_at TEXT,
  ended_at TEXT,
  ended_by TEXT
);
CREATE UNIQUE INDEX queue_limits_active ON queue_limits (system, target, kind) WHERE state = 'active';
CREATE INDEX queue_limits_expires ON queue_limits (state, expires_at);
`;

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'approval requests and hash-chained audit log',
    // Postgres keeps params/approvals/result as jsonb so addApproval can test membership in SQL.
    // Audit params stay TEXT in both: the hash is over what was written, byte for byte.
    sqlite: requestsTable('TEXT') + auditTables('INTEGER'),
    postgres: requestsTable('JSONB') + auditTables('BIGINT'),
  },
  {
    version: 2,
    name: 'audit key id per entry (keyed chain, key rotation)',
    // NULL on entries written without a key, including every entry from before this migration.
    sqlite: 'ALTER TABLE audit_log ADD COLUMN key_id TEXT;',
    postgres: 'ALTER TABLE audit_log ADD COLUMN key_id TEXT;',
  },
  {
    version: 3,
    name: 'execution lease (heartbeat) and the OS user and host behind command-line requests',
    sqlite: leaseAndOrigin,
    postgres: leaseAndOrigin,
  },
  {
    version: 4,
    name: 'signatures of Slack requests already handled (replay refusal, shared by replicas)',
    // seen_at is ISO text like every other time here; the index serves the cleanup.
    sqlite: `
CREATE TABLE seen_signatures (signature TEXT PRIMARY KEY, seen_at TEXT NOT NULL);
CREATE INDEX seen_signatures_seen_at ON seen_signatures (seen_at);
`,
    postgres: `
CREATE TABLE seen_signatures (signature TEXT PRIMARY KEY, seen_at TEXT NOT NULL);
CREATE INDEX seen_signatures_seen_at ON seen_signatures (seen_at);
`,
  },
  {
    version: 5,
    name: 'purges, their archived chunks, and periodic jobs',
    sqlite: purgeTables,
    postgres: purgeTables,
  },
  {
    version: 6,
    name: 'escalation: samples, alerts, outbox, leader lease',
    sqlite: escalationTables('INTEGER PRIMARY KEY AUTOINCREMENT'),
    postgres: escalationTables('BIGSERIAL PRIMARY KEY'),
  },
  {
    version: 7,
    name: 'at most one pending request per action, target, channel and params',
    sqlite: pendingKey,
    postgres: pendingKey,
    // Requests already waiting get their key; where two already wait for the same thing (made
    // before this check existed), the oldest holds it and the other stays decidable as it is.
    fill: {
      select: "SELECT * FROM approval_requests WHERE status = 'pending' ORDER BY created_at, id",
      updates: (rows) => {
        const seen = new Set<string>();
        const out: { sql: string; params: unknown[] }[] = [];
        for (const request of rows.map(rowToRequest)) {
          const key = pendingKeyOf(request);
          if (seen.has(key)) continue;
          seen.add(key);
          out.push({
            sql: 'UPDATE approval_requests SET pending_key = ? WHERE id = ?',
            params: [key, request.id],
          });
        }
        return out;
      },
    },
  },
  {
    version: 8,
    name: 'rate limit per user, shared by replicas',
    sqlite: rateEvents,
    postgres: rateEvents,
  },
  {
    version: 9,
    name: 'escalation: silences, and alert groups sharing one message',
    sqlite: silencesAndGroups,
    postgres: silencesAndGroups,
  },
  {
    version: 10,
    name: 'limits queue-ops set on queues and tasks, and when each lifts',
    sqlite: queueLimits,
    postgres: queueLimits,
  },
  {
    version: 11,
    name: 'escalation: the cause an alert carries, by id (its words are in the record)',
    sqlite: causeColumn,
    postgres: causeColumn,
  },
];
