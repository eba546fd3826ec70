import type { Audit, AuditRecordInput } from '../audit/audit.js';
import type { ActionName } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import type { Logger } from '../lib/logger.js';
import type {
  ActionRequest,
  Actor,
  AuditEntry,
  RequestPatch,
  Store,
  TransitionCheck,
  Via,
} from '../store/store.js';
import { RequestStatus } from '../store/store.js';
import { type Transition, transitions } from './state.js';

/** Who is acting (the one `Actor` of every request), and through what: transport, channel, Home tab. */
export interface Caller extends Actor {
  via: Via;
  channel?: string;
  /** `home`: a click on the App Home tab, which has no channel. */
  surface?: 'home';
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
  record(entry: AuditRecordInput): Promise<unknown>;
}

/** The audit as the approvals use it: entries on their own, and entries written with a state change. */
export type AuditWriter = AuditRecorder & Pick<Audit, 'recordWith'>;

/** How long an execution's lease lasts after each renewal, and how often the running replica renews it. */
export interface LeaseOptions {
  ttlMs: number;
  renewEveryMs: number;
}

/** Three renewals fit in one lease: a missed beat or two (a store blip) does not lose it. */
export const DEFAULT_LEASE: LeaseOptions = { ttlMs: 30_000, renewEveryMs: 10_000 };

/** About 4 s in all: a SQLITE_BUSY or a PostgreSQL failover is usually over by then. */
export const DEFAULT_BOOKKEEPING_RETRY = { attempts: 5, backoffMs: 250 };

/** The longest wait between two writes of an outcome the store keeps refusing (a full disk). */
const OUTCOME_RETRY_CAP_MS = 30_000;

/**
 * What becomes of an outcome the store still refuses after the bookkeeping retries: `keep` (the
 * bot, which goes on running) keeps it and writes it again until it lands; `report` (the command
 * line, which ends) answers {@link ErrorCode.OutcomeNotStored}, naming the write.
 */
export type UnwrittenOutcome = 'keep' | 'report';

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref?.();
  });

export const isStoreUnavailable = (error: unknown): error is OpsError =>
  error instanceof OpsError && error.code === ErrorCode.StoreUnavailable;

/** What the execution needs from the approvals service that composes it. */
export interface ExecutionDeps {
  store: Store;
  audit: AuditWriter;
  executors: Partial<Record<ActionName, Executor>>;
  now: () => Date;
  lease: LeaseOptions;
  leaseOwner: string;
  retry: { attempts: number; backoffMs: number };
  unwrittenOutcome: UnwrittenOutcome;
  logger?: Pick<Logger, 'warn' | 'error'>;
  /** The audit entry of one step of `request`, timed now. */
  entryOf(
    actor: Caller,
    request: ActionRequest,
    action: string,
    outcome: string,
    error?: string,
    extra?: Record<string, unknown>,
  ): AuditRecordInput & { at: string };
  notify(request: ActionRequest): Promise<void>;
  progressListeners: readonly ProgressListener[];
  /** Aborted when the process shuts down. */
  shutdown: AbortSignal;
  /** Why the request may not run now, in words (the requester's or an approver's role is gone). */
  refusal(request: ActionRequest): Promise<string | undefined>;
}

export interface Execution {
  /** approved → executing → done | failed, each step conditional, so it runs at most once. */
  execute(approved: ActionRequest, actor: Caller): Promise<ActionRequest>;
  /** Whether this process ran the request and is still writing its outcome (the sweep leaves it). */
  unsettled(id: string): boolean;
  /**
   * One step as one write: the transition and its audit entry, in one transaction of the store.
   * Undefined (and no entry) when the transition's condition did not hold.
   */
  moveAudited(
    request: ActionRequest,
    transition: Transition,
    patch: RequestPatch,
    check: TransitionCheck | undefined,
    entry: AuditRecordInput,
  ): Promise<ActionRequest | undefined>;
}

/** When a lease taken or renewed now runs out. */
const leaseEnd = (deps: Pick<ExecutionDeps, 'now' | 'lease'>) =>
  new Date(deps.now().getTime() + deps.lease.ttlMs).toISOString();

/**
 * A bookkeeping write retried while the store is briefly unavailable (SQLITE_BUSY past its
 * timeout, a PostgreSQL failover). Only conditional writes go through here, so a retry of a
 * write that did land finds its condition gone instead of writing twice.
 */
