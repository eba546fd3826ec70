import type { ExecutionContext } from '../approvals/service.js';
import type { BackendRegistry } from '../backends/registry.js';
import { withSystemTimeout } from '../backends/timeout.js';
import { restartPreview } from '../blocks/restart.js';
import type { WorkerGroupConfig } from '../config/schema.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { CommandDefinition } from '../pipeline/types.js';
import { awaitComeBack, liveWorkersOf } from '../scalers/come-back.js';
import type { ScalerRegistry } from '../scalers/index.js';
import type { RestartPlan, RestartReport, RestartTarget } from '../scalers/types.js';
import type { ActionRequest } from '../store/store.js';
import { restartTimeline } from '../verbs/workers.js';
import type { VerbFacts } from '../verbs.js';
import { actorOf, requestReply, requireApprovals } from './actions.js';
import { checkGroup, SCALE_READ_TIMEOUT_MS } from './scale.js';

export const restartFacts = {
  verb: 'restart',
  order: 240,
  mutating: true,
  destructive: true,
  describe: (locale) => ({
    usage: messages(locale).restart.usage,
    summary: messages(locale).restart.summary,
  }),
  policy: 'restart',
  timelineOutcome: restartTimeline,
  report: 'restart',
} satisfies VerbFacts;

/** A scaler's `ScaleFailed` (docker exited, the API refused) said as a failed restart. */
function asRestartFailure(error: unknown): unknown {
  if (isOpsError(error) && error.code === ErrorCode.ScaleFailed)
    return new OpsError(ErrorCode.RestartFailed, error.params);
  return error;
}

/**
 * The stored plan read back as data, not a promise: the targets of a Kubernetes or Compose group
 * are the ones config names now, a Celery pool's are the workers (and methods) that were approved,
 * and the check follows the group's config as it is now.
 */
export function approvedPlan(
  stored: unknown,
  ref: { system: string; group: string; spec: WorkerGroupConfig },
): RestartPlan {
  const { system, group, spec } = ref;
  const planned = (stored ?? {}) as Partial<RestartPlan>;
  const targets = Array.isArray(planned.targets) ? (planned.targets as Partial<RestartTarget>[]) : [];
  const count = (value: unknown) => (typeof value === 'number' ? value : null);
  const base = {
    system,
    group,
    type: spec.type,
    ...(spec.workerNames ? { workerNames: spec.workerNames } : {}),
    timeoutSeconds: spec.restartTimeoutSeconds,
  };
  switch (spec.type) {
    case 'kubernetes':
      return {
        ...base,
        targets: [
          {
            name: `${spec.namespace}/${spec.deployment}`,
            method: 'rollout',
            before: count(targets[0]?.before),
          },
        ],
      };
    case 'compose':
      return {
        ...base,
        targets: [{ name: spec.service, method: 'compose-restart', before: count(targets[0]?.before) }],
      };
    case 'celery-pool':
      return {
        ...base,
        targets: targets
          .filter(
            (x) => typeof x.name === 'string' && (x.method === 'pool_restart' || x.method === 'shutdown'),
          )
          .map((x) => ({
            name: String(x.name),
            method: x.method as 'pool_restart' | 'shutdown',
            ...(x.reason === 'poolRestartsOff' ? { reason: 'poolRestartsOff' as const } : {}),
          })),
      };
  }
}

/**
 * Runs an approved restart: reads who answers, restarts what the plan names, then waits for the
 * group's workers to answer again (see `awaitComeBack`) and says who is back and who is not. A
 * restart that leaves no worker is answered as such; the monitor's `no-workers` rule sees the
 * same empty worker list on its next sample.
 */
export async function executeRestart(
  request: ActionRequest,
  run: ExecutionContext,
  deps: { backends: BackendRegistry; scalers?: ScalerRegistry },
): Promise<Record<string, unknown>> {
  const ref = checkGroup(deps, `${request.params.system}/${request.params.group}`, messages().restart.usage);
  const plan = approvedPlan(request.params.planned, ref);
  const backend = deps.backends.get(ref.system);
  if (!backend)
    throw new OpsError(ErrorCode.UnknownSystem, { system: ref.system, valid: deps.backends.names() });
  const read = liveWorkersOf(backend);
  // Who answered just before: what "back" is measured against. A system that cannot be read now
  // is restarted all the same; its workers are then only found as new ones.
  const before = await read().catch(() => []);
  const startedAt = Date.now();
  let done: Awaited<ReturnType<typeof ref.scaler.restart>>;
  try {
    done = await ref.scaler.restart(plan);
  } catch (error) {
    throw asRestartFailure(error);
  }
  const refused = new Set(done.targets.filter((x) => x.poolRestartsOff).map((x) => x.name));
  const comeBack = await awaitComeBack({ plan, read, before, startedAt, refused, signal: run.signal });
  const report: RestartReport = {
    ...plan,
    targets: done.targets,
    ...(done.rollout ? { rollout: done.rollout } : {}),
    comeBack,
  };
  return JSON.parse(JSON.stringify(report));
}

/**
 * `restart <system>/<group>`: checked against config, previewed from the live state (the
 * deployment, the exact `docker compose` command, or each Celery worker and what it is sent),
 * then through policy `restart`, approval and the audit like every action.
 */
export const restartCommand: CommandDefinition = {
  ...restartFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale);
    if (args.length === 0)
      throw new OpsError(ErrorCode.UsageError, { message: t.scale.needsGroup, usage: t.restart.usage });
    if (args.length > 1)
      throw new OpsError(ErrorCode.UsageError, {
        message: t.commands.tooManyArguments(args[1]!),
        usage: t.restart.usage,
      });
    const ref = checkGroup(ctx, args[0]!, t.restart.usage);
    const approvals = requireApprovals(ctx);
    const name = `${ref.system}/${ref.group}`;
    let plan: RestartPlan;
    try {
      plan = await withSystemTimeout(ref.system, SCALE_READ_TIMEOUT_MS, ref.scaler.planRestart());
    } catch (error) {
      throw asRestartFailure(error);
    }
    if (plan.targets.length === 0)
      throw new OpsError(ErrorCode.RestartFailed, { target: name, reason: t.restart.noTargets(name) });
    const locale = ctx.config?.locale ?? request.locale;
    const created = await approvals.submit({
      actor: actorOf(request),
      action: 'restart',
      target: name,
      // The plan (what was there when it was asked) is kept with the request and in the audit.
      params: { system: ref.system, group: ref.group, planned: JSON.parse(JSON.stringify(plan)) },
      preview: restartPreview(plan, locale, ref.spec.type === 'compose' ? ref.spec : undefined),
    });
    return requestReply(created, request, ctx);
  },
  action: { name: 'restart', execute: executeRestart },
};
