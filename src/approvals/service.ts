import { randomBytes } from 'node:crypto';
import { formatUtc } from '../blocks/format.js';
import type { ActionName, Config } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { currentLocale, type Locale, messages } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import type { ActionRequest, Approval, Store } from '../store/store.js';
import { RequestStatus } from '../store/store.js';
import {
  type AuditWriter,
  type Caller,
  createExecution,
  DEFAULT_BOOKKEEPING_RETRY,
  DEFAULT_LEASE,
  type Executor,
  type LeaseOptions,
  type ProgressListener,
  type UnwrittenOutcome,
} from './execution.js';
import { type CliUsers, partiesOf } from './identity.js';
import { type Authority, createApprovalPolicy } from './policy.js';
import { isExpired } from './state.js';

// Defined with the execution, which the service composes; named here too, where callers look.
export {
  type ActionProgress,
  type AuditRecorder,
  type AuditWriter,
  type Caller,
  DEFAULT_BOOKKEEPING_RETRY,
  DEFAULT_LEASE,
  type ExecutionContext,
  type Executor,
  type LeaseOptions,
  type ProgressListener,
  type UnwrittenOutcome,
} from './execution.js';

export type { Authority, ChannelMembership } from './policy.js';

/** Tells the world a request changed (e.g. updates its Slack message in place). Never throws. */
export type RequestListener = (request: ActionRequest) => Promise<void>;

export interface SubmitInput {
  actor: Caller;
  action: ActionName;
  target: string;
  params: Record<string, unknown>;
  /** One line computed now, shown to approvers. */
  preview: string;
  /** The request's id when the preview already names it (a purge's archive path); else a new one. */
  id?: string;
  /** More approvals than the policy's `approvals` for this request (a bulk retry); never fewer. */
  requiredApprovals?: number;
}

export interface Approvals {
  /**
   * Creates a request. With `approvals: 0` in the policy it runs at once and the returned
   * request is already done or failed.
   */
  submit(input: SubmitInput): Promise<ActionRequest>;
  approve(id: string, actor: Caller): Promise<ActionRequest>;
  deny(id: string, actor: Caller, reason?: string): Promise<ActionRequest>;
  /** Pending requests that have not expired, oldest first. */
  pending(): Promise<ActionRequest[]>;
  get(id: string): Promise<ActionRequest | undefined>;
  /** Marks pending requests past their ttl as expired; returns them. */
  expireDue(): Promise<ActionRequest[]>;
  /**
   * Executions whose lease ran out (the replica running them stopped renewing it: it died) become
   * interrupted, never retried, however long the action itself takes; so do approved requests no
   * replica started within a lease's length. A replica that starts never takes another replica's
   * execution in progress for a dead one, since that replica keeps renewing its lease.
   * `staleAfterMs` only judges executions started before leases existed (default 2 minutes).
   */
  recoverInterrupted(options?: { staleAfterMs?: number }): Promise<ActionRequest[]>;
  /** Lets the composition root attach a listener after the Slack app exists. */
  onChange(listener: RequestListener): void;
  /**
   * Tells the listeners of a change made outside this service (purge recovery settling a purge's
   * request), as of every change made here. Never throws.
   */
  announce(request: ActionRequest): Promise<void>;
  /** Progress of executing requests (e.g. a Slack message or a terminal progress bar). */
  onProgress(listener: ProgressListener): void;
  /** The process is shutting down: running executors see their signal aborted. */
  abortExecutions(): void;
  /** Remembers the Slack message that shows the request, so later changes update it in place. */
  attachMessage(id: string, messageTs: string): Promise<ActionRequest | undefined>;
}

export interface ApprovalsDeps {
  store: Store;
  audit: AuditWriter;
  authority: Authority;
  config: Pick<Config, 'policies' | 'approvals'> & { cli?: { users: CliUsers } };
  /** The config's `locale`: previews and stored errors are written in it. English by default. */
  locale?: Locale;
  executors: Partial<Record<ActionName, Executor>>;
  now?: () => Date;
  newId?: () => string;
  /** The execution lease; {@link DEFAULT_LEASE} unless a test shortens it. */
  lease?: LeaseOptions;
  /** Names this replica as a lease holder; unique per instance by default. */
  leaseOwner?: string;
  /** How the bookkeeping write after an action is retried while the store is unavailable. */
  bookkeepingRetry?: { attempts: number; backoffMs: number };
  /** An outcome the store still refuses after those retries: kept and written again (default), or reported. */
  unwrittenOutcome?: UnwrittenOutcome;
  /** For what no user can be told: an action that ran but whose outcome could not be stored. */
  logger?: Pick<Logger, 'warn' | 'error'>;
}

