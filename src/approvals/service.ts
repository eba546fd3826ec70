import { randomBytes } from 'node:crypto';
import type { ActionName, Config, Role } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { ActionRequest, AuditEntryInput, Store, TransitionCheck, Via } from '../store/store.js';
import { RequestStatus } from '../store/store.js';
import { isExpired, type Transition, transitions } from './state.js';

/** Who is acting, and through what. */
export interface Actor {
  id: string;
  name?: string;
  via: Via;
  channel?: string;
}

/** Role checks, asked at the moment each step runs (never remembered from an earlier step). */
export interface Authority {
  has(userId: string, role: Role): Promise<boolean>;
  /** true / false / undefined = Slack did not say. */
  has2fa(userId: string): Promise<boolean | undefined>;
}

/** How far a long action has come (a purge of a million jobs, a big retry). */
export interface ActionProgress {
  done: number;
  total: number;
  /** What it is doing now, e.g. `archiving`, `deleting`; shown as is. */
  phase?: string;
}

/** What an executor gets besides its request: a way to report progress, and to learn it should stop. */
export interface ExecutionContext {
  /** Cheap to call often: listeners are told, and they throttle their own updates. */
  progress(update: ActionProgress): void;
  /** Aborted when the process is shutting down; a long action stops at a safe point. */
  signal: AbortSignal;
}

/** Runs an approved action with the parameters read back from the store. */
export type Executor = (request: ActionRequest, run: ExecutionContext) => Promise<Record<string, unknown>>;

/** Told of an executing request's progress. Never throws into the executor. */
export type ProgressListener = (request: ActionRequest, progress: ActionProgress) => void;

/** Something that records audit entries; written and awaited before the user sees the result. */
export interface AuditRecorder {
  record(entry: Omit<AuditEntryInput, 'at'> & { at?: string }): Promise<unknown>;
}

/** Tells the world a request changed (e.g. updates its Slack message in place). Never throws. */
export type RequestListener = (request: ActionRequest) => Promise<void>;

export interface SubmitInput {
  actor: Actor;
  action: ActionName;
  target: string;
  params: Record<string, unknown>;
  /** One line computed now, shown to approvers. */
  preview: string;
  /** The request's id when the preview already names it (a purge's archive path); else a new one. */
  id?: string;
}

export interface Approvals {
  /**
   * Creates a request. With `approvals: 0` in the policy it runs at once and the returned
   * request is already done or failed.
   */
  submit(input: SubmitInput): Promise<ActionRequest>;
  approve(id: string, actor: Actor): Promise<ActionRequest>;
  deny(id: string, actor: Actor, reason?: string): Promise<ActionRequest>;
  /** Pending requests that have not expired, oldest first. */
  pending(): Promise<ActionRequest[]>;
  get(id: string): Promise<ActionRequest | undefined>;
  /** Marks pending requests past their ttl as expired; returns them. */
  expireDue(): Promise<ActionRequest[]>;
  /**
   * Requests that started executing more than `staleAfterMs` ago and never finished become
   * interrupted, never retried. With several replicas on one PostgreSQL store, a replica that
   * starts must not take another replica's execution in progress for a dead one: only stale
   * executions count (pause and resume take seconds; default 2 minutes).
   */
  recoverInterrupted(options?: { staleAfterMs?: number }): Promise<ActionRequest[]>;
  /** Lets the composition root attach a listener after the Slack app exists. */
  onChange(listener: RequestListener): void;
  /** Progress of executing requests (e.g. a Slack message or a terminal progress bar). */
  onProgress(listener: ProgressListener): void;
  /** The process is shutting down: running executors see their signal aborted. */
  abortExecutions(): void;
  /** Remembers the Slack message that shows the request, so later changes update it in place. */
  attachMessage(id: string, messageTs: string): Promise<ActionRequest | undefined>;
}

export interface ApprovalsDeps {
  store: Store;
  audit: AuditRecorder;
  authority: Authority;
  config: Pick<Config, 'policies' | 'approvals'>;
  executors: Partial<Record<ActionName, Executor>>;
  now?: () => Date;
  newId?: () => string;
}

