import type { QueueBackend, SystemStatus, SystemType } from '../backends/queue-backend.js';
import { askSystem } from '../backends/timeout.js';
import { formatUtc } from '../blocks/format.js';
import type { Message } from '../blocks/message.js';
import { type StatusView, statusMessage } from '../blocks/status.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import { allSystems, parseTarget, resolveSystem, resolveTarget } from '../pipeline/parse.js';
import { newRef } from '../pipeline/ref.js';
import type { CommandContext, CommandDefinition, Reply, Request } from '../pipeline/types.js';

/** `--json` data of `status`, exactly as README documents it. */
export interface StatusData {
  systems: StatusSystemData[];
}

/**
 * One system in `status --json`. A system that could not be read has `ok: false`, `error` (one
 * line), `redis: null` and empty `queues`/`workers`, so scripts can iterate without checks.
 */
export interface StatusSystemData {
  name: string;
  type: SystemType;
  ok: boolean;
  error?: string;
  redis: { usedMemoryBytes: number; maxMemoryBytes: number; maxMemoryPolicy: string } | null;
  queues: {
    name: string;
    waiting: number;
    active: number;
    delayed: number;
    prioritized: number;
    failed: number;
    completed: number;
    isPaused: boolean;
    oldestWaitingSeconds: number | null;
  }[];
  workers: { name: string; active?: number }[];
}

/** One system's outcome, as the status builder receives it. */
export type SystemOutcome =
  | { name: string; type: SystemType; ok: true; status: SystemStatus }
  | { name: string; type: SystemType; ok: false; error: string; cause?: OpsError };

export { STATUS_TIMEOUT_MS, systemTimeoutMs } from '../backends/timeout.js';

/**
 * Reads every backend in parallel; one that fails (down, hanging, unexpected error) becomes an
 * `ok: false` outcome and never stops the others.
 */
export async function readSystems(
  ctx: CommandContext,
  request: Request,
  targets: { system: string; backend: QueueBackend; queues?: string[] }[],
): Promise<SystemOutcome[]> {
  const t = messages(request.locale);
  const settled = await Promise.allSettled(
    targets.map(({ system, backend, queues }) => askSystem(ctx, system, backend.status(queues))),
  );
  return settled.map((result, index): SystemOutcome => {
    const { system, backend } = targets[index]!;
    if (result.status === 'fulfilled') {
      return { name: system, type: backend.type, ok: true, status: result.value };
    }
    const reason: unknown = result.reason;
    if (isOpsError(reason)) {
      return { name: system, type: backend.type, ok: false, error: t.errors.describe(reason), cause: reason };
    }
    const ref = newRef();
    ctx.logger?.error({ err: reason, ref, system }, 'status of one system failed unexpectedly');
    return { name: system, type: backend.type, ok: false, error: t.common.somethingWentWrong(ref) };
  });
}

/** The exact `--json` shape: no key beyond the documented ones. */
export function toStatusData(outcomes: readonly SystemOutcome[]): StatusData {
  return {
    systems: outcomes.map((o): StatusSystemData => {
      if (!o.ok)
        return {
          name: o.name,
          type: o.type,
          ok: false,
          error: o.error,
          redis: null,
          queues: [],
          workers: [],
        };
      const { redis, queues, workers } = o.status;
      return {
        name: o.name,
        type: o.type,
        ok: true,
        redis: {
          usedMemoryBytes: redis.usedMemoryBytes,
          maxMemoryBytes: redis.maxMemoryBytes,
          maxMemoryPolicy: redis.maxMemoryPolicy,
        },
        queues: queues.map((q) => ({
          name: q.name,
          waiting: q.waiting,
          active: q.active,
          delayed: q.delayed,
          prioritized: q.prioritized,
          failed: q.failed,
          completed: q.completed,
          isPaused: q.isPaused,
          oldestWaitingSeconds: q.oldestWaitingSeconds,
        })),
        workers: workers.map((w) =>
          w.active === undefined ? { name: w.name } : { name: w.name, active: w.active },
        ),
      };
    }),
  };
}

