import { ErrorCode, OpsError } from '../errors.js';
import { type AuditKey, auditEntryHash } from './audit-hash.js';
import { pendingKeyOf } from './pending-key.js';
import type {
  ActionRequest,
  Approval,
  ApprovalCheck,
  ApprovalRefusal,
  AuditEntry,
  AuditEntryInput,
  RequestPatch,
  RequestStatus,
  Via,
} from './store.js';

type RequestField = Exclude<keyof ActionRequest, 'id'>;

/** Column of each request field; `json` columns hold objects or arrays. */
export const requestColumns: Record<RequestField, { column: string; json?: true }> = {
  action: { column: 'action' },
  target: { column: 'target' },
  params: { column: 'params', json: true },
  status: { column: 'status' },
  requestedBy: { column: 'requested_by' },
  requestedByName: { column: 'requested_by_name' },
  via: { column: 'via' },
  channel: { column: 'channel' },
  messageTs: { column: 'message_ts' },
  requiredApprovals: { column: 'required_approvals' },
  approvals: { column: 'approvals', json: true },
  preview: { column: 'preview' },
  createdAt: { column: 'created_at' },
  expiresAt: { column: 'expires_at' },
  updatedAt: { column: 'updated_at' },
  deniedBy: { column: 'denied_by' },
  denyReason: { column: 'deny_reason' },
  result: { column: 'result', json: true },
  error: { column: 'error' },
  startedAt: { column: 'started_at' },
  finishedAt: { column: 'finished_at' },
  requestedByOsUser: { column: 'requested_by_os_user' },
  requestedOnHost: { column: 'requested_on_host' },
  leaseUntil: { column: 'lease_until' },
  leaseOwner: { column: 'lease_owner' },
};

/** The columns a patch sets, in a stable order, with values ready for the driver. */
export function patchAssignments(
  patch: RequestPatch,
  encodeJson: (value: unknown) => unknown,
): { column: string; value: unknown }[] {
  const out: { column: string; value: unknown }[] = [];
  for (const [field, spec] of Object.entries(requestColumns) as [
    RequestField,
    (typeof requestColumns)[RequestField],
  ][]) {
    if (field === 'createdAt') continue;
    const value = (patch as Record<string, unknown>)[field];
    // An absent or undefined field means "leave as stored"; null clears an optional column.
    if (value === undefined) continue;
    out.push({ column: spec.column, value: spec.json && value !== null ? encodeJson(value) : value });
  }
  return out;
}

/**
 * All columns of a new request, in `requestColumns` order, preceded by `id`, followed by
 * `pending_key` (the unique index on pending requests reads it).
 */
export function insertValues(request: ActionRequest, encodeJson: (value: unknown) => unknown) {
  const columns = ['id'];
  const values: unknown[] = [request.id];
  for (const [field, spec] of Object.entries(requestColumns) as [
    RequestField,
    (typeof requestColumns)[RequestField],
  ][]) {
    const value = (request as unknown as Record<string, unknown>)[field];
    columns.push(spec.column);
    values.push(value === undefined ? null : spec.json ? encodeJson(value) : value);
  }
  columns.push('pending_key');
  values.push(pendingKeyOf(request));
  return { columns, values };
}

const parseJson = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

/** Turns a database row back into a request; NULL columns become absent fields. */
export function rowToRequest(row: Record<string, unknown>): ActionRequest {
  const out: Record<string, unknown> = { id: row.id };
  for (const [field, spec] of Object.entries(requestColumns)) {
    const value = row[spec.column];
    if (value === null || value === undefined) continue;
    out[field] = spec.json ? parseJson(value) : value;
  }
  out.requiredApprovals = Number(out.requiredApprovals ?? 0);
  out.params ??= {};
  out.approvals ??= [];
  return out as unknown as ActionRequest;
}

/** The pending request holding `key`, read back after the unique index refused a second one. */
export const PENDING_BY_KEY_SQL =
  "SELECT * FROM approval_requests WHERE pending_key = ? AND status = 'pending'";

