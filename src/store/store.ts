/**
 * The bot's own memory: approval requests and the audit trail. Never the Redis being watched
 * (that Redis may be the one that is out of memory). SQLite by default, PostgreSQL for several
 * replicas; both pass `test/store/store-contract.ts`.
 */

import type { Alert, Silence } from './alert.js';

/** The way a request came in: a Slack command or button, the command line, the demo console. */
/** Where an action came from; `pagerduty`: PagerDuty's webhook (an acknowledgement on the phone). */
export type Via = 'slack' | 'cli' | 'console' | 'pagerduty';

/** Who asked: the one person behind a request, whatever transport it came through. */
export interface Actor {
  /** Slack user id, or `cli:<os user>` on the command line unless `--user` is given. */
  id: string;
  /** Display name when known (Slack user name, OS user). */
  name?: string;
  /**
   * On the command line, the OS user who typed it. `--user` is not authenticated, so the audit
   * keeps who really ran the command next to the Slack id they claimed.
   */
  osUser?: string;
  /** On the command line, the host it was typed on (with `osUser`, who really typed it). */
  host?: string;
}

/**
 * A key the chain is sealed with. `id` is stored on every entry it sealed, so that after a rotation
 * `verify` knows which of the configured keys to check each entry with.
 */
export interface AuditKey {
  id: string;
  secret: Buffer;
}

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

/**
 * What {@link Store.transitionRequest} writes: an absent or undefined field is left as stored,
 * `null` clears an optional one (a request settled `done` keeps no earlier error).
 */
export type RequestPatch = {
  [K in keyof Omit<ActionRequest, 'id' | 'createdAt'>]?:
    | ActionRequest[K]
    | (undefined extends ActionRequest[K] ? null : never);
};

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
  /**
   * When this approval is the last one needed and the request has not expired at this instant,
   * the same write moves it to `approved` (updated at this instant): an approval that completes a
   * request is never stored without the approval of the request, nor the other way round.
   */
  approveIfCompleteAt?: string;
}

/**
 * An audit entry written in the same transaction as the state change it records: both are stored
 * or neither (a full disk never leaves an entry without its change, nor a change without its entry).
 * The store chains it as {@link Store.appendAudit} does.
 */
export interface AuditAppend {
  entry: AuditEntryInput;
  key?: AuditKey;
}

/** What {@link Store.addApproval} answers. */
export type ApprovalOutcome =
  | { ok: true; request: ActionRequest }
  | { ok: false; reason: ApprovalRefusal; request?: ActionRequest };

/** What {@link Store.createRequest} did: stored it, or found the same request already waiting. */
export type CreateRequestResult = { created: true } | { created: false; pending: ActionRequest };

/** What {@link Store.takeRate} did: counted the use, or refused it (the oldest use still counted). */
export type RateTake = { taken: true } | { taken: false; oldestAt: string };

/** Why {@link Store.addApproval} changed nothing. */
export type ApprovalRefusal = 'missing' | 'not-pending' | 'self' | 'duplicate' | 'same-os-user';

export interface Store extends PurgeStore, LimitStore {
  /** Applies versioned migrations; safe to call on every start. */
  migrate(): Promise<void>;

  /**
   * Appends one entry, chaining it to the last one inside one transaction so that concurrent
   * appends (several replicas) cannot fork the chain. With `key`, the entry's hash is an HMAC under
   * it and the entry records the key's id.
   */
  appendAudit(entry: AuditEntryInput, key?: AuditKey): Promise<AuditEntry>;
  /**
   * Makes every commit made so far durable. SQLite's group commit answers its own callers only
   * after its fsync, but another reader can see those rows a few milliseconds earlier: what leaves
   * the process (an export) waits for this first. Stores that commit durably need not have it.
   */
  sync?(): Promise<void>;
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

