import { type CliUsers, cliIdentity } from '../approvals/identity.js';
import type { Audit } from '../audit/audit.js';
import { context } from '../blocks/kit.js';
import { SlackLimits } from '../blocks/limits.js';
import { ErrorCode, isOpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
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
          ...(reply?.ok && reply.audit ? { result: reply.audit } : {}),
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
      // A read answers all the same, and says in one line that it is not in the trail and why
      // nothing that changes anything can run meanwhile.
      if (reply && !command.mutating && isOpsError(error) && error.code === ErrorCode.StoreUnavailable) {
        return withUnauditedNote(reply, String(error.params.reason ?? error.code), request.locale);
      }
    }
    if (!reply) throw failure;
    return reply;
  };
}

/**
 * The reply with one line under it: it was not audited, the store cannot be written (`reason`),
 * and actions and approvals are unavailable until it can.
 */
export function withUnauditedNote(reply: Reply, reason: string, locale: Locale): Reply {
  const line = messages(locale).common.unaudited(reason);
  const blocks = reply.message.blocks;
  return {
    ...reply,
    ...(reply.terminal === undefined ? {} : { terminal: `${reply.terminal.replace(/\n+$/, '')}\n${line}\n` }),
    message: {
      text: `${reply.message.text}\n${line}`,
      blocks: blocks.length < SlackLimits.messageBlocks ? [...blocks, context(line)] : blocks,
    },
  };
}