/** Executions started before leases existed have none: older than this with no outcome, they count as dead. */
export const STALE_EXECUTION_MS = 2 * 60_000;

const idAlphabet = 'abcdefghjkmnpqrstuvwxyz23456789';

/** `r-` and 8 unambiguous characters: short enough to type, too many to guess. */
export function newRequestId(): string {
  const bytes = randomBytes(8);
  let out = 'r-';
  for (const byte of bytes) out += idAlphabet[byte % idAlphabet.length];
  return out;
}

export function createApprovals(deps: ApprovalsDeps): Approvals {
  const now = deps.now ?? (() => new Date());
  const newId = deps.newId ?? newRequestId;
  const listeners: RequestListener[] = [];
  const progressListeners: ProgressListener[] = [];
  const shutdown = new AbortController();
  const lease = deps.lease ?? DEFAULT_LEASE;
  const leaseOwner = deps.leaseOwner ?? `replica-${randomBytes(6).toString('hex')}`;
  // Stored with the request, which has no locale of its own: written in the config's locale and
  // shown as stored.
  const t = messages(deps.locale ?? 'en').approvals;
  const { policyFor, originOf, partyOf, crossError, checkRole, refusalAtExecution } =
    createApprovalPolicy(deps);

  async function notify(request: ActionRequest): Promise<void> {
    for (const listener of listeners) {
      try {
        await listener(request);
      } catch {
        // A Slack hiccup must not undo or repeat a state change that is already stored.
      }
    }
  }

  /** The audit entry of one step of `request`, timed now. */
  function entryOf(
    actor: Caller,
    request: ActionRequest,
    action: string,
    outcome: string,
    error?: string,
    extra?: Record<string, unknown>,
  ) {
    return {
      at: now().toISOString(),
      actorId: actor.id,
      actorName: actor.name,
      via: actor.via,
      channel: actor.channel,
      action,
      target: request.target,
      params: {
        request: request.id,
        action: request.action,
        ...request.params,
        ...originOf(actor),
        ...extra,
      },
      outcome,
      error,
    };
  }

  async function audit(
    actor: Caller,
    request: ActionRequest,
    action: string,
    outcome: string,
    error?: string,
  ) {
    await deps.audit.record(entryOf(actor, request, action, outcome, error));
  }

  const execution = createExecution({
    store: deps.store,
    audit: deps.audit,
    executors: deps.executors,
    now,
    lease,
    leaseOwner,
    retry: deps.bookkeepingRetry ?? DEFAULT_BOOKKEEPING_RETRY,
    unwrittenOutcome: deps.unwrittenOutcome ?? 'keep',
    logger: deps.logger,
    entryOf,
    notify,
    progressListeners,
    shutdown: shutdown.signal,
    refusal: async (request) => await refusalAtExecution(request, policyFor(request.action).role),
  });
  const execute = execution.execute;

  /** A purge or undo request whose purge row recovery will finish (see Purges.recover). */
  async function finishedByRecovery(row: ActionRequest): Promise<boolean> {
    if (row.action === 'purge') return (await deps.store.getPurge(row.id))?.state === 'archiving';
    if (row.action !== 'undo') return false;
    const purge = await deps.store.getPurge(String(row.params.purgeId));
    return purge?.state === 'undoing' && purge.undoneBy === row.id;
  }

  async function load(id: string, actor: Caller): Promise<ActionRequest> {
    const request = await deps.store.getRequest(id);
    // A request from another channel is reported as unknown: a forged button must learn nothing.
    // The Home tab has no channel: there, only someone who holds the role that may approve the
    // request (or its requester) learns that it exists.
    const fromHome = actor.via === 'slack' && actor.surface === 'home';
    const hidden = fromHome
      ? request !== undefined &&
        request.requestedBy !== actor.id &&
        !(await deps.authority.has(actor.id, policyFor(request.action).role))
      : actor.via === 'slack' && Boolean(request?.channel) && actor.channel !== request?.channel;
    if (!request || hidden) {
      throw new OpsError(ErrorCode.UnknownRequest, {
        id,
        channel: actor.via === 'slack' ? 'yes' : undefined,
      });
    }
    // The Home tab crosses channels: what was asked in a private channel is answered there only
    // by its members (the requester, who asked in it, may still withdraw).
    if (fromHome && request.via === 'slack' && request.channel && request.requestedBy !== actor.id) {
      const membership = deps.authority.channelMembership
        ? // Asked now, not from the tab's cache: someone removed from the channel since their tab
          // was drawn must not answer its requests for the minutes the cache would still vouch.
          await deps.authority.channelMembership(actor.id, request.channel, { fresh: true })
        : { unknown: 'no Slack client' };
      if (membership !== 'public' && membership !== 'member') {
        throw new OpsError(ErrorCode.NotChannelMember, {
          id,
          reason: membership === 'not-member' ? 'not-member' : membership.unknown,
        });
      }
    }
    return request;
  }

  async function expireIfDue(request: ActionRequest, actor: Caller): Promise<ActionRequest> {
    if (request.status !== RequestStatus.Pending || !isExpired(request.expiresAt, now())) return request;
    const expired = await execution.moveAudited(
      request,
      'expire',
      {},
      { expiredAt: now().toISOString() },
      entryOf(actor, request, 'request.expired', 'expired'),
    );
    if (expired) {
      await notify(expired);
      return expired;
    }
    return (await deps.store.getRequest(request.id)) ?? request;
  }

  /**
   * The same action asked twice (a double click, two people in one channel, `undo` typed again,
   * two replicas at the same instant) would wait as two requests, and both could be approved and
   * run. The store's unique index keeps the first; a twin whose ttl ran out is expired here (as a
   * sweep would) and the new one takes its place.
   */
  async function createOnce(request: ActionRequest): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await deps.store.createRequest(request);
      if (outcome.created) return;
      const twin = outcome.pending;
      if (attempt < 3 && isExpired(twin.expiresAt, now())) {
        await expireIfDue(twin, { id: 'queue-ops', name: 'queue-ops', via: twin.via, channel: twin.channel });
        continue;
      }
      throw new OpsError(ErrorCode.DuplicateRequest, {
        id: twin.id,
        action: request.action,
        target: request.target,
      });
    }
  }

  /**
   * An execution whose lease ran out becomes `interrupted` and "may have run" (it started: its
   * start was written with `request.executing`), with what to check; an approved request no
   * replica started within a lease's length becomes `interrupted` and "did not run", which is
   * then certain: nothing runs without its start written first. Each with its audit entry, in
   * one write. Undefined when the row is left as it is.
   */
  async function closeIfLapsed(row: ActionRequest, staleAfterMs: number): Promise<ActionRequest | undefined> {
    const at = now();
    const system: Caller = { id: 'queue-ops', name: 'queue-ops', via: row.via, channel: row.channel };
    if (row.status === RequestStatus.Executing) {
      // This process ran it and is still writing its outcome (a full disk): not dead.
      if (execution.unsettled(row.id)) return undefined;
      // The lease's own end when it has one; executions from before leases, by their start.
      const deadline = row.leaseUntil ? at : new Date(at.getTime() - staleAfterMs);
      if (Date.parse(row.leaseUntil ?? row.startedAt ?? row.updatedAt) > deadline.getTime()) return undefined;
      // A purge or undo goes on from its archive: purge recovery (here or on another replica)
      // finishes it and settles its request. Reported interrupted meanwhile, it would show an
      // "interrupted" error next to its `done`.
      if (await finishedByRecovery(row)) return undefined;
      const error = t.interruptedError(row.target);
      // Conditional on the lease still being out: a renewal that lands first keeps it running.
      return await execution.moveAudited(
        row,
        'interrupt',
        { error, finishedAt: at.toISOString() },
        { leaseExpiredAt: deadline.toISOString() },
        entryOf(system, row, 'request.interrupted', 'interrupted', error),
      );
    }
    // Approved, but its start was never written (its bot died first, or the store refused it):
    // no replica picked it up within a lease's length, and none will.
    if (Date.parse(row.updatedAt) > at.getTime() - lease.ttlMs) return undefined;
    return await execution.moveAudited(
      row,
      'abandon',
      { error: t.neverStartedError, finishedAt: at.toISOString() },
      undefined,
      entryOf(system, row, 'request.interrupted', 'interrupted', t.neverStartedError),
    );
  }

  const api: Approvals = {
    async submit(input) {
      const policy = policyFor(input.action);
      const required = Math.max(policy.approvals, input.requiredApprovals ?? 0);
      const createdAt = now();
      const request: ActionRequest = {
        id: input.id ?? newId(),
        action: input.action,
        target: input.target,
        params: input.params,
        status: required > 0 ? RequestStatus.Pending : RequestStatus.Approved,
        requestedBy: input.actor.id,
        requestedByName: input.actor.name,
        via: input.actor.via,
        channel: input.actor.channel,
        ...(input.actor.via === 'cli' && input.actor.osUser !== undefined
          ? { requestedByOsUser: input.actor.osUser, requestedOnHost: input.actor.host }
          : {}),
        requiredApprovals: required,
        approvals: [],
        preview: input.preview,
        createdAt: createdAt.toISOString(),
        expiresAt: new Date(createdAt.getTime() + deps.config.approvals.ttlMinutes * 60_000).toISOString(),
        updatedAt: createdAt.toISOString(),
      };
      await createOnce(request);
      await audit(input.actor, request, 'request.created', required > 0 ? 'requested' : 'approved');
      if (required > 0) {
        // A new request is waiting for someone: their App Home tabs show it without a reopen.
        await notify(request);
        return request;
      }
      return await execute(request, input.actor);
    },

    async approve(id, actor) {
      let request = await expireIfDue(await load(id, actor), actor);
      if (request.status === RequestStatus.Expired) {
        await audit(actor, request, 'request.approve', 'rejected', 'expired');
        throw new OpsError(ErrorCode.RequestExpired, {
          id,
          expiresAt: request.expiresAt,
          // As every other time is shown, in the answer's locale (a request's is current here).
          expired: formatUtc(Date.parse(request.expiresAt), currentLocale(), false),
        });
      }
      if (request.status !== RequestStatus.Pending) {
        throw new OpsError(ErrorCode.RequestNotPending, { id, status: request.status });
      }
      if (request.requestedBy === actor.id) {
        await audit(actor, request, 'request.approve', 'rejected', 'self-approval');
        throw new OpsError(ErrorCode.SelfApproval, { id });
      }
      // A command-line identity counts against a Slack one only when `cli.users` binds it.
      const cross = crossError(id, partyOf(actor), partiesOf(request));
      if (cross) {
        await audit(
          actor,
          request,
          'request.approve',
          'rejected',
          cross.code === ErrorCode.SelfApproval ? 'self-approval' : cross.code,
        );
        throw cross;
      }
      try {
        await checkRole(actor, policyFor(request.action).role, `approve ${request.action}`);
      } catch (error) {
        await audit(actor, request, 'request.approve', 'denied', (error as OpsError).code);
        throw error;
      }
      const approval: Approval = { userId: actor.id, userName: actor.name, at: now().toISOString() };
      if (actor.via === 'cli') {
        approval.via = 'cli';
        if (actor.osUser !== undefined) approval.osUser = actor.osUser;
        if (actor.host !== undefined) approval.host = actor.host;
      }
      // One OS account typing `--user U0BOB approve` after `--user U0ALICE pause` is one person.
      const distinctOsUser = actor.via === 'cli' && deps.config.approvals.cliSameOsUser !== 'allow';
      // The approval, its audit entry and (when it is the last one needed, before the ttl) the
      // move to approved are one write: a full disk never keeps one without the others.
      const added = await deps.audit.recordWith(
        entryOf(actor, request, 'request.approved', 'approved'),
        (entry, key) =>
          deps.store.addApprovalAudited(
            id,
            approval,
            { distinctOsUser, approveIfCompleteAt: approval.at },
            { entry, key },
          ),
      );
      if (!added.ok) {
        if (added.reason === 'self') throw new OpsError(ErrorCode.SelfApproval, { id });
        if (added.reason === 'same-os-user') {
          await audit(actor, added.request ?? request, 'request.approve', 'rejected', t.sameOsUserRejected);
          throw new OpsError(ErrorCode.SelfApproval, { id });
        }
        if (added.reason === 'duplicate') throw new OpsError(ErrorCode.AlreadyApproved, { id });
        if (added.reason === 'missing') throw new OpsError(ErrorCode.UnknownRequest, { id });
        const current = added.request ?? request;
        throw new OpsError(ErrorCode.RequestNotPending, { id, status: current.status });
      }
      request = added.request;
      // Not complete yet, or its ttl ran out at this very moment (the sweep expires it).
      if (request.status !== RequestStatus.Approved) {
        await notify(request);
        return request;
      }
      return await execute(request, actor);
    },

    async deny(id, actor, reason) {
      const request = await expireIfDue(await load(id, actor), actor);
      if (request.status !== RequestStatus.Pending) {
        throw new OpsError(ErrorCode.RequestNotPending, { id, status: request.status });
      }
      // An unbound `--user` does not answer what was asked in Slack, not even as its requester.
      const cross = crossError(id, partyOf(actor), partiesOf(request).slice(0, 1));
      if (cross?.code === ErrorCode.IdentityNotBound && cross.params.kind === 'cli-actor') {
        await audit(actor, request, 'request.deny', 'rejected', cross.code);
        throw cross;
      }
      // The requester may withdraw; anyone else needs the role that could approve it.
      if (request.requestedBy !== actor.id) {
        try {
          await checkRole(actor, policyFor(request.action).role, `deny ${request.action}`);
        } catch (error) {
          await audit(actor, request, 'request.deny', 'denied', (error as OpsError).code);
          throw error;
        }
      }
      const denied = await execution.moveAudited(
        request,
        'deny',
        { deniedBy: actor.id, denyReason: reason },
        undefined,
        entryOf(actor, request, 'request.denied', 'rejected', reason),
      );
      if (!denied) {
        const current = (await deps.store.getRequest(id)) ?? request;
        throw new OpsError(ErrorCode.RequestNotPending, { id, status: current.status });
      }
      await notify(denied);
      return denied;
    },

    async pending() {
      const rows = await deps.store.listRequests({ statuses: [RequestStatus.Pending] });
      return rows
        .filter((r) => !isExpired(r.expiresAt, now()))
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },

    async get(id) {
      return await deps.store.getRequest(id);
    },

    async expireDue() {
      const system: Caller = { id: 'queue-ops', name: 'queue-ops', via: 'cli' };
      const rows = await deps.store.listRequests({ statuses: [RequestStatus.Pending] });
      const expired: ActionRequest[] = [];
      for (const row of rows) {
        if (!isExpired(row.expiresAt, now())) continue;
        const moved = await expireIfDue(row, { ...system, channel: row.channel, via: row.via });
        if (moved.status === RequestStatus.Expired) expired.push(moved);
      }
      return expired;
    },

    async recoverInterrupted(options = {}) {
      const rows = await deps.store.listRequests({
        statuses: [RequestStatus.Approved, RequestStatus.Executing],
      });
      const out: ActionRequest[] = [];
      for (const row of rows) {
        const moved = await closeIfLapsed(row, options.staleAfterMs ?? STALE_EXECUTION_MS);
        if (!moved) continue;
        await notify(moved);
        out.push(moved);
      }
      return out;
    },

    onChange(listener) {
      listeners.push(listener);
    },

    announce: notify,

    onProgress(listener) {
      progressListeners.push(listener);
    },

    abortExecutions() {
      shutdown.abort();
    },

    async attachMessage(id, messageTs) {
      const any = Object.values(RequestStatus);
      return await deps.store.transitionRequest(id, any, { messageTs });
    },
  };
  return api;
}