  /**
   * Stores a new request, unless it is pending and the same request (action, target, channel and
   * params whatever their key order, see `pending-key.ts`) is pending already: then nothing is
   * stored and that one is returned. A unique index decides, so two replicas asking at the same
   * instant get one request.
   */
  createRequest(request: ActionRequest): Promise<CreateRequestResult>;
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
    patch: RequestPatch,
    check?: TransitionCheck,
  ): Promise<ActionRequest | undefined>;
  /**
   * Adds an approval atomically if the request is still pending, the approver is not the
   * requester and has not approved yet. Returns the updated request or a reason.
   */
  addApproval(id: string, approval: Approval, check?: ApprovalCheck): Promise<ApprovalOutcome>;
  /**
   * {@link Store.transitionRequest} and one audit entry in one transaction: undefined, and no
   * entry, when the condition did not hold; an error, and neither, when the write failed.
   */
  transitionRequestAudited(
    id: string,
    from: readonly RequestStatus[],
    patch: RequestPatch,
    check: TransitionCheck | undefined,
    audit: AuditAppend,
  ): Promise<{ request: ActionRequest; entry: AuditEntry } | undefined>;
  /** {@link Store.addApproval} and its audit entry in one transaction; a refusal writes neither. */
  addApprovalAudited(
    id: string,
    approval: Approval,
    check: ApprovalCheck | undefined,
    audit: AuditAppend,
  ): Promise<
    | (ApprovalOutcome & { ok: false; entry?: undefined })
    | { ok: true; request: ActionRequest; entry: AuditEntry }
  >;

  /**
   * The rate limit's sliding window, shared by every replica on the store: counts one use of `key`
   * at `at` unless `limit` uses of it are already counted after `windowStart`, in one step no other
   * replica can interleave with. Forgets this key's uses at or before `windowStart`.
   */
  takeRate(key: string, at: string, windowStart: string, limit: number): Promise<RateTake>;
  /** Forgets every key's uses at or before `before` (people who stopped typing); returns how many. */
  pruneRate(before: string): Promise<number>;
  /**
   * Gives back one use of `key` counted at `at` (a command that was counted, then did not run:
   * a typo, a usage error, a refusal). Nothing when it is already forgotten.
   */
  releaseRate(key: string, at: string): Promise<void>;

  /** Escalation: samples, alerts, the outbox and the leader lease. */
  escalation: EscalationStore;

  close(): Promise<void>;
}

/*
 * The store by concern: each implementation writes one function per part and its factory composes
 * them (with `purgeMethods` and `limitMethods`, shared by both).
 */
/** The audit chain: appends, its head, and reads. */
export type AuditMethods = Pick<Store, 'appendAudit' | 'auditHead' | 'listAudit'>;
/** Approval requests: creation, reads, and conditional transitions, alone or with their audit entry. */
export type RequestMethods = Pick<
  Store,
  | 'createRequest'
  | 'getRequest'
  | 'listRequests'
  | 'transitionRequest'
  | 'transitionRequestAudited'
  | 'addApproval'
  | 'addApprovalAudited'
>;
/** The rate limit's sliding window. */
export type RateMethods = Pick<Store, 'takeRate' | 'releaseRate' | 'pruneRate'>;

/** One message waiting for Slack. Posts and updates render the alert as stored when sent. */
export interface OutboxItem {
  seq: number;
  alertId: string;
  /**
   * `chart`: the queue's depth chart uploaded into the alert's thread (when it fires and resolves);
   * `page`: an event for a pager (`paging:`), `payload` `{ pager, action, key }`.
   */
  kind: 'post' | 'update' | 'thread' | 'chart' | 'notice' | 'page';
  /** Thread messages: what to say (reason, value, mentions), fixed when decided. */
  payload: Record<string, unknown>;
  createdAt: string;
  /** Not sent before this (a 429's Retry-After); the items after it wait too, to keep order. */
  notBefore: string;
  attempts: number;
  lastError?: string;
  /**
   * A process claimed it before and did not finish it (it crashed, or its claim lapsed while
   * Slack was slow): Slack may have taken it even though the store never heard so.
   */
  claimedBefore?: boolean;
}

export type OutboxInput = Pick<OutboxItem, 'kind' | 'payload'>;

/** The outbox's independent queues: alert messages in order, charts on their own, and pages. */
export type OutboxLane = 'messages' | 'charts' | 'pages';

export interface SampleRow {
  id: number;
  at: string;
  data: string;
}

export interface SamplePage {
  after?: Pick<SampleRow, 'id' | 'at'>;
  limit: number;
}

