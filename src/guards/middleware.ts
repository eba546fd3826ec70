import { auditTarget } from '../audit/target.js';
import { parseWords } from '../commands/parse.js';
import type { CommandDefinition, Reply, Request } from '../commands/types.js';
import { ErrorCode, OpsError } from '../errors.js';
import type { Locale } from '../i18n/index.js';
import type { AuditEntryInput } from '../store/store.js';
import { denialLines, denialReply } from './denial.js';
import { createGuard, type Guard, type GuardConfig, type GuardVerdict } from './guard.js';
import type { RateLimiter } from './rate-limit.js';
import type { RoleResolver } from './roles.js';
import type { SlackDirectory } from './slack-directory.js';

/** Where denials are recorded; `createAudit(...)` fits. Awaited before the user is answered. */
export interface DenialAudit {
  record(entry: Omit<AuditEntryInput, 'at'> & { at?: string }): Promise<unknown>;
}

export interface GuardMiddlewareDeps {
  roles: RoleResolver;
  directory: SlackDirectory;
  config: GuardConfig;
  audit?: DenialAudit;
  /** Mutating commands per user per minute; none when absent. */
  rateLimit?: RateLimiter;
}

/**
 * The rate limit, after every other check passed: only a command that would run counts, so a
 * refused one never uses up someone's allowance. Read-only commands are not limited.
 */
async function withinRate(
  deps: GuardMiddlewareDeps,
  request: Request,
  command: Pick<CommandDefinition, 'verb' | 'mutating'>,
  verdict: GuardVerdict,
): Promise<GuardVerdict> {
  if (!verdict.allow || !command.mutating || !deps.rateLimit) return verdict;
  const decision = await deps.rateLimit.take(request.actor.id);
  if (decision.allow) return verdict;
  return {
    allow: false,
    error: new OpsError(ErrorCode.RateLimited, {
      action: command.verb,
      limit: decision.limit,
      retryAfterSeconds: decision.retryAfterSeconds,
    }),
    role: verdict.role,
    unresolvedGroups: verdict.unresolvedGroups,
  };
}

/** The dispatcher's middleware shape, narrowed to what the guards read. */
export type GuardMiddleware = (
  request: Request,
  next: () => Promise<Reply>,
  info: { command: Pick<CommandDefinition, 'verb' | 'mutating'> },
) => Promise<Reply>;

/**
 * Runs the guards before every command the dispatcher runs (typed in Slack, clicked, or on the
 * command line). A denial is an ephemeral answer naming the role or channel needed, and an audit
 * entry (`action: 'denied'`, `outcome: 'denied'`) written before the answer is returned.
 */
export function createGuardMiddleware(deps: GuardMiddlewareDeps): GuardMiddleware {
  const guard = createGuard(deps);
  return async (request, next, { command }) => {
    const checked = await guard.check({
      actorId: request.actor.id,
      via: request.via,
      channel: request.channel,
      verb: command.verb,
      mutating: command.mutating,
      ...(request.surface ? { surface: request.surface } : {}),
      ...(request.actor.osUser !== undefined ? { osUser: request.actor.osUser } : {}),
    });
    const verdict = await withinRate(deps, request, command, checked);
    if (verdict.allow) return next();
    return deny(deps.audit, request, command.verb, verdict);
  };
}

export interface BoltGuardDeps extends GuardMiddlewareDeps {
  /**
   * Payload → `Request`, as the Slack transport builds it (`requestFromSlack`). Undefined means
   * "not ours" and the guard steps aside.
   */
  toRequest: (body: unknown, context: { locale?: Locale }) => Request | undefined;
  /** The command a verb names; an unknown verb is checked as read-only (the dispatcher answers it). */
  commandFor: (verb: string) => Pick<CommandDefinition, 'verb' | 'mutating'> | undefined;
}

/** The parts of Bolt's middleware arguments the guard uses. */
export interface BoltGuardArgs {
  body: unknown;
  context: { [key: string]: unknown; locale?: Locale };
  next: () => Promise<void>;
  ack?: () => Promise<void>;
  respond?: (message: {
    response_type: 'ephemeral';
    replace_original: false;
    text: string;
    blocks: Reply['message']['blocks'];
  }) => Promise<unknown>;
}

/** Key under Bolt's `context` where an allowed command's verdict is left for the listener. */
export const GUARD_CONTEXT_KEY = 'queueOpsGuard';

/**
 * The same checks as Bolt middleware (`app.use(createBoltGuard(...))`), for a Slack side that
 * wants to refuse before its listener runs. Use it or `createGuardMiddleware` in the dispatcher,
 * not both, or a denial is recorded twice.
 *
 * When allowed it leaves the verdict in `context.queueOpsGuard` and calls `next()`; the listener
 * still acks. When denied it acks (Slack's 3 s), records the denial, then answers ephemerally.
 */
export function createBoltGuard(deps: BoltGuardDeps): (args: BoltGuardArgs) => Promise<void> {
  const guard: Guard = createGuard(deps);
  return async ({ body, context, next, ack, respond }) => {
    const request = deps.toRequest(body, context);
    if (!request) return next();
    const { verb } = parseWords(request.words);
    const command = deps.commandFor(verb);
    const checked = await guard.check({
      actorId: request.actor.id,
      via: request.via,
      channel: request.channel,
      verb: command?.verb ?? verb,
      mutating: command?.mutating ?? false,
      ...(request.surface ? { surface: request.surface } : {}),
    });
    const verdict = command ? await withinRate(deps, request, command, checked) : checked;
    if (verdict.allow) {
      context[GUARD_CONTEXT_KEY] = verdict;
      return next();
    }
    await ack?.();
    const reply = await deny(deps.audit, request, command?.verb ?? verb, verdict);
    await respond?.({
      response_type: 'ephemeral',
      replace_original: false,
      text: reply.message.text,
      blocks: reply.message.blocks,
    });
  };
}

async function deny(
  audit: DenialAudit | undefined,
  request: Request,
  verb: string,
  verdict: Extract<GuardVerdict, { allow: false }>,
): Promise<Reply> {
  const lines = denialLines(verdict.error, verdict, request.actor.id, request.locale);
  if (audit) {
    const target = auditTarget(request.words);
    await audit.record({
      actorId: request.actor.id,
      ...(request.actor.name ? { actorName: request.actor.name } : {}),
      via: request.via,
      ...(request.channel ? { channel: request.channel } : {}),
      action: 'denied',
      ...(target ? { target } : {}),
      params: {
        command: verb,
        code: verdict.error.code,
        details: verdict.error.params,
        actorRole: verdict.role ?? null,
        ...(verdict.unresolvedGroups.length > 0 ? { unresolvedGroups: verdict.unresolvedGroups } : {}),
      },
      outcome: 'denied',
      error: lines.join(' '),
    });
  }
  return denialReply(verdict.error, lines);
}
