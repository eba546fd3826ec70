import type { SystemType, WorkerInfo } from '../backends/queue-backend.js';
import { askSystem, withSystemTimeout } from '../backends/timeout.js';
import type { GroupView } from '../blocks/scale.js';
import { type WorkersSystem, workersMessage } from '../blocks/workers.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import { allSystems, resolveSystem } from '../pipeline/parse.js';
import { newRef } from '../pipeline/ref.js';
import type { CommandContext, CommandDefinition, Reply, Request } from '../pipeline/types.js';
import type { GroupState, GroupType } from '../scalers/types.js';
import { answerVisibility, type VerbFacts } from '../verbs.js';

export const workersFacts = {
  verb: 'workers',
  order: 30,
  mutating: false,
  answer: 'shared',
  timeline: 'look',
  readPath: true,
} satisfies VerbFacts;

/**
 * One system in `workers --json`; `startedAt` of active tasks is ISO 8601 UTC. `groups` (present
 * when the system has `workers:` in config) are the worker groups' live state.
 */
export type WorkersSystemData = (
  | { name: string; type: SystemType; ok: true; workers: WorkerData[] }
  | { name: string; type: SystemType; ok: false; error: string; workers: [] }
) & { groups?: GroupData[] };

/** A worker group in `workers --json`: its state, or why it could not be read. */
export type GroupData =
  | ({ ok: true } & GroupState)
  | { ok: false; system: string; group: string; type: GroupType; error: string };

export interface WorkerData {
  name: string;
  queues?: string[];
  active?: number;
  activeTasks?: { id: string; name: string; startedAt?: string }[];
  reserved?: number;
  reservedTasks?: { id: string; name: string }[];
  idleSeconds?: number;
  details?: Record<string, string | number>;
}

/** `--json` data of `workers`. */
export interface WorkersData {
  systems: WorkersSystemData[];
}

function toWorkerData(w: WorkerInfo): WorkerData {
  const out: WorkerData = { name: w.name };
  if (w.queues) out.queues = [...w.queues];
  if (w.active !== undefined) out.active = w.active;
  if (w.activeTasks) {
    out.activeTasks = w.activeTasks.map((task) =>
      task.startedAt === undefined
        ? { id: task.id, name: task.name }
        : { id: task.id, name: task.name, startedAt: new Date(task.startedAt).toISOString() },
    );
  }
  if (w.reserved !== undefined) out.reserved = w.reserved;
  if (w.reservedTasks) out.reservedTasks = w.reservedTasks.map((task) => ({ ...task }));
  if (w.idleSeconds !== undefined) out.idleSeconds = w.idleSeconds;
  if (w.details) out.details = { ...w.details };
  return out;
}

/**
 * `workers [system]`: every system in parallel (or one); a system that does not answer is
 * reported as such while the others still list their workers. Fails only when all are down.
 */
export const workersCommand: CommandDefinition = {
  ...workersFacts,
  async run(ctx: CommandContext, args: string[], request: Request): Promise<Reply> {
    const t = messages(request.locale);
    if (args.length > 1) {
      throw new OpsError(ErrorCode.UsageError, {
        message: t.commands.tooManyArguments(args[1]!),
        usage: t.commands.usage.workers,
      });
    }
    const targets = args[0] === undefined ? allSystems(ctx) : [resolveSystem(ctx, args[0])];

    const [settled, groups] = await Promise.all([
      Promise.allSettled(targets.map(({ system, backend }) => askSystem(ctx, system, backend.workers()))),
      Promise.all(targets.map(({ system }) => readGroups(ctx, system, request.locale))),
    ]);
    const causes: (OpsError | undefined)[] = [];
    const systems = settled.map((result, index) => {
      const { system, backend } = targets[index]!;
      if (result.status === 'fulfilled') {
        causes.push(undefined);
        return { name: system, type: backend.type, ok: true as const, workers: result.value };
      }
      const reason: unknown = result.reason;
      if (isOpsError(reason)) {
        causes.push(reason);
        return { name: system, type: backend.type, ok: false as const, error: t.errors.describe(reason) };
      }
      const ref = newRef();
      ctx.logger?.error({ err: reason, ref, system }, 'workers of one system failed unexpectedly');
      causes.push(undefined);
      return {
        name: system,
        type: backend.type,
        ok: false as const,
        error: t.common.somethingWentWrong(ref),
      };
    });

    const withGroups: WorkersSystem[] = systems.map((s, i) =>
      groups[i]!.length > 0 ? { ...s, groups: groups[i]! } : s,
    );
    const data: WorkersData = {
      systems: withGroups.map((s) => {
        const base: WorkersSystemData = s.ok
          ? { name: s.name, type: s.type, ok: true, workers: s.workers.map(toWorkerData) }
          : { name: s.name, type: s.type, ok: false, error: s.error, workers: [] };
        if (s.groups) base.groups = s.groups.map((g) => groupData(s.name, g));
        return base;
      }),
    };
    const message = workersMessage(
      { generatedAt: ctx.now(), systems: withGroups, scope: args[0] ?? '' },
      request.locale,
    );
    const down = systems.filter((s) => !s.ok);
    if (systems.length > 0 && down.length === systems.length) {
      return {
        ok: false,
        message,
        data,
        visibility: answerVisibility(workersFacts),
        error: {
          code: ErrorCode.RedisUnavailable,
          params: { system: down.map((s) => s.name).join(', '), reason: causes.find(Boolean)?.params.reason },
        },
      };
    }
    return { ok: true, message, data, visibility: answerVisibility(workersFacts) };
  },
};

/** A group gets this long to answer `workers` (a Compose `ps` or three Kubernetes reads). */
const GROUP_TIMEOUT_MS = 8000;

/** The live state of every worker group of `system`, each failure one line of its own. */
async function readGroups(ctx: CommandContext, system: string, locale: Locale): Promise<GroupView[]> {
  const scalers = ctx.scalers;
  if (!scalers) return [];
  const t = messages(locale);
  return await Promise.all(
    scalers.groups(system).map(async (group): Promise<GroupView> => {
      const scaler = scalers.get(system, group);
      const type = scalers.spec(system, group)!.type;
      if (!scaler) return { ok: false, group, type, error: t.scale.noTargets(`${system}/${group}`) };
      try {
        return { ok: true, state: await withSystemTimeout(system, GROUP_TIMEOUT_MS, scaler.state()) };
      } catch (error) {
        if (isOpsError(error)) return { ok: false, group, type, error: t.errors.describe(error) };
        const ref = newRef();
        ctx.logger?.error({ err: error, ref, system, group }, 'worker group state failed unexpectedly');
        return { ok: false, group, type, error: t.common.somethingWentWrong(ref) };
      }
    }),
  );
}

function groupData(system: string, view: GroupView): GroupData {
  if (view.ok) return { ok: true, ...view.state };
  return { ok: false, system, group: view.group, type: view.type, error: view.error };
}
