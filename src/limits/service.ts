import type { AuditRecordInput } from '../audit/audit.js';
import type {
  LimitKind,
  LimitOutcome,
  QueueBackend,
  QueueLimits,
  QueueLimitValues,
  RateLimitAnswer,
  WorkerRateLimit,
} from '../backends/queue-backend.js';
import type { BackendRegistry } from '../backends/registry.js';
import { ErrorCode, OpsError } from '../errors.js';
import type { Logger } from '../lib/logger.js';
import type { ActionRequest, LimitPrevious, LimitRecord, LimitStore, LimitValue } from '../store/store.js';

export type { LimitKind, LimitOutcome } from '../backends/queue-backend.js';

/** The parameters a `rate-limit` or `concurrency` request stores (read back when it runs). */
export interface LimitParams {
  system: string;
  kind: LimitKind;
  /** BullMQ: the queue; Celery: the task. */
  target: string;
  /** What to set; null: `off` (back to what was there before queue-ops, or none). */
  value: LimitValue | null;
  /** `--for`: lifted by itself this long after it runs. */
  forMs?: number;
}

export interface LimitsDeps {
  store: LimitStore;
  audit: { record(input: AuditRecordInput): Promise<unknown> };
  backends: () => BackendRegistry;
  now: () => Date;
  logger?: Logger;
}

/** Who lifts a limit whose `--for` ran out, in the audit trail. */
const MONITOR_ACTOR = { actorId: 'queue-ops', actorName: 'queue-ops monitor', via: 'cli' as const };

/** The value of one kind a BullMQ queue has now (null: none). */
export function valueOfKind(limits: QueueLimitValues, kind: LimitKind): LimitValue | null {
  return kind === 'concurrency' ? limits.concurrency : limits.rateLimit;
}

/** Checks a stored request's parameters again: they are data, not a promise. */
export function limitParamsOf(request: Pick<ActionRequest, 'params'>): LimitParams {
  const p = request.params;
  const kind = p.kind === 'concurrency' ? 'concurrency' : 'rate-limit';
  const value = p.value ?? null;
  const valid =
    value === null ||
    (typeof value === 'string' && value.length <= 40) ||
    (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 10_000) ||
    (typeof value === 'object' &&
      Number.isInteger((value as { max?: unknown }).max) &&
      Number.isInteger((value as { durationMs?: unknown }).durationMs));
  if (!valid || typeof p.system !== 'string' || typeof p.target !== 'string')
    throw new OpsError(ErrorCode.BadArgument, {
      message: 'the stored limit request is not one queue-ops made',
    });
  const forMs = typeof p.forMs === 'number' && p.forMs > 0 ? p.forMs : undefined;
  return {
    system: p.system,
    kind,
    target: p.target,
    value: value as LimitValue | null,
    ...(forMs ? { forMs } : {}),
  };
}

/** The rates to send to put each worker back (`previous`); a worker not in it is left as it is. */
export function restoreRates(
  current: readonly WorkerRateLimit[],
  previous: LimitPrevious | undefined,
): WorkerRateLimit[] {
  const before = previous && 'workers' in previous ? previous.workers : undefined;
  return current.map(({ worker, rate }) => ({
    worker,
    rate: before === undefined ? null : Object.hasOwn(before, worker) ? (before[worker] ?? null) : rate,
  }));
}

/**
 * Rate limits and concurrency that queue-ops sets, remembers in its store, and lifts: on `off`
 * back to what was there before its first limit on the target, and when a `--for` runs out (the
 * monitor's leader runs {@link Limits.liftExpired} as its `limit-expiry` background job, before
 * each tick: src/background/jobs.ts).
 */
export interface Limits {
  execute(request: ActionRequest): Promise<LimitOutcome>;
  /** Lifts every limit whose `--for` has run out: restored, audited, the alert channel told. */
  liftExpired(): Promise<LimitRecord[]>;
}

/**
 * Celery: the rate goes to every worker that has the task now, each reply collected; `null`
 * puts each back as `previous` says (or none). Refused when no worker has the task.
 */
async function celery(
  backend: QueueBackend,
  params: LimitParams,
  previous: LimitPrevious | undefined,
): Promise<{ before: Record<string, string | null>; answers: RateLimitAnswer[] }> {
  if (!backend.taskRateLimits || !backend.setTaskRateLimit)
    throw new OpsError(ErrorCode.NotSupported, {
      system: params.system,
      type: backend.type,
      what: 'rate-limit',
    });
  const { workers } = await backend.taskRateLimits(params.target);
  const before = Object.fromEntries(workers.map((w) => [w.worker, w.rate]));
  if (workers.length === 0) return { before, answers: [] };
  const rates =
    params.value === null
      ? restoreRates(workers, previous)
      : workers.map((w) => ({ worker: w.worker, rate: String(params.value) }));
  const answers = await backend.setTaskRateLimit(params.target, rates);
  return { before, answers };
}

/**
 * BullMQ: the queue's limit set to the value, or with `null` back to `restore`; `onlyIf` writes
 * only while the queue still holds that value.
 */
