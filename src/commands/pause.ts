import { requestData, requestFailure, requestMessage } from '../approvals/blocks.js';
import type { Approvals } from '../approvals/service.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { ActionRequest } from '../store/store.js';
import { parseTarget, queueMissing, resolveTarget } from './parse.js';
import { askSystem } from './timeout.js';
import type { CommandContext, CommandDefinition, Reply, Request } from './types.js';

/**
 * Who asks or approves, as the approvals service compares them: on the command line the OS user
 * and host come along, so one shell playing two Slack users is refused (`approvals.cliSameOsUser`).
 * Every action command builds its actor here, so none can leave them out.
 */
export function actorOf(request: Request) {
  return {
    id: request.actor.id,
    name: request.actor.name,
    via: request.via,
    channel: request.channel,
    osUser: request.actor.osUser,
    host: request.actor.host,
    ...(request.surface ? { surface: request.surface } : {}),
  };
}

export function requireApprovals(ctx: CommandContext): Approvals {
  if (!ctx.approvals)
    throw new OpsError(ErrorCode.NotSupported, {
      system: 'queue-ops',
      type: 'read-only',
      what: messages(ctx.config?.locale ?? 'en').actions.needsStore,
    });
  return ctx.approvals;
}

/**
 * A request as the user sees it: pending ones are posted for everyone, outcomes too. In the
 * config's locale, not the asker's: the channel sees it, its preview is stored in that locale, and
 * later updates of the same message (approved, expired) are written in it too.
 */
export function requestReply(request: ActionRequest, request_: Request, ctx: CommandContext): Reply {
  const failed = request.status === 'failed' || request.status === 'interrupted';
  return {
    ok: !failed,
    message: requestMessage(request, ctx.config?.locale ?? request_.locale, ctx.now()),
    data: { request: requestData(request) },
    visibility: 'in_channel',
    replaceOriginal: request_.action !== undefined,
    ...(failed ? { error: requestFailure(request) } : {}),
  };
}

function pauseLike(action: 'pause' | 'resume'): CommandDefinition {
  return {
    verb: action,
    mutating: true,
    describe: (locale) => messages(locale).actions[action],
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
  };
}

export const pauseCommand = pauseLike('pause');
export const resumeCommand = pauseLike('resume');
