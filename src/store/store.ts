/**
 * The bot's own memory: approval requests and the audit trail. Never the Redis being watched
 * (that Redis may be the one that is out of memory). SQLite by default, PostgreSQL for several
 * replicas; both pass `test/store/store-contract.ts`.
 */

import type { AuditKey } from '../audit/hash.js';

export type Via = 'slack' | 'cli' | 'console';

/** What the caller supplies for one audit entry; the store adds seq, prevHash and hash. */
export interface AuditEntryInput {
  /** ISO 8601 UTC. */
  at: string;
  actorId: string;
  actorName?: string;
  via: Via;
  channel?: string;
  /** e.g. `command.status`, `request.created`, `request.approved`, `action.pause`, `denied`. */
  action: string;
  /** `system/queue`, a system, or a request id. */
  target?: string;
  params?: Record<string, unknown>;
  /** e.g. `ok`, `denied`, `requested`, `approved`, `rejected`, `expired`, `done`, `failed`, `error`. */
  outcome: string;
  error?: string;
}

export interface AuditEntry extends AuditEntryInput {
  /** 1, 2, 3… in append order. */
  seq: number;
  /** Hash of the previous entry ("" for the first). */
  prevHash: string;
  /** sha256 over prevHash and this entry's canonical JSON; HMAC-SHA256 under the key when keyed. */
  hash: string;
  /** Which audit key sealed this entry (`auditKeyId`); absent on unkeyed entries. */
  keyId?: string;
}

export const RequestStatus = {
  Pending: 'pending',
  Approved: 'approved',
  Executing: 'executing',
  Done: 'done',
  Failed: 'failed',
  Denied: 'denied',
  Expired: 'expired',
  Interrupted: 'interrupted',
} as const;
export type RequestStatus = (typeof RequestStatus)[keyof typeof RequestStatus];

export interface Approval {
  userId: string;
  userName?: string;
  /** ISO 8601 UTC. */
  at: string;
  /** Where it was given; absent on approvals stored before it was recorded. */
  via?: Via;
  /** On the command line, the OS account that typed it (`--user` is a claim, this is not). */
  osUser?: string;
  /** On the command line, the host it was typed on. */
  host?: string;
}

/** A request for an action that needs approval. Everything that runs is read back from here. */
export interface ActionRequest {
  /** Short, unguessable id shown to users, e.g. `r-7f3k9q`. */
  id: string;
  action: string;
  /** `system/queue`. */
  target: string;
  params: Record<string, unknown>;
  status: RequestStatus;
  requestedBy: string;
  requestedByName?: string;
  via: Via;
  channel?: string;
  /** Slack message holding the buttons, so it can be updated in place. */
  messageTs?: string;
  requiredApprovals: number;
  approvals: Approval[];
  /** One line computed when the request was made. */
  preview: string;
  createdAt: string;
  expiresAt: string;
  updatedAt: string;
  deniedBy?: string;
  denyReason?: string;
  result?: Record<string, unknown>;
  error?: string;
  startedAt?: string;
  finishedAt?: string;
  /** Made on the command line: the OS account that typed it. */
  requestedByOsUser?: string;
  /** Made on the command line: the host it was typed on. */
  requestedOnHost?: string;
  /**
   * While executing: the replica running it renews this (a heartbeat). An execution whose lease
   * ran out is taken for one whose process died, however long the action itself takes.
   */
  leaseUntil?: string;
  /** The replica holding the lease; only it may renew it. */
  leaseOwner?: string;
}

/** Extra conditions for {@link Store.transitionRequest}, checked in the same conditional write. */
export interface TransitionCheck {
  /** Only if the request's `expiresAt` is after this instant (it has not expired by then). */
  notExpiredAt?: string;
  /** Only if the request's `expiresAt` is at or before this instant (it has expired by then). */
  expiredAt?: string;
  /** Only if the request holds at least `requiredApprovals` approvals. */
  approvalsComplete?: boolean;
  /** Only if this replica holds the lease (a renewal never revives a lease another took over). */
  leaseOwner?: string;
  /**
   * Only if the lease had run out by this instant; a row without a lease (started before leases
   * existed) counts from `startedAt`.
   */
  leaseExpiredAt?: string;
}

/** Extra conditions for {@link Store.addApproval}, checked in the same atomic write. */
export interface ApprovalCheck {
  /**
   * Refuse (`same-os-user`) when `approval.osUser` and `approval.host` match the OS user and host
   * that made the request, or that gave an earlier approval: one terminal is one person.
   */
  distinctOsUser?: boolean;
}

/** Why {@link Store.addApproval} changed nothing. */
export type ApprovalRefusal = 'missing' | 'not-pending' | 'self' | 'duplicate' | 'same-os-user';

export interface Store {
  /** Applies versioned migrations; safe to call on every start. */
  migrate(): Promise<void>;

  /**
   * Appends one entry, chaining it to the last one inside one transaction so that concurrent
   * appends (several replicas) cannot fork the chain. With `key`, the entry's hash is an HMAC under
   * it and the entry records the key's id.
   */
  appendAudit(entry: AuditEntryInput, key?: AuditKey): Promise<AuditEntry>;
  /** Entries in seq order. */
  listAudit(options?: {
    sinceAt?: string;
    afterSeq?: number;
    limit?: number;
    newestFirst?: boolean;
    /**
     * Only entries a Slack viewer in this channel may see: asked in it, or not through Slack at
     * all (the command line, the demo console).
     */
    visibleIn?: string;
  }): Promise<AuditEntry[]>;

  /**
   * The chain head kept next to the log: the last appended seq and hash ({ seq: 0, hash: '' }
   * when empty), and the highest seq in the log, read in one statement so both come from the same
   * moment (an append moves them together). Lets `verify` notice entries removed from the end and
   * rows inserted past the head, and verify only up to the head while others keep appending.
   * Optional so test doubles need not have it; both real stores do.
   */
  auditHead?(): Promise<{ seq: number; hash: string; maxSeq: number }>;

  /**
   * Remembers a signed Slack request's signature: true when it was not there yet (first
   * delivery), false when it was (a replay, here or on another replica). Insert-if-absent, one
   * atomic statement. Also forgets signatures seen before `forgetBefore`, which keeps the table
   * as small as the replay window.
   */
  rememberSignature(signature: string, seenAt: string, forgetBefore: string): Promise<boolean>;

  createRequest(request: ActionRequest): Promise<void>;
  getRequest(id: string): Promise<ActionRequest | undefined>;
  listRequests(options?: { statuses?: RequestStatus[] }): Promise<ActionRequest[]>;
  /**
   * One atomic conditional write: applies `patch` only if the request's status is one of
   * `from` (and, when given, `check` holds on the row as stored). Returns the updated request, or
   * undefined when the condition did not hold — a replayed click is a no-op.
   */
  transitionRequest(
    id: string,
    from: readonly RequestStatus[],
    patch: Partial<Omit<ActionRequest, 'id' | 'createdAt'>>,
    check?: TransitionCheck,
  ): Promise<ActionRequest | undefined>;
  /**
   * Adds an approval atomically if the request is still pending, the approver is not the
   * requester and has not approved yet. Returns the updated request or a reason.
   */
  addApproval(
    id: string,
    approval: Approval,
    check?: ApprovalCheck,
  ): Promise<
    { ok: true; request: ActionRequest } | { ok: false; reason: ApprovalRefusal; request?: ActionRequest }
  >;

  close(): Promise<void>;
}