async function bullmq(
  backend: QueueBackend,
  params: LimitParams,
  restore: LimitValue | null,
  options: { onlyIf?: LimitValue | null } = {},
): Promise<{ before: QueueLimits; after: QueueLimits; written?: boolean }> {
  if (!backend.setQueueLimit)
    throw new OpsError(ErrorCode.NotSupported, {
      system: params.system,
      type: backend.type,
      what: params.kind,
    });
  const value = params.value ?? restore;
  return params.kind === 'concurrency'
    ? await backend.setQueueLimit(
        params.target,
        { kind: 'concurrency', value: value as number | null },
        options as { onlyIf?: number | null },
      )
    : await backend.setQueueLimit(
        params.target,
        { kind: 'rate-limit', value: value as { max: number; durationMs: number } | null },
        options as { onlyIf?: { max: number; durationMs: number } | null },
      );
}

export function createLimits(deps: LimitsDeps): Limits {
  const { store, now } = deps;

  function backendOf(system: string): QueueBackend {
    const backend = deps.backends().get(system);
    if (!backend) throw new OpsError(ErrorCode.UnknownSystem, { system, valid: deps.backends().names() });
    return backend;
  }

  async function activeOf(system: string, target: string, kind: LimitKind): Promise<LimitRecord | undefined> {
    return (await store.activeLimits(system)).find((l) => l.target === target && l.kind === kind);
  }

  return {
    async execute(request) {
      const params = limitParamsOf(request);
      const backend = backendOf(params.system);
      const active = await activeOf(params.system, params.target, params.kind);
      const at = now();
      const outcome: LimitOutcome = {
        system: params.system,
        target: params.target,
        kind: params.kind,
        value: params.value,
        previous: { value: null },
      };
      if (backend.facts.limitTarget === 'task') {
        const { before, answers } = await celery(backend, params, active?.previous);
        // No worker has the task any more, or none of them took the change: nothing is recorded.
        if (!answers.some((a) => a.ok))
          throw new OpsError(ErrorCode.NoWorkersAnswered, {
            system: params.system,
            queue: params.target,
            action: 'rate-limit',
          });
        outcome.previous = { workers: before };
        outcome.answers = answers;
      } else {
        const restore = active && 'value' in active.previous ? active.previous.value : null;
        const { before, after } = await bullmq(backend, params, restore);
        outcome.previous = { value: valueOfKind(before, params.kind) };
        outcome.now = valueOfKind(after, params.kind);
      }
      const iso = at.toISOString();
      if (params.value !== null) {
        // The first limit's `previous` is kept through later ones: `off` goes back to before all of them.
        const expiresAt = params.forMs ? new Date(at.getTime() + params.forMs).toISOString() : undefined;
        await store.recordLimit(
          {
            id: request.id,
            system: params.system,
            target: params.target,
            kind: params.kind,
            value: params.value,
            previous: active?.previous ?? outcome.previous,
            setBy: request.requestedBy,
            setAt: iso,
            ...(expiresAt ? { expiresAt } : {}),
          },
          iso,
        );
        if (expiresAt) outcome.expiresAt = expiresAt;
      } else if (active) {
        await store.endLimit(active.id, 'lifted', iso, request.requestedBy);
        outcome.lifted = active.id;
      }
      return outcome;
    },

    async liftExpired() {
      const lifted: LimitRecord[] = [];
      const due = await store.dueLimits(now().toISOString());
      for (const limit of due) {
        const target = `${limit.system}/${limit.target}`;
        try {
          const backend = backendOf(limit.system);
          const params: LimitParams = {
            system: limit.system,
            kind: limit.kind,
            target: limit.target,
            value: null,
          };
          const result: Record<string, unknown> = {};
          if (backend.facts.limitTarget === 'task') {
            const { before, answers } = await celery(backend, params, limit.previous);
            result.before = before;
            result.answers = answers;
          } else {
            const restore = 'value' in limit.previous ? limit.previous.value : null;
            // Put back only while the queue still holds this limit's value, in one step: a replica
            // that read the limit as due and stalled (its monitor lease already moved on) must not
            // undo a newer limit set since, when it wakes.
            const { before, after, written } = await bullmq(backend, params, restore, {
              onlyIf: limit.value,
            });
            result.before = valueOfKind(before, limit.kind);
            result.now = valueOfKind(after, limit.kind);
            if (written === false) result.leftAsFound = true;
          }
          const at = now().toISOString();
          // Another replica's `off` or a newer limit got there first: that one stands.
          if (!(await store.endLimit(limit.id, 'expired', at, MONITOR_ACTOR.actorId))) continue;
          await deps.audit.record({
            ...MONITOR_ACTOR,
            action: 'limit.expired',
            target,
            params: {
              request: limit.id,
              kind: limit.kind,
              value: limit.value,
              restored: limit.previous,
              setBy: limit.setBy,
              expiresAt: limit.expiresAt ?? null,
              ...result,
            },
            outcome: 'done',
          });
          await store.queueLimitNotice(
            limit.id,
            {
              system: limit.system,
              target: limit.target,
              kind: limit.kind,
              value: limit.value,
              restored: limit.previous,
              setBy: limit.setBy,
            },
            at,
          );
          lifted.push({ ...limit, state: 'expired', endedAt: at, endedBy: MONITOR_ACTOR.actorId });
        } catch (error) {
          // Tried again on the next tick: a Redis that is down now keeps the limit until it answers.
          deps.logger?.warn(
            { err: error, limit: limit.id, target },
            'a limit ran out but could not be lifted yet',
          );
        }
      }
      return lifted;
    },
  };
}
