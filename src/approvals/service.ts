import { randomBytes } from 'node:crypto';
import type { ActionName, Config } from '../config/schema.js';
import { type Locale, messages } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import type { ActionRequest, Store } from '../store/store.js';
import { RequestStatus } from '../store/store.js';
import { type ApprovalsContext, stepEntries } from './context.js';
import { approveRequest, denyRequest, type SubmitInput, submitRequest } from './decisions.js';
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
import type { CliUsers } from './identity.js';
import { type Authority, createApprovalPolicy } from './policy.js';
import { pendingRequests } from './requests.js';
import { expireDueRequests, recoverInterruptedRequests } from './sweep.js';

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

// Each role's own types and constants, named here too, where callers look.
export type { SubmitInput } from './decisions.js';
export { STALE_EXECUTION_MS } from './sweep.js';

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

const idAlphabet = 'abcdefghjkmnpqrstuvwxyz23456789';

/** `r-` and 8 unambiguous characters: short enough to type, too many to guess. */
export function newRequestId(): string {
  const bytes = randomBytes(8);
  let out = 'r-';
  for (const byte of bytes) out += idAlphabet[byte % idAlphabet.length];
  return out;
}

/**
 * The approvals service, composed of its roles: the policy (who may do what, asked at each step),
 * the execution (running an approved request at most once), the requests' API (submit, approve,
 * deny: `decisions.ts`; reads: `requests.ts`) and the sweep of what expired or lapsed (`sweep.ts`).
 */
export function createApprovals(deps: ApprovalsDeps): Approvals {
  const now = deps.now ?? (() => new Date());
  const listeners: RequestListener[] = [];
  const progressListeners: ProgressListener[] = [];
  const shutdown = new AbortController();
  const lease = deps.lease ?? DEFAULT_LEASE;
  const leaseOwner = deps.leaseOwner ?? `replica-${randomBytes(6).toString('hex')}`;
  const policy = createApprovalPolicy(deps);
  const entryOf = stepEntries(now, policy.originOf);

  async function notify(request: ActionRequest): Promise<void> {
    for (const listener of listeners) {
      try {
        await listener(request);
      } catch {
        // A Slack hiccup must not undo or repeat a state change that is already stored.
      }
    }
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
    refusal: async (request) =>
      await policy.refusalAtExecution(request, policy.policyFor(request.action).role),
  });

  const ctx: ApprovalsContext = {
    store: deps.store,
    audit: deps.audit,
    authority: deps.authority,
    config: deps.config,
    // Stored with the request, which has no locale of its own: written in the config's locale and
    // shown as stored.
    t: messages(deps.locale ?? 'en').approvals,
    now,
    newId: deps.newId ?? newRequestId,
    lease,
    policy,
    execution,
    entryOf,
    notify,
  };

  return {
    submit: (input) => submitRequest(ctx, input),
    approve: (id, actor) => approveRequest(ctx, id, actor),
    deny: (id, actor, reason) => denyRequest(ctx, id, actor, reason),
    pending: () => pendingRequests(ctx),
    get: async (id) => await deps.store.getRequest(id),
    expireDue: () => expireDueRequests(ctx),
    recoverInterrupted: (options) => recoverInterruptedRequests(ctx, options),
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
}