/**
 * The monitor's memory. Every write that changes an alert is conditional on its version and
 * carries the outbox items it causes in the same transaction, so a message is queued exactly when
 * the state that calls for it is stored.
 */
export interface EscalationStore {
  /**
   * Stores a sample (monitoring data: written without waiting for it to reach the disk, see the
   * implementations); returns its row's id, which `listSamples` pages by.
   */
  appendSample(at: string, data: string): Promise<number>;
  /**
   * Samples at or after `sinceAt`, oldest first; with `page`, at most `page.limit` of them, after
   * `page.after` (the last row of the previous page): a day of samples of a thousand queues is
   * more than a bot's heap, so `trend` reads it a page at a time.
   */
  listSamples(sinceAt: string, page?: SamplePage): Promise<SampleRow[]>;
  /**
   * The newest `limit` samples, newest first: what the monitor last saw (`status` reads its
   * sightings of Celery head messages there, and never writes any).
   */
  newestSamples(limit: number): Promise<SampleRow[]>;
  /** Drops samples older than `beforeAt`; returns how many. */
  pruneSamples(beforeAt: string): Promise<number>;

  getAlert(id: string): Promise<Alert | undefined>;
  /** Firing alerts (oldest first), or the newest resolved alert per key in `resolvedKeys`. */
  listAlerts(
    options: { status: 'firing' } | { status: 'resolved'; keys: readonly string[] },
  ): Promise<Alert[]>;
  /**
   * Alerts that were firing at some moment of [sinceAt, untilAt] (opened by its end, and still
   * firing or last changed at or after its start), oldest opened first, at most `limit` (the
   * incident timeline).
   */
  listAlertsInSpan(sinceAt: string, untilAt: string, limit: number): Promise<Alert[]>;
  /**
   * Stores a new firing alert (version 1) and its outbox items, unless an alert with the same key
   * is firing already. Returns the stored alert, or undefined when another one was first.
   */
  insertAlert(alert: Alert, outbox: readonly OutboxInput[]): Promise<Alert | undefined>;
  /**
   * Writes `alert` if the stored version is still `alert.version`, with its outbox items (an
   * `update` is skipped when one for the same alert is already waiting: it renders the latest
   * state anyway). Returns the alert as stored (version + 1), or undefined when it changed since.
   */
  writeAlert(alert: Alert, outbox: readonly OutboxInput[]): Promise<Alert | undefined>;

  /**
   * The oldest undelivered item, or undefined when there is none. With a lane, only that lane's:
   * `messages` (posts, updates, thread replies: delivered strictly in order, due or not), or
   * `charts` that are due at `now` and whose alert has no earlier message still waiting (a chart
   * belongs below the message it illustrates). Charts never hold up the messages lane.
   */
  nextOutbox(lane?: OutboxLane, now?: string): Promise<OutboxItem | undefined>;
  /** Takes an item for delivery until `until`, unless someone else holds it. */
  claimOutbox(seq: number, owner: string, until: string, now: string): Promise<boolean>;
  /**
   * Marks an item delivered (or given up, `outcome: 'dropped'`); for a post, records where the
   * message is on the alert (bumping its version) in the same transaction.
   */
  completeOutbox(
    seq: number,
    at: string,
    outcome: 'sent' | 'dropped',
    message?: { alertId: string; channel: string; ts: string },
    error?: string,
  ): Promise<void>;
  /** A failed attempt: not before `notBefore` again, claim released. */
  retryOutbox(seq: number, error: string, notBefore: string): Promise<void>;
  /** Items not yet delivered. */
  pendingOutbox(): Promise<number>;
  /**
   * Drops items delivered (sent or given up) before `beforeAt`; one still waiting is never
   * dropped. Returns how many. Without it the table kept a row for every Slack message ever sent.
   */
  pruneOutbox(beforeAt: string): Promise<number>;

  /** Alerts of one group (`Alert.groupId`), firing or resolved, oldest opened first. */
  listGroup(groupId: string): Promise<Alert[]>;

