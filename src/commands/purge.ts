import { newRequestId } from '../approvals/service.js';
import { filterWords, type PurgeSelection } from '../backends/job-filter.js';
import type { PurgeState } from '../backends/queue-backend.js';
import { askSystem } from '../backends/timeout.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { parseTarget, queueMissing, resolveTarget } from '../pipeline/parse.js';
import type { CommandContext, CommandDefinition } from '../pipeline/types.js';
import type { Purges } from '../purge/service.js';
import { purgeOutcome, purgeTimeline, undoOutcome, undoTimeline } from '../verbs/purge.js';
import type { VerbFacts } from '../verbs.js';
import { actorOf, requestReply, requireApprovals } from './actions.js';
import { parseFilterFlags } from './filters.js';

export const purgeFacts = {
  verb: 'purge',
  order: 100,
  mutating: true,
  describe: (locale) => messages(locale).purge.purge,
  policy: 'purge',
  destructive: true,
  progress: (locale) => messages(locale).purge.purgingVerb,
  outcome: purgeOutcome,
  timelineOutcome: purgeTimeline,
} satisfies VerbFacts;

export const undoFacts = {
  verb: 'undo',
  order: 110,
  mutating: true,
  describe: (locale) => messages(locale).purge.undo,
  policy: 'undo',
  destructive: true,
  progress: (locale) => messages(locale).purge.restoringVerb,
  outcome: undoOutcome,
  timelineOutcome: undoTimeline,
} satisfies VerbFacts;

const STATES: Record<string, PurgeState[]> = {
  waiting: ['waiting'],
  failed: ['failed'],
  delayed: ['delayed'],
  all: ['waiting', 'failed', 'delayed'],
};

function requirePurges(ctx: Pick<CommandContext, 'purges' | 'config'>): Purges {
  if (!ctx.purges)
    throw new OpsError(ErrorCode.NotSupported, {
      system: 'queue-ops',
      type: 'read-only',
      what: messages(ctx.config?.locale ?? 'en').actions.needsStore,
    });
  return ctx.purges;
}

