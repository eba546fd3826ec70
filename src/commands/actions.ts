import { requestData, requestFailure, requestMessage } from '../approvals/blocks.js';
import type { Approvals } from '../approvals/service.js';
import type { QueueBackend } from '../backends/queue-backend.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { ActionDeps, CommandContext, Reply, Request } from '../pipeline/types.js';
import type { ActionRequest } from '../store/store.js';

// What every action command shares: who asks, where its requests go, how its request is answered,
// and how its approved request finds the backend it acts on.

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

/**
 * The backend a stored request names. The system may have been removed from the config since the
 * request was made: that is an answer naming the systems there are, not a crash.
 */
export function backendOfRequest(
  deps: Pick<ActionDeps, 'backends'>,
  request: ActionRequest,
): { system: string; backend: QueueBackend } {
  const system = String(request.params.system);
  const backend = deps.backends.get(system);
  if (!backend) throw new OpsError(ErrorCode.UnknownSystem, { system, valid: deps.backends.names() });
  return { system, backend };
}
