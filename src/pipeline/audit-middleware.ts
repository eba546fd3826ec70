import { type CliUsers, cliIdentity } from '../approvals/identity.js';
import type { Audit } from '../audit/audit.js';
import { isOpsError } from '../errors.js';
import type { Logger } from '../lib/logger.js';
import { auditArgs, auditTarget } from './audit-target.js';
import type { Middleware } from './dispatcher.js';
import type { Reply } from './types.js';

/**
 * Records every command that ran (typed, clicked, or on the command line) as one audit entry,
 * written and awaited before the answer goes back, also when the command failed (an unknown queue,
 * a `deny` of a finished request). Denials never get here: the guards record them. Actions also
 * record their own request/approval/result entries.
 */
export function createCommandAuditMiddleware(deps: {
  audit: Pick<Audit, 'record'>;
  logger: Logger;
  /** `cli.users`: a command-line entry says whether its id was `bound` there or only `claimed`. */
  cliUsers?: CliUsers;
}): Middleware {
  return async (request, next, { command }) => {
    let reply: Reply | undefined;
    let failure: unknown;
    try {
      reply = await next();
    } catch (error) {
      failure = error;
    }
    const errorCode = reply
      ? reply.ok
        ? undefined
        : reply.error?.code
      : isOpsError(failure)
        ? failure.code
        : 'Internal';
    const args = auditArgs(request.words);
    const target = auditTarget(request.words);
    try {
      await deps.audit.record({
        actorId: request.actor.id,
        actorName: request.actor.name,
        via: request.via,
        channel: request.channel,
        action: `command.${command.verb}`,
        ...(target === undefined ? {} : { target }),
        params: {
          args,
          ...(request.action ? { button: request.action.actionId } : {}),
          ...(request.actor.osUser
            ? {
                osUser: request.actor.osUser,
                ...(request.actor.host !== undefined ? { host: request.actor.host } : {}),
                identity: cliIdentity(deps.cliUsers ?? {}, request.actor.osUser, request.actor.id),
              }
            : {}),
        },
        outcome: errorCode === undefined ? 'ok' : 'error',
        error: errorCode,
      });
    } catch (error) {
      // The command already ran; hiding its answer would not undo it. Say so loudly instead.
      deps.logger.error(
        { err: error, verb: command.verb, actor: request.actor.id },
        'audit entry could not be written',
      );
    }
    if (!reply) throw failure;
    return reply;
  };
}
