import { withSystemTimeout } from '../backends/timeout.js';
import { scalePreview } from '../blocks/scale.js';
import type { WorkerGroupConfig } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { suggest } from '../lib/suggest.js';
import { parseTarget, resolveSystem } from '../pipeline/parse.js';
import type { CommandContext, CommandDefinition } from '../pipeline/types.js';
import type { ScalerRegistry } from '../scalers/index.js';
import { planScale, type Scaler } from '../scalers/types.js';
import { scaleTimeline } from '../verbs/workers.js';
import type { VerbFacts } from '../verbs.js';
import { actorOf, requestReply, requireApprovals } from './actions.js';

export const scaleFacts = {
  verb: 'scale',
  order: 230,
  mutating: true,
  destructive: true,
  describe: (locale) => ({
    usage: messages(locale).scale.usage.scale,
    summary: messages(locale).scale.summary.scale,
  }),
  policy: 'scale',
  timelineOutcome: scaleTimeline,
  report: 'scale',
} satisfies VerbFacts;

/** A scaler's reads (Kubernetes API, `docker compose ps`, pidbox) get this long for a preview. */
export const SCALE_READ_TIMEOUT_MS = 15_000;

/** A group checked against config, with its bounds; nothing has been asked of anyone yet. */
export interface ScaleRequest {
  system: string;
  group: string;
  spec: WorkerGroupConfig;
  scaler: Scaler;
  replicas: number;
}

/** A configured worker group, found from `system/group`; nothing has been asked of anyone yet. */
export interface GroupRef {
  system: string;
  group: string;
  spec: WorkerGroupConfig;
  scaler: Scaler;
}

/**
 * `system/group` checked against config only: a system without groups, or a group it does not
 * have, is one line naming the groups it does have. `usage` is the verb's, for a missing group.
 */
export function checkGroup(
  ctx: { backends: CommandContext['backends']; scalers?: ScalerRegistry },
  targetText: string,
  usage: string,
): GroupRef {
  const t = messages().scale;
  const target = parseTarget(targetText);
  if (target.queue === undefined) throw new OpsError(ErrorCode.UsageError, { message: t.needsGroup, usage });
  const { system } = resolveSystem(ctx, target.system);
  const scalers = ctx.scalers;
  const groups = scalers?.groups(system) ?? [];
  if (!scalers || groups.length === 0)
    throw new OpsError(ErrorCode.BadArgument, { message: t.noGroups(system) });
  const group = target.queue;
  const spec = scalers.spec(system, group);
  const scaler = scalers.get(system, group);
  if (!spec || !scaler) {
    const hint = suggest(group, groups);
    throw new OpsError(ErrorCode.BadArgument, {
      message:
        t.unknownGroup(system, group) + (hint ? ` ${capitalize(messages().common.didYouMean(hint))}` : ''),
      valid: t.groupsValid(groups),
    });
  }
  return { system, group, spec, scaler };
}

/**
 * `system/group replicas` checked against config only: an unknown group, a count that is not a
 * whole number, or one outside the group's `min..max` is refused before any request is made.
 */
export function checkScale(
  ctx: { backends: CommandContext['backends']; scalers?: ScalerRegistry },
  targetText: string,
  replicasText: string,
): ScaleRequest {
  const t = messages().scale;
  const { system, group, spec, scaler } = checkGroup(ctx, targetText, t.usage.scale);
  if (!/^\d+$/.test(replicasText))
    throw new OpsError(ErrorCode.BadArgument, {
      message: t.notAnInteger(replicasText),
      valid: t.boundsValid(spec.min, spec.max),
    });
  const replicas = Number(replicasText);
  if (replicas < spec.min || replicas > spec.max)
    throw new OpsError(ErrorCode.BadArgument, {
      message: t.outOfBounds(replicas, `${system}/${group}`),
      valid: t.boundsValid(spec.min, spec.max),
    });
  return { system, group, spec, scaler, replicas };
}

/**
 * `scale <system>/<group> <replicas>`: checked against config, previewed from the live state
 * (before → after per target, and the autoscaler that will be patched instead when one owns the
 * count), then through policy `scale`, approval and the audit like every action.
 */
export const scaleCommand: CommandDefinition = {
  ...scaleFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).scale;
    if (args.length < 2)
      throw new OpsError(ErrorCode.UsageError, {
        message: args.length === 0 ? t.needsGroup : t.needsReplicas,
        usage: t.usage.scale,
      });
    if (args.length > 2)
      throw new OpsError(ErrorCode.UsageError, {
        message: messages(request.locale).commands.tooManyArguments(args[2]!),
        usage: t.usage.scale,
      });
    const checked = checkScale(ctx, args[0]!, args[1]!);
    const approvals = requireApprovals(ctx);
    const { system, group, scaler, replicas } = checked;
    const state = await withSystemTimeout(system, SCALE_READ_TIMEOUT_MS, scaler.state());
    const plan = planScale(state, replicas);
    const name = `${system}/${group}`;
    if (plan.targets.length === 0)
      throw new OpsError(ErrorCode.ScaleFailed, { target: name, reason: t.noTargets(name) });
    const unchanged = plan.autoscaler
      ? plan.autoscaler.before.min === replicas
      : plan.targets.every((c) => (c.autoscale ? c.autoscale.before.min : c.before) === replicas);
    if (unchanged) throw new OpsError(ErrorCode.AlreadyInState, { target: name, state: `at ${replicas}` });
    const created = await approvals.submit({
      actor: actorOf(request),
      action: 'scale',
      target: name,
      // The plan (what was there when it was asked) is kept with the request and in the audit.
      params: { system, group, replicas, planned: JSON.parse(JSON.stringify(plan)) },
      preview: scalePreview(plan, request.locale),
    });
    return requestReply(created, request, ctx);
  },
  action: {
    name: 'scale',
    async execute(request, _run, deps) {
      // Bounds are checked again against config: the stored request is data, not a promise.
      const { scaler, replicas } = checkScale(
        deps,
        `${request.params.system}/${request.params.group}`,
        String(request.params.replicas),
      );
      return { ...(await scaler.scale(replicas)) };
    },
  },
};

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
