import { randomBytes } from 'node:crypto';
import { formatUtc } from '../blocks/format.js';
import type { ActionName, Config, Role } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { currentLocale, type Locale, messages } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import type {
  ActionRequest,
  Actor,
  Approval,
  AuditEntryInput,
  Store,
  TransitionCheck,
  Via,
} from '../store/store.js';
import { RequestStatus } from '../store/store.js';
import { type CliUsers, cliIdentity, crossTransportRefusal, type Party, partiesOf } from './identity.js';
import { isExpired, type Transition, transitions } from './state.js';

/** Who is acting (the one `Actor` of every request), and through what: transport, channel, Home tab. */
export interface Caller extends Actor {
  via: Via;
  channel?: string;
  /** `home`: a click on the App Home tab, which has no channel. */
  surface?: 'home';
}

/** Role checks, asked at the moment each step runs (never remembered from an earlier step). */
export interface Authority {
  has(userId: string, role: Role): Promise<boolean>;
  /** true / false / undefined = Slack did not say. */
  has2fa(userId: string): Promise<boolean | undefined>;
  /**
   * Whether the user may answer, from the App Home tab, what was asked in `channel`: `public` for
   * a public channel (anyone may join it), `member` or `not-member` for a private one, or what
   * Slack answered instead (`channel_not_found`…), which refuses. Absent: no Slack to ask.
   * `fresh` asks Slack now rather than trusting what it said minutes ago.
   */
  channelMembership?(
    userId: string,
    channel: string,
    options?: { fresh?: boolean },
  ): Promise<ChannelMembership>;
}

/** What {@link Authority.channelMembership} found. */
export type ChannelMembership = 'public' | 'member' | 'not-member' | { unknown: string };

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
  /** For what no user can be told: an action that ran but whose outcome could not be stored. */
  logger?: Pick<Logger, 'warn' | 'error'>;
}

/** How long an execution's lease lasts after each renewal, and how often the running replica renews it. */
export interface LeaseOptions {
  ttlMs: number;
  renewEveryMs: number;
}

/** Three renewals fit in one lease: a missed beat or two (a store blip) does not lose it. */
export const DEFAULT_LEASE: LeaseOptions = { ttlMs: 30_000, renewEveryMs: 10_000 };

/** About 4 s in all: a SQLITE_BUSY or a PostgreSQL failover is usually over by then. */
export const DEFAULT_BOOKKEEPING_RETRY = { attempts: 5, backoffMs: 250 };