/** An execution older than this with no outcome is taken for one whose bot died. */
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
  // Stored with the request, which has no locale; shown as stored.
  const t = messages('en').approvals;

  const policyFor = (action: string) => {
    const policy = deps.config.policies[action as ActionName];
    if (!policy) throw new OpsError(ErrorCode.BadArgument, { message: t.noPolicy(action) });
    return policy;
  };

  async function notify(request: ActionRequest): Promise<void> {
    for (const listener of listeners) {
      try {
        await listener(request);
      } catch {
        // A Slack hiccup must not undo or repeat a state change that is already stored.
      }
    }
  }

  async function audit(
    actor: Actor,
    request: ActionRequest,
    action: string,
    outcome: string,
    error?: string,
  ) {
    await deps.audit.record({
      at: now().toISOString(),
      actorId: actor.id,
      actorName: actor.name,
      via: actor.via,
      channel: actor.channel,
      action,
      target: request.target,
      params: { request: request.id, action: request.action, ...request.params },
      outcome,
      error,
    });
  }

  async function move(
    request: ActionRequest,
    transition: Transition,
    patch: Partial<ActionRequest> = {},
    check?: TransitionCheck,
  ): Promise<ActionRequest | undefined> {
    const { from, to } = transitions[transition];
    return await deps.store.transitionRequest(
      request.id,
      from,
      { ...patch, status: to, updatedAt: now().toISOString() },
      check,
    );
  }

  async function checkRole(actor: Pick<Actor, 'id'>, role: Role, action: string): Promise<void> {
    if (!(await deps.authority.has(actor.id, role))) {
      throw new OpsError(ErrorCode.Forbidden, { role, action });
    }
    if (deps.config.approvals.require2fa && role === 'admin') {
      const has2fa = await deps.authority.has2fa(actor.id);
      if (has2fa !== true)
        throw new OpsError(ErrorCode.TwoFactorRequired, {
          action,
          status: has2fa === false ? 'off' : 'unknown',
        });
    }
  }

  /** approved → executing → done | failed, each step conditional, so it runs at most once. */
  async function execute(approved: ActionRequest, actor: Actor): Promise<ActionRequest> {
    const policy = policyFor(approved.action);
    const requester: Actor = {
      id: approved.requestedBy,
      name: approved.requestedByName,
      via: approved.via,
      channel: approved.channel,
    };
    try {
      await checkRole(requester, policy.role, approved.action);
    } catch (error) {
      const who = approved.requestedByName ?? approved.requestedBy;
      const reason =
        error instanceof OpsError && error.code === ErrorCode.TwoFactorRequired
          ? t.requesterNo2fa(who)
          : t.requesterLostRole(who, policy.role);
      const refused = await move(approved, 'refuse', { error: reason, finishedAt: now().toISOString() });
      if (refused) {
        await audit(actor, refused, `action.${approved.action}`, 'failed', reason);
        await notify(refused);
        return refused;
      }
      return (await deps.store.getRequest(approved.id)) ?? approved;
    }
    const started = await move(approved, 'start', { startedAt: now().toISOString() });
    if (!started) {
      // Someone else's click got there first; show what the store says now.
      return (await deps.store.getRequest(approved.id)) ?? approved;
    }
    await notify(started);
    const executor = deps.executors[started.action as ActionName];
    let finished: ActionRequest | undefined;
    try {
      if (!executor) throw new OpsError(ErrorCode.NotSupported, { what: started.action });
      const result = await executor(started, {
        progress(update) {
          for (const listener of progressListeners) {
            try {
              listener(started, update);
            } catch {
              // A display that fails must not stop the action.
            }
          }
        },
        signal: shutdown.signal,
      });
      finished = await move(started, 'finish', { result, finishedAt: now().toISOString() });
      if (finished) await audit(actor, finished, `action.${started.action}`, 'done');
    } catch (error) {
      const message = error instanceof OpsError ? error.code : (error as Error)?.message || String(error);
      finished = await move(started, 'fail', {
        error: message,
        result: error instanceof OpsError ? { code: error.code, params: error.params } : undefined,
        finishedAt: now().toISOString(),
      });
      if (finished) await audit(actor, finished, `action.${started.action}`, 'failed', message);
    }
    const final = finished ?? (await deps.store.getRequest(started.id)) ?? started;
    await notify(final);
    return final;
  }

  async function load(id: string, actor: Actor): Promise<ActionRequest> {
    const request = await deps.store.getRequest(id);
    // A request from another channel is reported as unknown: a forged button must learn nothing.
    if (!request || (actor.via === 'slack' && request.channel && actor.channel !== request.channel)) {
      throw new OpsError(ErrorCode.UnknownRequest, {
        id,
        channel: actor.via === 'slack' ? 'yes' : undefined,
      });
    }
    return request;
  }

  async function expireIfDue(request: ActionRequest, actor: Actor): Promise<ActionRequest> {
    if (request.status !== RequestStatus.Pending || !isExpired(request.expiresAt, now())) return request;
    const expired = await move(request, 'expire', {}, { expiredAt: now().toISOString() });
    if (expired) {
      await audit(actor, expired, 'request.expired', 'expired');
      await notify(expired);
      return expired;
    }
    return (await deps.store.getRequest(request.id)) ?? request;
  }

  const api: Approvals = {
    async submit(input) {
      const policy = policyFor(input.action);
      const createdAt = now();
      const request: ActionRequest = {
        id: input.id ?? newId(),
        action: input.action,
        target: input.target,
        params: input.params,
        status: policy.approvals > 0 ? RequestStatus.Pending : RequestStatus.Approved,
        requestedBy: input.actor.id,
        requestedByName: input.actor.name,
        via: input.actor.via,
        channel: input.actor.channel,
        requiredApprovals: policy.approvals,
        approvals: [],
        preview: input.preview,
        createdAt: createdAt.toISOString(),
        expiresAt: new Date(createdAt.getTime() + deps.config.approvals.ttlMinutes * 60_000).toISOString(),
        updatedAt: createdAt.toISOString(),
      };
      await deps.store.createRequest(request);
      await audit(input.actor, request, 'request.created', policy.approvals > 0 ? 'requested' : 'approved');
      if (policy.approvals > 0) return request;
      return await execute(request, input.actor);
    },

    async approve(id, actor) {
      let request = await expireIfDue(await load(id, actor), actor);
      if (request.status === RequestStatus.Expired) {
        await audit(actor, request, 'request.approve', 'rejected', 'expired');
        throw new OpsError(ErrorCode.RequestExpired, { id, expiresAt: request.expiresAt });
      }
      if (request.status !== RequestStatus.Pending) {
        throw new OpsError(ErrorCode.RequestNotPending, { id, status: request.status });
      }
      if (request.requestedBy === actor.id) {
        await audit(actor, request, 'request.approve', 'rejected', 'self-approval');
        throw new OpsError(ErrorCode.SelfApproval, { id });
      }
      try {
        await checkRole(actor, policyFor(request.action).role, `approve ${request.action}`);
      } catch (error) {
        await audit(actor, request, 'request.approve', 'denied', (error as OpsError).code);
        throw error;
      }
      const added = await deps.store.addApproval(id, {
        userId: actor.id,
        userName: actor.name,
        at: now().toISOString(),
      });
      if (!added.ok) {
        if (added.reason === 'self') throw new OpsError(ErrorCode.SelfApproval, { id });
        if (added.reason === 'duplicate') throw new OpsError(ErrorCode.AlreadyApproved, { id });
        if (added.reason === 'missing') throw new OpsError(ErrorCode.UnknownRequest, { id });
        const current = added.request ?? request;
        throw new OpsError(ErrorCode.RequestNotPending, { id, status: current.status });
      }
      request = added.request;
      await audit(actor, request, 'request.approved', 'approved');
      if (request.approvals.length < request.requiredApprovals) {
        await notify(request);
        return request;
      }
      // Approving, expiring and counting are one conditional write: a click that races the ttl
      // or another approver can never approve a request twice or an expired one at all.
      const approved = await move(
        request,
        'approve',
        {},
        { notExpiredAt: now().toISOString(), approvalsComplete: true },
      );
      if (!approved) return (await deps.store.getRequest(id)) ?? request;
      return await execute(approved, actor);
    },

    async deny(id, actor, reason) {
      const request = await expireIfDue(await load(id, actor), actor);
      if (request.status !== RequestStatus.Pending) {
        throw new OpsError(ErrorCode.RequestNotPending, { id, status: request.status });
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
      const denied = await move(request, 'deny', { deniedBy: actor.id, denyReason: reason });
      if (!denied) {
        const current = (await deps.store.getRequest(id)) ?? request;
        throw new OpsError(ErrorCode.RequestNotPending, { id, status: current.status });
      }
      await audit(actor, denied, 'request.denied', 'rejected', reason);
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
      const system: Actor = { id: 'queue-ops', name: 'queue-ops', via: 'cli' };
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
      const cutoff = now().getTime() - (options.staleAfterMs ?? STALE_EXECUTION_MS);
      const rows = await deps.store.listRequests({ statuses: [RequestStatus.Executing] });
      const out: ActionRequest[] = [];
      for (const row of rows) {
        if (Date.parse(row.startedAt ?? row.updatedAt) > cutoff) continue;
        const moved = await move(row, 'interrupt', {
          error: t.interruptedError,
          finishedAt: now().toISOString(),
        });
        if (moved) {
          await audit(
            { id: 'queue-ops', name: 'queue-ops', via: row.via, channel: row.channel },
            moved,
            'request.interrupted',
            'interrupted',
          );
          await notify(moved);
          out.push(moved);
        }
      }
      return out;
    },

    onChange(listener) {
      listeners.push(listener);
    },

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