  /** Stores a new silence. */
  insertSilence(silence: Silence): Promise<void>;
  getSilence(id: string): Promise<Silence | undefined>;
  /** Silences in force at `at` (not lifted, not expired), oldest first. */
  listSilences(at: string): Promise<Silence[]>;
  /**
   * Lifts a silence still in force at `at`; returns it as stored then, or undefined when there is
   * no such silence. `changed` is false when it was already lifted or over.
   */
  liftSilence(
    id: string,
    by: string,
    at: string,
  ): Promise<{ silence: Silence; changed: boolean } | undefined>;

  /** Takes or renews the lease `name` until `until` if it is free, expired or already ours. */
  acquireLease(name: string, owner: string, until: string, now: string): Promise<boolean>;
  releaseLease(name: string, owner: string): Promise<void>;
  getLease(name: string): Promise<{ owner: string; expiresAt: string } | undefined>;
}

/* The escalation store by concern, as each implementation writes it. */
/** The monitor's sample history. */
export type SampleMethods = Pick<
  EscalationStore,
  'appendSample' | 'listSamples' | 'newestSamples' | 'pruneSamples'
>;
/** Alerts, and the outbox items each write of one queues with it. */
export type AlertMethods = Pick<
  EscalationStore,
  'getAlert' | 'listAlerts' | 'listAlertsInSpan' | 'insertAlert' | 'writeAlert' | 'listGroup'
>;
/** The outbox's delivery: the next item, its claim, its outcome, its retry, its pruning. */
export type OutboxMethods = Pick<
  EscalationStore,
  'nextOutbox' | 'claimOutbox' | 'completeOutbox' | 'retryOutbox' | 'pendingOutbox' | 'pruneOutbox'
>;
export type SilenceMethods = Pick<
  EscalationStore,
  'insertSilence' | 'getSilence' | 'listSilences' | 'liftSilence'
>;
/** The leader lease. */
export type LeaseMethods = Pick<EscalationStore, 'acquireLease' | 'releaseLease' | 'getLease'>;

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

/**
 * What a limit is: a Celery rate (`100/m`), a BullMQ concurrency, or a BullMQ rate limit (max jobs
 * per duration).
 */
export type LimitValue = string | number | { max: number; durationMs: number };

/**
 * What was in force before queue-ops' first limit on the target, put back when it is lifted: a
 * BullMQ queue's previous value of that kind (null: none), or each Celery worker's previous rate.
 */
export type LimitPrevious = { value: LimitValue | null } | { workers: Record<string, string | null> };

/**
 * `active`: in force; `replaced`: a later limit on the same target took over (keeping `previous`);
 * `lifted`: taken off (`off`); `expired`: lifted by the monitor when its `--for` ran out.
 */
export type LimitState = 'active' | 'replaced' | 'lifted' | 'expired';

/** One limit queue-ops set (`rate-limit`, `concurrency`); its id is the request that set it. */
export interface LimitRecord {
  id: string;
  system: string;
  /** BullMQ: the queue; Celery: the task name. */
  target: string;
  kind: 'rate-limit' | 'concurrency';
  value: LimitValue;
  previous: LimitPrevious;
  state: LimitState;
  setBy: string;
  setAt: string;
  /** When it lifts by itself (`--for`); absent: until someone lifts it. */
  expiresAt?: string;
  endedAt?: string;
  /** Who ended it: a user id, `queue-ops` (expiry), or the request that replaced it. */
  endedBy?: string;
}

/** Limit bookkeeping; both stores implement it (store contract suite). */
export interface LimitStore {
  /** Stores an active limit, ending (`replaced`) the one in force on the same target and kind. */
  recordLimit(limit: Omit<LimitRecord, 'state'>, at: string): Promise<void>;
  /** Limits in force, of one system or all. */
  activeLimits(system?: string): Promise<LimitRecord[]>;
  /** Limits in force whose `expiresAt` is at or before `at`, soonest first. */
  dueLimits(at: string): Promise<LimitRecord[]>;
  /** Ends a limit still active (one conditional write); false when it was not active any more. */
  endLimit(id: string, state: Exclude<LimitState, 'active'>, at: string, by: string): Promise<boolean>;
  /**
   * Queues a `notice` in the monitor's outbox (after the alert messages before it) telling the
   * system's alert channel about the limit; `payload` is rendered when it is sent.
   */
  queueLimitNotice(limitId: string, payload: Record<string, unknown>, at: string): Promise<void>;
}