/** Executions started before leases existed have none: older than this with no outcome, they count as dead. */
export const STALE_EXECUTION_MS = 2 * 60_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const isStoreUnavailable = (error: unknown) =>
  error instanceof OpsError && error.code === ErrorCode.StoreUnavailable;

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
  const retry = deps.bookkeepingRetry ?? DEFAULT_BOOKKEEPING_RETRY;
  const leaseEnd = () => new Date(now().getTime() + lease.ttlMs).toISOString();
  // Stored with the request, which has no locale of its own: written in the config's locale and
  // shown as stored.
  const t = messages(deps.locale ?? 'en').approvals;
  const cliUsers: CliUsers = deps.config.cli?.users ?? {};

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
    actor: Caller,
    request: ActionRequest,
    action: string,
    outcome: string,
    error?: string,
    extra?: Record<string, unknown>,
  ) {
    await deps.audit.record({
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
    });
  }

  /**
   * `--user` is a claim: the audit keeps the OS account and host that typed the command too, and
   * whether `cli.users` binds that account to the id (`identity: bound`) or not (`claimed`).
   */
  function originOf(actor: Caller): Record<string, string> {
    if (actor.via !== 'cli' || actor.osUser === undefined) return {};
    return {
      origin: t.viaCommandLine(actor.osUser),
      osUser: actor.osUser,
      ...(actor.host !== undefined ? { host: actor.host } : {}),
      identity: cliIdentity(cliUsers, actor.osUser, actor.id),
    };
  }

  const partyOf = (actor: Caller): Party => ({
    id: actor.id,
    via: actor.via,
    ...(actor.via === 'cli' && actor.osUser !== undefined ? { osUser: actor.osUser, host: actor.host } : {}),
  });

  /** The refusal of `actor` counting against `others` across transports, as the error to throw. */
  function crossError(requestId: string, actor: Party, others: readonly Party[]): OpsError | undefined {
    const refusal = crossTransportRefusal(cliUsers, actor, others);
    if (!refusal) return undefined;
    if (refusal.kind === 'same-person') return new OpsError(ErrorCode.SelfApproval, { id: requestId });
    const cli = refusal.kind === 'cli-actor' ? actor : refusal.party;
    return new OpsError(ErrorCode.IdentityNotBound, {
      kind: refusal.kind,
      id: requestId,
      osUser: cli.osUser ?? '?',
      user: cli.id,
    });
  }

  /**
   * A bookkeeping write retried while the store is briefly unavailable (SQLITE_BUSY past its
   * timeout, a PostgreSQL failover). Only conditional writes and appends go through here, so a
   * retry of a write that did land finds its condition gone instead of writing twice.
   */
  async function persistently<T>(write: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (attempt >= retry.attempts || !isStoreUnavailable(error)) throw error;
        await sleep(retry.backoffMs * 2 ** (attempt - 1));
      }
    }
  }

  /**
   * Renews the execution's lease every `renewEveryMs` while the executor runs. A renewal that finds
   * the request no longer executing under this owner means a sweep took it for dead (the store was
   * out of reach for a whole lease): the executor's signal tells it to stop at a safe point.
   */
  function keepLease(request: ActionRequest): {
    lost: AbortSignal;
    executorReturned(): void;
    stop(): Promise<void>;
  } {
    const lost = new AbortController();
    let executorRunning = true;
    let renewing: Promise<void> | undefined;
    const renew = async () => {
      try {
        const renewed = await deps.store.transitionRequest(
          request.id,
          [RequestStatus.Executing],
          { leaseUntil: leaseEnd() },
          { leaseOwner },
        );
        // Once the executor returned there is nothing left to stop; a renewal that races the
        // outcome write (which moves the status on) must not abort a finished action's signal.
        if (!renewed && executorRunning) lost.abort();
      } catch {
        // A blip: the next beat tries again, and the lease has room for a missed beat or two.
      }
    };
    const timer = setInterval(() => {
      renewing ??= renew().finally(() => {
        renewing = undefined;
      });
    }, lease.renewEveryMs);
    timer.unref?.();
    return {
      lost: lost.signal,
      executorReturned() {
        executorRunning = false;
      },
      async stop() {
        clearInterval(timer);
        await renewing;
      },
    };
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

  async function checkRole(actor: Pick<Caller, 'id'>, role: Role, action: string): Promise<void> {
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

  /**
   * Why the action may not run now, in words, or undefined: the requester and every stored approver
   * are checked again (role, and 2FA where required). An approver removed from the role since they
   * approved no longer counts, and the approvals were exactly enough, so it does not run.
   */
  async function refusalAtExecution(request: ActionRequest, role: Role): Promise<string | undefined> {
    const people = [
      { id: request.requestedBy, name: request.requestedByName, requester: true },
      ...request.approvals.map((a) => ({ id: a.userId, name: a.userName, requester: false })),
    ];
    for (const person of people) {
      try {
        await checkRole(person, role, request.action);
      } catch (error) {
        const who = person.name ?? person.id;
        const no2fa = error instanceof OpsError && error.code === ErrorCode.TwoFactorRequired;
        if (person.requester) return no2fa ? t.requesterNo2fa(who) : t.requesterLostRole(who, role);
        return no2fa ? t.approverNo2fa(who) : t.approverLostRole(who, role);
      }
    }
    // Each approval against everyone before it, as when it was given: two approvals racing from
    // Slack and the command line are checked together here, however the store ordered them.
    const parties = partiesOf(request);
    for (let i = 1; i < parties.length; i++) {
      const error = crossError(request.id, parties[i]!, parties.slice(0, i));
      if (error) return messages(deps.locale ?? 'en').errors.describe(error);
    }
    return undefined;
  }

  /** approved → executing → done | failed, each step conditional, so it runs at most once. */
  async function execute(approved: ActionRequest, actor: Caller): Promise<ActionRequest> {
    const policy = policyFor(approved.action);
    const reason = await refusalAtExecution(approved, policy.role);
    if (reason) {
      const refused = await move(approved, 'refuse', { error: reason, finishedAt: now().toISOString() });
      if (refused) {
        await audit(actor, refused, `action.${approved.action}`, 'failed', reason);
        await notify(refused);
        return refused;
      }
      return (await deps.store.getRequest(approved.id)) ?? approved;
    }
    const started = await move(approved, 'start', {
      startedAt: now().toISOString(),
      leaseUntil: leaseEnd(),
      leaseOwner,
    });
    if (!started) {
      // Someone else's click got there first; show what the store says now.
      return (await deps.store.getRequest(approved.id)) ?? approved;
    }
    await notify(started);
    const executor = deps.executors[started.action as ActionName];
    const heartbeat = keepLease(started);
    let patch: Partial<ActionRequest>;
    let failure: string | undefined;
    let partialResult: Readonly<Record<string, unknown>> | undefined;
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
        signal: AbortSignal.any([shutdown.signal, heartbeat.lost]),
      });
      heartbeat.executorReturned();
      patch = { status: RequestStatus.Done, result, finishedAt: now().toISOString() };
    } catch (error) {
      heartbeat.executorReturned();
      failure = error instanceof OpsError ? error.code : (error as Error)?.message || String(error);
      if (error instanceof OpsError) partialResult = error.partialResult;
      patch = {
        status: RequestStatus.Failed,
        error: failure,
        result: error instanceof OpsError ? { code: error.code, params: error.params } : undefined,
        finishedAt: now().toISOString(),
      };
    }
    // What really happened is recorded first: the bookkeeping write below may fail (SQLITE_BUSY, a
    // PostgreSQL blip), and a queue that really is paused must never be recorded as a failure.
    try {
      // The outcome goes into the trail too: a retry's old → new task ids live nowhere else. So
      // does what a failed action had done before it stopped (a retry cut short by Redis).
      const result = failure === undefined ? patch.result : partialResult;
      await persistently(() =>
        audit(
          actor,
          started,
          `action.${started.action}`,
          failure === undefined ? 'done' : 'failed',
          failure,
          result === undefined ? undefined : { result },
        ),
      );
    } catch (error) {
      deps.logger?.error(
        { err: error, requestId: started.id, action: started.action, outcome: failure ?? 'done' },
        'the action ran but its audit entry could not be written',
      );
    }
    let finished: ActionRequest | undefined;
    let stored = true;
    try {
      finished = await persistently(() => move(started, failure === undefined ? 'finish' : 'fail', patch));
    } catch (error) {
      stored = false;
      // The outcome is in the audit (or the log above); the request stays `executing` and, once its
      // lease runs out, is reported interrupted: "check the queue", which is the honest advice.
      deps.logger?.error(
        { err: error, requestId: started.id, action: started.action, outcome: failure ?? 'done' },
        'the action ran but its outcome could not be stored',
      );
    } finally {
      await heartbeat.stop();
    }
    const final = stored
      ? (finished ?? (await deps.store.getRequest(started.id)) ?? started)
      : ({ ...started, ...patch } as ActionRequest);
    await notify(final);
    return final;
  }

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
    const expired = await move(request, 'expire', {}, { expiredAt: now().toISOString() });
    if (expired) {
      await audit(actor, expired, 'request.expired', 'expired');
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
      const added = await deps.store.addApproval(id, approval, { distinctOsUser });
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
        const at = now();
        let moved: ActionRequest | undefined;
        if (row.status === RequestStatus.Executing) {
          // The lease's own end when it has one; executions from before leases, by their start.
          const deadline = row.leaseUntil
            ? at
            : new Date(at.getTime() - (options.staleAfterMs ?? STALE_EXECUTION_MS));
          if (Date.parse(row.leaseUntil ?? row.startedAt ?? row.updatedAt) > deadline.getTime()) continue;
          // A purge or undo goes on from its archive: purge recovery (here or on another replica)
          // finishes it and settles its request. Reported interrupted meanwhile, it would show an
          // "interrupted" error next to its `done`.
          if (await finishedByRecovery(row)) continue;
          // Conditional on the lease still being out: a renewal that lands first keeps it running.
          moved = await move(
            row,
            'interrupt',
            { error: t.interruptedError, finishedAt: at.toISOString() },
            { leaseExpiredAt: deadline.toISOString() },
          );
        } else {
          // Approved, but its `approved → executing` write failed or its bot died before it: no
          // replica picked it up within a lease's length, and none will. It never ran.
          if (Date.parse(row.updatedAt) > at.getTime() - lease.ttlMs) continue;
          moved = await move(row, 'abandon', { error: t.neverStartedError, finishedAt: at.toISOString() });
        }
        if (moved) {
          await audit(
            { id: 'queue-ops', name: 'queue-ops', via: row.via, channel: row.channel },
            moved,
            'request.interrupted',
            'interrupted',
            moved.error,
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
