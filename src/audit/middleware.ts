import type { Middleware } from '../commands/dispatcher.js';
import type { Logger } from '../lib/logger.js';
import type { Audit } from './audit.js';

/**
 * Records every command that ran (typed, clicked, or on the command line) as one audit entry,
 * written and awaited before the answer goes back. Denials never get here: the guards record
 * them. Actions also record their own request/approval/result entries.
 */
export function createCommandAuditMiddleware(deps: {
  audit: Pick<Audit, 'record'>;
  logger: Logger;
}): Middleware {
  return async (request, next, { command }) => {
    const reply = await next();
    const [, ...args] = request.words;
    try {
      await deps.audit.record({
        actorId: request.actor.id,
        actorName: request.actor.name,
        via: request.via,
        channel: request.channel,
        action: `command.${command.verb}`,
        target: args[0],
        params: {
          args,
          ...(request.action ? { button: request.action.actionId } : {}),
        },
        outcome: reply.ok ? 'ok' : 'error',
        error: reply.ok ? undefined : reply.error?.code,
      });
    } catch (error) {
      // The command already ran; hiding its answer would not undo it. Say so loudly instead.
      deps.logger.error(
        { err: error, verb: command.verb, actor: request.actor.id },
        'audit entry could not be written',
      );
    }
    return reply;
  };
}