async function persistently<T>(retry: ExecutionDeps['retry'], write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= retry.attempts || !isStoreUnavailable(error)) throw error;
      await sleep(retry.backoffMs * 2 ** (attempt - 1));
    }
  }
}

/** One step as one write: the transition and its audit entry, in one transaction of the store. */
function auditedMover(deps: Pick<ExecutionDeps, 'store' | 'audit' | 'now'>): Execution['moveAudited'] {
  return async (request, transition, patch, check, entry) => {
    const { from, to } = transitions[transition];
    const stored = await deps.audit.recordWith(
      entry,
      async (input, key): Promise<{ request?: ActionRequest; entry?: AuditEntry }> =>
        (await deps.store.transitionRequestAudited(
          request.id,
          from,
          { ...patch, status: to, updatedAt: deps.now().toISOString() },
          check,
          { entry: input, key },
        )) ?? {},
    );
    return stored.request;
  };
}

/**
 * Renews the execution's lease every `renewEveryMs` until stopped. A renewal that finds the
 * request no longer executing under this owner means a sweep took it for dead (the store was
 * out of reach for a whole lease): the executor's signal tells it to stop at a safe point.
 */
function keepLease(deps: ExecutionDeps, request: ActionRequest) {
  const lost = new AbortController();
  let executorRunning = true;
  let renewing: Promise<void> | undefined;
  const renew = async () => {
    try {
      const renewed = await deps.store.transitionRequest(
        request.id,
        [RequestStatus.Executing],
        { leaseUntil: leaseEnd(deps) },
        { leaseOwner: deps.leaseOwner },
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
  }, deps.lease.renewEveryMs);
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

/** Runs the request's executor, its progress told to every listener. */
async function runExecutor(deps: ExecutionDeps, started: ActionRequest, signal: AbortSignal) {
  const executor = deps.executors[started.action as ActionName];
  if (!executor) throw new OpsError(ErrorCode.NotSupported, { what: started.action });
  return await executor(started, {
    progress(update) {
      for (const listener of deps.progressListeners) {
        try {
          listener(started, update);
        } catch {
          // A display that fails must not stop the action.
        }
      }
    },
    signal,
  });
}

/** What the executor's return or throw writes on the request, and what it had done if it failed. */
function outcomeOf(
  deps: Pick<ExecutionDeps, 'now'>,
  ran: { result: Record<string, unknown> } | { error: unknown },
): { patch: RequestPatch; failure?: string; partialResult?: Readonly<Record<string, unknown>> } {
  // `error: null`: a request a sweep reported interrupted meanwhile is done after all.
  if ('result' in ran)
    return { patch: { result: ran.result, error: null, finishedAt: deps.now().toISOString() } };
  const { error } = ran;
  const failure = error instanceof OpsError ? error.code : (error as Error)?.message || String(error);
  return {
    failure,
    partialResult: error instanceof OpsError ? error.partialResult : undefined,
    patch: {
      error: failure,
      result: error instanceof OpsError ? { code: error.code, params: error.params } : undefined,
      finishedAt: deps.now().toISOString(),
    },
  };
}

/**
 * Writes `write` again, each time a little later, until the store takes it; then tells the world.
 * `unsettledIds` holds the request meanwhile.
 */
function keepWriting(
  deps: ExecutionDeps,
  unsettledIds: Set<string>,
  started: ActionRequest,
  write: () => Promise<ActionRequest | undefined>,
  done: () => Promise<void>,
) {
  unsettledIds.add(started.id);
  const attempt = async (delay: number): Promise<void> => {
    await sleep(delay);
    try {
      const finished = await write();
      unsettledIds.delete(started.id);
      await done();
      deps.logger?.warn({ requestId: started.id, action: started.action }, 'the kept outcome is written now');
      await deps.notify(finished ?? (await deps.store.getRequest(started.id)) ?? started);
    } catch (error) {
      if (deps.shutdown.aborted) {
        // The process is going: what it held is in the log above; the request, once its lease
        // runs out, is reported as one that may have run.
        deps.logger?.error(
          { err: error, requestId: started.id, action: started.action },
          'shutting down with an outcome the store never took',
        );
        return;
      }
      return await attempt(Math.min(delay * 2, OUTCOME_RETRY_CAP_MS));
    }
  };
  void attempt(deps.retry.backoffMs);
}

/**
 * Running an approved request. The start is one durable write holding both `executing` and the
 * audit entry `request.executing`: if it fails, nothing runs, and a request still `approved` is
 * one that certainly did not run. The outcome is one write too (its status and `action.<verb>`):
 * one the store refuses is kept and written again until it lands (the bot), or reported naming
 * that write (the command line). Until then the request stays `executing`: whoever sweeps it
 * after its lease says it may have run, never that it did not.
 */
export function createExecution(deps: ExecutionDeps): Execution {
  const { store, now, leaseOwner } = deps;
  /** Outcomes this process holds and keeps writing. */
  const unsettledIds = new Set<string>();
  const moveAudited = auditedMover(deps);

  /** The start: `executing` and `request.executing` in one write; nothing runs without both. */
  async function start(approved: ActionRequest, actor: Caller): Promise<ActionRequest | undefined> {
    try {
      return await moveAudited(
        approved,
        'start',
        { startedAt: now().toISOString(), leaseUntil: leaseEnd(deps), leaseOwner },
        undefined,
        deps.entryOf(actor, approved, 'request.executing', 'executing'),
      );
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      throw new OpsError(ErrorCode.StartNotStored, {
        id: approved.id,
        action: approved.action,
        target: approved.target,
        reason: String(error.params.reason ?? error.code),
      });
    }
  }

  async function execute(approved: ActionRequest, actor: Caller): Promise<ActionRequest> {
    const reason = await deps.refusal(approved);
    if (reason) {
      const refused = await moveAudited(
        approved,
        'refuse',
        { error: reason, finishedAt: now().toISOString() },
        undefined,
        deps.entryOf(actor, approved, `action.${approved.action}`, 'failed', reason),
      );
      if (refused) {
        await deps.notify(refused);
        return refused;
      }
      return (await store.getRequest(approved.id)) ?? approved;
    }
    const started = await start(approved, actor);
    // Someone else's click got there first; show what the store says now.
    if (!started) return (await store.getRequest(approved.id)) ?? approved;
    await deps.notify(started);
    const heartbeat = keepLease(deps, started);
    let ran: { result: Record<string, unknown> } | { error: unknown };
    try {
      ran = { result: await runExecutor(deps, started, AbortSignal.any([deps.shutdown, heartbeat.lost])) };
    } catch (error) {
      ran = { error };
    }
    heartbeat.executorReturned();
    const { patch, failure, partialResult } = outcomeOf(deps, ran);
    return await settle(started, actor, patch, failure, heartbeat.stop, partialResult);
  }

  /**
   * The outcome and its audit entry in one write. The entry carries the result: a retry's
   * old → new task ids live nowhere else, nor does what a failed action had done before it
   * stopped (a retry cut short by Redis).
   */
  async function settle(
    started: ActionRequest,
    actor: Caller,
    patch: RequestPatch,
    failure: string | undefined,
    stopLease: () => Promise<void>,
    partialResult?: Readonly<Record<string, unknown>>,
  ): Promise<ActionRequest> {
    const result = failure === undefined ? patch.result : partialResult;
    const outcome = failure === undefined ? 'done' : 'failed';
    const entry = deps.entryOf(
      actor,
      started,
      `action.${started.action}`,
      outcome,
      failure,
      result == null ? undefined : { result },
    );
    // Conditional on holding the lease. Kept and written later, it lands on `interrupted` too: a
    // sweep took this execution for dead while the store refused its outcome; the truth replaces it.
    const write = (late = false) =>
      moveAudited(
        started,
        failure === undefined ? (late ? 'finishLate' : 'finish') : late ? 'failLate' : 'fail',
        patch,
        { leaseOwner },
        entry,
      );
    let finished: ActionRequest | undefined;
    try {
      finished = await persistently(deps.retry, () => write());
    } catch (error) {
      const reason = isStoreUnavailable(error) ? String(error.params.reason ?? error.code) : String(error);
      deps.logger?.error(
        { err: error, requestId: started.id, action: started.action, outcome: failure ?? 'done', result },
        'the action ran but its outcome could not be written',
      );
      if (deps.unwrittenOutcome === 'report') {
        await stopLease();
        throw new OpsError(ErrorCode.OutcomeNotStored, {
          id: started.id,
          action: started.action,
          target: started.target,
          outcome,
          reason,
        });
      }
      keepWriting(deps, unsettledIds, started, () => write(true), stopLease);
      const kept = { ...started, ...patch, status: outcome } as ActionRequest;
      await deps.notify(kept);
      return kept;
    }
    await stopLease();
    const final = finished ?? (await store.getRequest(started.id)) ?? started;
    await deps.notify(final);
    return final;
  }

  return { execute, unsettled: (id) => unsettledIds.has(id), moveAudited };
}
