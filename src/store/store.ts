/**
 * The bot's own memory: approval requests and the audit trail. Never the Redis being watched
 * (that Redis may be the one that is out of memory). SQLite by default, PostgreSQL for several
 * replicas; both pass `test/store/store-contract.ts`.
 */

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
  /** sha256 over prevHash and this entry's canonical JSON. */
  hash: string;
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
}

/** Extra conditions for {@link Store.transitionRequest}, checked in the same conditional write. */
export interface TransitionCheck {
  /** Only if the request's `expiresAt` is after this instant (it has not expired by then). */
  notExpiredAt?: string;
  /** Only if the request's `expiresAt` is at or before this instant (it has expired by then). */
  expiredAt?: string;
  /** Only if the request holds at least `requiredApprovals` approvals. */
  approvalsComplete?: boolean;
}

export interface Store extends PurgeStore {
  /** Applies versioned migrations; safe to call on every start. */
  migrate(): Promise<void>;

  /**
   * Appends one entry, chaining it to the last one inside one transaction so that concurrent
   * appends (several replicas) cannot fork the chain.
   */
  appendAudit(entry: AuditEntryInput): Promise<AuditEntry>;
  /** Entries in seq order. */
  listAudit(options?: {
    sinceAt?: string;
    afterSeq?: number;
    limit?: number;
    newestFirst?: boolean;
  }): Promise<AuditEntry[]>;

  /**
   * The chain head kept next to the log: the last appended seq and hash ({ seq: 0, hash: '' }
   * when empty). Lets `verify` notice entries removed from the end. Optional so test doubles need not
   * have it; both real stores do.
   */
  auditHead?(): Promise<{ seq: number; hash: string }>;

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
  ): Promise<
    | { ok: true; request: ActionRequest }
    | { ok: false; reason: 'missing' | 'not-pending' | 'self' | 'duplicate'; request?: ActionRequest }
  >;

  close(): Promise<void>;
}

/**
 * Where a purge stands, kept in the store (never in the Redis being purged, which may be out of
 * memory). `archiving`: running (chunks are archived, then their jobs deleted); `done`: finished;
 * `failed`: stopped on an error, what was archived stays undoable; `undoing` / `undone`: restored
 * from the archive; `rolled-back`: a crashed purge put back from its archive at recovery.
 */
export type PurgeState = 'archiving' | 'done' | 'failed' | 'undoing' | 'undone' | 'rolled-back';

/** One purge (id = its request id, which is also what `undo` takes). */
export interface PurgeRecord {
  id: string;
  system: string;
  queue: string;
  /** `bullmq` or `celery`. */
  backend: string;
  states: string[];
  state: PurgeState;
  archivePath: string;
  /** Jobs counted when the purge started. */
  total: number;
  /** Chunks archived so far: the cursor a recovery resumes from. */
  chunks: number;
  archived: number;
  purged: number;
  /** `host:pid` of the process running it; a recovery takes it over only when that one is gone. */
  owner?: string;
  heartbeatAt?: string;
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
  error?: string;
  /** The request id of the undo that restored it. */
  undoneBy?: string;
  /** Set once the retention sweep removed its archive. */
  archiveRemovedAt?: string;
}

/** One archived chunk of a purge: on disk first, then recorded here, then deleted from Redis. */
export interface PurgeChunk {
  purgeId: string;
  seq: number;
  file: string;
  sha256: string;
  bytes: number;
  records: number;
  /** The conditional delete ran and its outcome is recorded. */
  deleted: boolean;
  purged: number;
  /** Identities left in Redis because they had moved (a worker took them). */
  skipped: string[];
}

/** Purge bookkeeping; both stores implement it (store contract suite). */
export interface PurgeStore {
  createPurge(purge: PurgeRecord): Promise<void>;
  getPurge(id: string): Promise<PurgeRecord | undefined>;
  listPurges(options?: { states?: PurgeState[] }): Promise<PurgeRecord[]>;
  /**
   * One conditional write: applies `patch` only if the purge's state is one of `from` and, when
   * `owner` is given (a string, or null for none), its owner is that one. Returns the row or undefined.
   */
  updatePurge(
    id: string,
    from: readonly PurgeState[],
    patch: Partial<Omit<PurgeRecord, 'id' | 'createdAt'>>,
    owner?: string | null,
  ): Promise<PurgeRecord | undefined>;
  addPurgeChunk(chunk: PurgeChunk): Promise<void>;
  markPurgeChunk(purgeId: string, seq: number, outcome: { purged: number; skipped: string[] }): Promise<void>;
  listPurgeChunks(purgeId: string): Promise<PurgeChunk[]>;
  /**
   * Claims a periodic job (the archive retention sweep): true for exactly one caller per period,
   * when `name` last ran at or before `dueBefore` (or never). Records `at` as its last run.
   */
  claimPeriodic(name: string, at: string, dueBefore: string): Promise<boolean>;
}