/** Turns an audit row back into the entry whose hash it stores. */
export function rowToAudit(row: Record<string, unknown>): AuditEntry {
  const entry: Record<string, unknown> = {
    seq: Number(row.seq),
    at: row.at,
    actorId: row.actor_id,
    via: row.via as Via,
    action: row.action,
    outcome: row.outcome,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
  if (row.actor_name !== null && row.actor_name !== undefined) entry.actorName = row.actor_name;
  if (row.channel !== null && row.channel !== undefined) entry.channel = row.channel;
  if (row.target !== null && row.target !== undefined) entry.target = row.target;
  if (row.params !== null && row.params !== undefined) entry.params = parseJson(row.params);
  if (row.error !== null && row.error !== undefined) entry.error = row.error;
  if (row.key_id !== null && row.key_id !== undefined) entry.keyId = row.key_id;
  return entry as unknown as AuditEntry;
}

/**
 * Normalises an entry the way it will read back from the database (ISO time with milliseconds,
 * params through JSON) so the hash computed now matches the one recomputed by `verify` later.
 */
export function normaliseAuditInput(input: AuditEntryInput): AuditEntryInput {
  const at = new Date(input.at);
  if (Number.isNaN(at.getTime())) {
    throw new OpsError(ErrorCode.BadArgument, { message: `audit entry time \`${input.at}\` is not a date` });
  }
  const entry: AuditEntryInput = {
    at: at.toISOString(),
    actorId: input.actorId,
    via: input.via,
    action: input.action,
    outcome: input.outcome,
  };
  if (input.actorName !== undefined) entry.actorName = input.actorName;
  if (input.channel !== undefined) entry.channel = input.channel;
  if (input.target !== undefined) entry.target = input.target;
  if (input.params !== undefined) entry.params = JSON.parse(JSON.stringify(input.params));
  if (input.error !== undefined) entry.error = input.error;
  return entry;
}

/** The next link of the chain after `(seq, hash)`, sealed with `key` when there is one. */
export function chainEntry(
  input: AuditEntryInput,
  head: { seq: number; hash: string },
  key?: AuditKey,
): AuditEntry {
  const unhashed: Omit<AuditEntry, 'hash'> = {
    ...normaliseAuditInput(input),
    seq: head.seq + 1,
    prevHash: head.hash,
    ...(key ? { keyId: key.id } : {}),
  };
  return { ...unhashed, hash: auditEntryHash(unhashed, key?.secret) };
}

/**
 * The chain head and the highest seq in the log in one statement (valid in both dialects), so they
 * come from one snapshot: an append moves both in one transaction.
 */
export const AUDIT_HEAD_SQL =
  'SELECT h.seq AS seq, h.hash AS hash, (SELECT max(l.seq) FROM audit_log l) AS max_seq FROM audit_head h WHERE h.id = 1';

/** Column values of an audit entry, in `auditColumns` order. */
export const auditColumns = [
  'seq',
  'at',
  'actor_id',
  'actor_name',
  'via',
  'channel',
  'action',
  'target',
  'params',
  'outcome',
  'error',
  'prev_hash',
  'hash',
  'key_id',
] as const;

export function auditValues(entry: AuditEntry): unknown[] {
  return [
    entry.seq,
    entry.at,
    entry.actorId,
    entry.actorName ?? null,
    entry.via,
    entry.channel ?? null,
    entry.action,
    entry.target ?? null,
    entry.params === undefined ? null : JSON.stringify(entry.params),
    entry.outcome,
    entry.error ?? null,
    entry.prevHash,
    entry.hash,
    entry.keyId ?? null,
  ];
}

/** Which reason `addApproval` gives when its conditional write changed nothing. */
export function approvalRefusal(
  request: ActionRequest | undefined,
  approval: Pick<Approval, 'userId' | 'osUser' | 'host'>,
  check: ApprovalCheck = {},
): ApprovalRefusal | undefined {
  if (!request) return 'missing';
  if (request.status !== ('pending' satisfies RequestStatus)) return 'not-pending';
  if (request.requestedBy === approval.userId) return 'self';
  if (request.approvals.some((a) => a.userId === approval.userId)) return 'duplicate';
  if (check.distinctOsUser && approval.osUser !== undefined) {
    const same = (osUser?: string, host?: string) => osUser === approval.osUser && host === approval.host;
    if (
      same(request.requestedByOsUser, request.requestedOnHost) ||
      request.approvals.some((a) => same(a.osUser, a.host))
    )
      return 'same-os-user';
  }
  return undefined;
}