/** `purge <system>/<queue> [waiting|failed|delayed|all]`: archived first, then deleted; undoable. */
export const purgeCommand: CommandDefinition = {
  ...purgeFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale);
    const usage = t.purge.purge.usage;
    // Flags first (they need no Redis); the words left are `<target> [state]`.
    const flags = parseFilterFlags(args.slice(1), request.locale, { keep: true });
    const words = args.length > 0 ? [args[0]!, ...flags.words] : [];
    if (words.length < 1 || words.length > 2)
      throw new OpsError(ErrorCode.UsageError, {
        message: words.length ? t.actions.tooMany : t.actions.needsTarget,
        usage,
      });
    const target = parseTarget(words[0]!);
    if (target.queue === undefined)
      throw await queueMissing(ctx, target.system, t.actions.needsTarget, usage);
    const stateWord = (words[1] ?? 'waiting').toLowerCase();
    const asked = STATES[stateWord];
    if (!asked)
      throw new OpsError(ErrorCode.BadArgument, {
        message: t.purge.badState(words[1]!),
        valid: t.purge.states,
      });
    if (flags.filter?.error !== undefined && stateWord !== 'failed')
      throw new OpsError(ErrorCode.BadArgument, {
        message: t.filters.errorOnlyFailed,
        valid: t.filters.errorOnlyFailedValid,
      });
    if (flags.keep !== undefined && stateWord !== 'failed')
      throw new OpsError(ErrorCode.BadArgument, {
        message: t.filters.keepOnlyFailed,
        valid: t.filters.keepOnlyFailedValid,
      });
    const selection: PurgeSelection | undefined =
      flags.filter || flags.keep !== undefined
        ? {
            ...(flags.filter ? { filter: flags.filter } : {}),
            ...(flags.keep !== undefined ? { keep: flags.keep } : {}),
          }
        : undefined;
    const selectionWords = selection ? filterWords(selection.filter, selection.keep) : '';
    const approvals = requireApprovals(ctx);
    const purges = requirePurges(ctx);
    const { system, queue } = await askSystem(ctx, target.system, resolveTarget(ctx, target));
    const name = `${system}/${queue}`;
    const id = newRequestId();
    const preview = await askSystem(ctx, system, purges.preview(system, queue!, asked, id, selection));
    const unsupported = Object.entries(preview.unsupported ?? {});
    // `delayed` alone on Celery: say why there is nothing, rather than ask for an empty purge.
    if (unsupported.length > 0 && unsupported.length === asked.length)
      throw new OpsError(ErrorCode.NotSupported, {
        system,
        type: ctx.backends.get(system)?.type ?? '?',
        what: `purge ${stateWord}: ${unsupported.map(([, why]) => t.purge.why(why ?? '')).join('; ')}`,
      });
    const states = asked.filter((s) => !preview.unsupported?.[s]);
    if (preview.total === 0) {
      const outOf = preview.outOf ?? 0;
      // Nothing to take is not an empty queue: `--keep 1000` of 12 keeps them all; a filter may
      // match none of what is there.
      if (selection && outOf > 0)
        throw new OpsError(ErrorCode.AlreadyInState, {
          target: name,
          state: stateWord,
          outOf,
          selection: selectionWords,
          ...(selection.keep !== undefined && !selection.filter ? { keep: selection.keep } : {}),
        });
      throw new OpsError(ErrorCode.AlreadyInState, {
        target: name,
        state: `empty (${[stateWord, selectionWords].filter(Boolean).join(' ')})`,
      });
    }
    const byState = Object.entries(preview.byState)
      .filter(([, count]) => (count ?? 0) > 0)
      .map(([state, count]) => t.purge.byState(state, count ?? 0))
      .concat(unsupported.map(([state, why]) => t.purge.unsupported(state, t.purge.why(why ?? ''))))
      .join(', ');
    const created = await approvals.submit({
      id,
      actor: actorOf(request),
      action: 'purge',
      target: name,
      // The selection is data, applied again when the purge runs (and when a recovery resumes it);
      // `caps` is what the preview counted of each state: the most it takes of each, oldest first.
      params: {
        system,
        queue,
        states,
        ...selection,
        caps: Object.fromEntries(states.map((state) => [state, preview.byState[state] ?? 0])),
      },
      preview:
        t.purge.preview(
          name,
          stateWord,
          preview.total,
          byState,
          preview.sample,
          preview.archivePath,
          preview.estimatedBytes,
          id,
        ) +
        (selection
          ? t.filters.purgeMatched(selectionWords, preview.total, preview.outOf ?? preview.total)
          : '') +
        t.purge.previewExactly(preview.total),
    });
    return requestReply(created, request, ctx);
  },
  action: {
    name: 'purge',
    execute: async (request, run, deps) => ({ ...(await requirePurges(deps).execute(request, run)) }),
  },
};

/** `undo <purge-request-id>`: restores a purge from its archive, under `policies.undo`. */
export const undoCommand: CommandDefinition = {
  ...undoFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale);
    if (args.length !== 1)
      throw new OpsError(ErrorCode.UsageError, {
        message: args.length ? t.actions.tooMany : t.actions.needsId,
        usage: t.purge.undo.usage,
      });
    const approvals = requireApprovals(ctx);
    const purge = await requirePurges(ctx).undoable(args[0]!);
    const target = `${purge.system}/${purge.queue}`;
    const created = await approvals.submit({
      actor: actorOf(request),
      action: 'undo',
      target,
      params: { purgeId: purge.id, system: purge.system, queue: purge.queue },
      preview: t.purge.undoPreview(purge.id, target, purge.purged, purge.archivePath),
    });
    return requestReply(created, request, ctx);
  },
  action: {
    name: 'undo',
    execute: async (request, run, deps) => ({ ...(await requirePurges(deps).undo(request, run)) }),
  },
};
