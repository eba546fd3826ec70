import { askSystem } from '../backends/timeout.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { parseTarget, queueMissing, resolveTarget } from '../pipeline/parse.js';
import type { CommandDefinition } from '../pipeline/types.js';
import { pauseOutcome, pauseTimeline, resumeOutcome, resumeTimeline } from '../verbs/pause.js';
import type { VerbFacts } from '../verbs.js';
import { actorOf, backendOfRequest, requestReply, requireApprovals } from './actions.js';

export const pauseFacts = {
  verb: 'pause',
  order: 70,
  mutating: true,
  describe: (locale) => messages(locale).actions.pause,
  policy: 'pause',
  destructive: true,
  outcome: pauseOutcome,
  timelineOutcome: pauseTimeline,
} satisfies VerbFacts;

export const resumeFacts = {
  verb: 'resume',
  order: 80,
  mutating: true,
  describe: (locale) => messages(locale).actions.resume,
  policy: 'resume',
  outcome: resumeOutcome,
  timelineOutcome: resumeTimeline,
} satisfies VerbFacts;

function pauseLike(action: 'pause' | 'resume'): CommandDefinition {
  return {
    ...(action === 'pause' ? pauseFacts : resumeFacts),
    async run(ctx, args, request) {
      const t = messages(request.locale);
      const usage = t.actions[action].usage;
      if (args.length === 0)
        throw new OpsError(ErrorCode.UsageError, { message: t.actions.needsTarget, usage });
      // A word too many is named, not answered with "name the queue" when the queue was named.
      if (args.length > 1)
        throw new OpsError(ErrorCode.UsageError, { message: t.commands.tooManyArguments(args[1]!), usage });
      const target = parseTarget(args[0]!);
      if (target.queue === undefined)
        throw await queueMissing(ctx, target.system, t.actions.needsTarget, usage);
      const approvals = requireApprovals(ctx);
      const { system, backend, queue } = await askSystem(ctx, target.system, resolveTarget(ctx, target));
      if (!backend.pause || !backend.resume) {
        throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: action });
      }
      // The preview is computed now, from the live queue, so approvers see what will happen.
      const status = await askSystem(ctx, system, backend.status([queue!]));
      const counts = status.queues[0];
      const name = `${system}/${queue}`;
      if (counts && counts.isPaused === (action === 'pause')) {
        throw new OpsError(ErrorCode.AlreadyInState, {
          target: name,
          state: action === 'pause' ? 'paused' : 'running',
        });
      }
      const waiting = (counts?.waiting ?? 0) + (counts?.prioritized ?? 0);
      const consumers = status.workers.filter((w) => !w.queues || w.queues.includes(queue!)).length;
      const preview =
        action === 'pause'
          ? t.approvals.previewPause(name, waiting, consumers)
          : t.approvals.previewResume(name, waiting);
      const created = await approvals.submit({
        actor: actorOf(request),
        action,
        target: name,
        params: { system, queue },
        preview,
      });
      return requestReply(created, request, ctx);
    },
    action: {
      name: action,
      async execute(request, _run, deps) {
        const { system, backend } = backendOfRequest(deps, request);
        const run = backend[action];
        if (!run) throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: action });
        return { ...(await run.call(backend, String(request.params.queue))) };
      },
    },
  };
}

export const pauseCommand = pauseLike('pause');
export const resumeCommand = pauseLike('resume');