/**
 * `statusMessage`, rendered once for commands that share a snapshot. Commands typed together share
 * one Redis read (`coalesceStatus`), so two hundred `/queue status` in an incident got the same
 * status objects and each rendered them again: 200 renders in one turn of the event loop, 100-200
 * ms with their garbage, while Slack requests that arrived meanwhile waited to be acknowledged.
 * The last message is reused while nothing it shows differs: every system read fine into the very
 * same status objects, and scope, locale and the "updated" time as shown (to the second) match.
 * A message is plain data that nothing downstream changes, so sharing it is safe.
 */
export function statusRenderer(): (view: StatusView, locale: Locale) => Message {
  let last: { view: StatusView; locale: Locale; updated: string; message: Message } | undefined;
  const sameSnapshot = (a: StatusView, b: StatusView) =>
    a.scope === b.scope &&
    a.thresholds === b.thresholds &&
    a.systems.length === b.systems.length &&
    a.systems.every((sys, i) => {
      const other = b.systems[i]!;
      return sys.ok && other.ok && sys.status === other.status && sys.name === other.name;
    });
  return (view, locale) => {
    const updated = formatUtc(view.generatedAt, locale);
    if (last && last.locale === locale && last.updated === updated && sameSnapshot(last.view, view))
      return last.message;
    const message = statusMessage(view, locale);
    last = { view, locale, updated, message };
    return message;
  };
}

const renderStatus = statusRenderer();

/**
 * `status [system[/queue]]`. The reply is ok while at least one asked-for system answered; when
 * every one of them is down the command failed (`ok: false`, code `RedisUnavailable`) but the
 * message and data still show each system's error.
 */
export const statusCommand: CommandDefinition = {
  verb: 'status',
  mutating: false,
  async run(ctx: CommandContext, args: string[], request: Request): Promise<Reply> {
    const t = messages(request.locale);
    if (args.length > 1) {
      throw new OpsError(ErrorCode.UsageError, {
        message: t.commands.tooManyArguments(args[1]!),
        usage: t.commands.usage.status,
      });
    }
    const scope = args[0];
    let targets: { system: string; backend: QueueBackend; queues?: string[] }[];
    let earlyFailure: SystemOutcome | undefined;
    if (scope === undefined) {
      targets = allSystems(ctx);
    } else {
      const target = parseTarget(scope);
      if (target.queue === undefined) {
        // resolveTarget, not resolveSystem: a queue named without its system is pointed at it.
        targets = [await resolveTarget(ctx, target)];
      } else {
        const { system, backend } = resolveSystem(ctx, target.system);
        try {
          const resolved = await askSystem(ctx, system, resolveTarget(ctx, target));
          targets = [{ system, backend, queues: [resolved.queue!] }];
        } catch (error) {
          // Discovering the queue list needs the Redis; when it is down, that is a system error.
          if (!isOpsError(error) || error.code !== ErrorCode.RedisUnavailable) throw error;
          targets = [];
          earlyFailure = {
            name: system,
            type: backend.type,
            ok: false,
            error: t.errors.describe(error),
            cause: error,
          };
        }
      }
    }

    const outcomes = earlyFailure ? [earlyFailure] : await readSystems(ctx, request, targets);
    const data = toStatusData(outcomes);
    const message = renderStatus(
      { generatedAt: ctx.now(), scope: scope ?? '', systems: outcomes },
      request.locale,
    );
    const down = outcomes.filter((o) => !o.ok);
    if (outcomes.length > 0 && down.length === outcomes.length) {
      const first = down[0] as Extract<SystemOutcome, { ok: false }>;
      return {
        ok: false,
        message,
        data,
        visibility: 'in_channel',
        error: {
          code: ErrorCode.RedisUnavailable,
          params: { system: down.map((o) => o.name).join(', '), reason: first.cause?.params.reason },
        },
      };
    }
    return { ok: true, message, data, visibility: 'in_channel' };
  },
};
