import { errorMessage } from '../blocks/error.js';
import { assertValidMessage } from '../blocks/validate.js';
import { isOpsError, type OpsError } from '../errors.js';
import { inLocale, messages } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import { assertWordLengths, parseWords } from './parse.js';
import { newRef } from './ref.js';
import type { CommandContext, CommandDefinition, CommandRegistry, Reply, Request } from './types.js';

/**
 * Runs around a command, bolt-style: call `next()` to go on (and may inspect or decorate its
 * reply), or return a Reply of its own (a denial) without calling it. Throwing an `OpsError`
 * is also fine: it becomes the usual one-line error answer.
 */
export type Middleware = (
  request: Request,
  next: () => Promise<Reply>,
  info: { command: CommandDefinition },
) => Promise<Reply>;

export interface DispatcherDeps {
  ctx: CommandContext;
  commands: CommandRegistry;
  logger: Logger;
  /** Run in order, outermost first, before every command. */
  middleware?: Middleware[];
}

/** The one way a Request becomes a Reply, for every transport. */
export interface Dispatcher {
  /** Never rejects: every failure is an answer (a coded error, or "something went wrong, ref …"). */
  handle(request: Request): Promise<Reply>;
  /** Appends a middleware (after those given at creation). */
  use(mw: Middleware): void;
}

export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const chain: Middleware[] = [...(deps.middleware ?? [])];

  // Everything the request runs words its answers in the request's locale (see `inLocale`).
  function handle(request: Request): Promise<Reply> {
    return inLocale(request.locale, () => handleInLocale(request));
  }

  async function handleInLocale(request: Request): Promise<Reply> {
    const ref = newRef();
    const started = Date.now();
    const { verb, args } = parseWords(request.words);
    const log = deps.logger.child({ ref, via: request.via, actor: request.actor.id, verb });
    let reply: Reply;
    try {
      // Before the verb is looked up: an unknown verb is ranked against every verb.
      assertWordLengths(request.words);
      const command = deps.commands.resolve(verb);
      // A button's words run as typed: without the button, so its answer is a message of its own.
      const { action: _button, ...typed } = request;
      const ctx: CommandContext = {
        ...deps.ctx,
        logger: log,
        redispatch: (words) => handleInLocale({ ...typed, words }),
      };
      const run = (index: number): Promise<Reply> => {
        const mw = chain[index];
        if (!mw) return command.run(ctx, args, request);
        let called = false;
        return mw(
          request,
          () => {
            // A middleware that calls next() twice would run the command twice: refuse.
            if (called) return Promise.reject(new Error('next() called twice'));
            called = true;
            return run(index + 1);
          },
          { command },
        );
      };
      reply = await run(0);
      assertValidMessage(reply.message);
    } catch (error) {
      reply = isOpsError(error)
        ? opsErrorReply(error, request)
        : internalErrorReply(error, request, ref, log);
    }
    log.info(
      { ok: reply.ok, code: reply.error?.code, ms: Date.now() - started, channel: request.channel },
      'command answered',
    );
    return reply;
  }

  return {
    handle,
    use(mw) {
      chain.push(mw);
    },
  };
}

/** An expected failure: one line naming what is valid, seen only by the person who asked. */
export function opsErrorReply(error: OpsError, request: Pick<Request, 'locale'>): Reply {
  const line = messages(request.locale).errors.describe(error);
  return {
    ok: false,
    message: errorMessage(line),
    visibility: 'ephemeral',
    error: { code: error.code, params: error.params },
  };
}

function internalErrorReply(error: unknown, request: Request, ref: string, log: Logger): Reply {
  log.error({ err: error, words: request.words }, 'command failed unexpectedly');
  return {
    ok: false,
    message: errorMessage(messages(request.locale).common.somethingWentWrong(ref)),
    visibility: 'ephemeral',
    error: { code: 'Internal', ref },
  };
}
