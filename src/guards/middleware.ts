import { cliIdentity } from '../approvals/identity.js';
import type { AuditRecordInput } from '../audit/audit.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { auditTarget } from '../pipeline/audit-target.js';
import type { CommandDefinition, Reply, Request } from '../pipeline/types.js';
import { denialLines, denialReply } from './denial.js';
import { createGuard, type GuardConfig, type GuardVerdict } from './guard.js';
import type { VerbFactsOf } from './policy.js';
import { actionRan, type RateLimiter } from './rate-limit.js';
import type { RoleResolver } from './roles.js';
import type { SlackDirectory } from './slack-directory.js';

/** Where denials are recorded; `createAudit(...)` fits. Awaited before the user is answered. */
export interface DenialAudit {
  record(entry: AuditRecordInput): Promise<unknown>;
}

export interface GuardMiddlewareDeps {
  roles: RoleResolver;
  directory: SlackDirectory;
  config: GuardConfig;
  /** Each verb's facts (`factsOf` of src/verbs.ts), passed in by the composition root. */
  verbs: VerbFactsOf;
  audit?: DenialAudit;
  /** Mutating commands per user per minute; none when absent. */
  rateLimit?: RateLimiter;
}

type GuardedCommand = Pick<CommandDefinition, 'verb' | 'mutating' | 'rateLimited'>;

/**
 * The rate limit, after every other check passed: only a command that would run counts, so a
 * refused one never uses up someone's allowance. Read-only commands, `ack` and `snooze` are not
 * limited. An allowed command is counted now and `release` gives the use back if it then did not
 * run (a typo, a usage error, a refusal: see `settleRate`).
 */
async function withinRate(
  deps: GuardMiddlewareDeps,
  request: Request,
  command: GuardedCommand,
  verdict: GuardVerdict,
): Promise<{ verdict: GuardVerdict; release?: () => Promise<void> }> {
  if (!verdict.allow || !command.mutating || command.rateLimited === false || !deps.rateLimit)
    return { verdict };
  const decision = await deps.rateLimit.take(request.actor.id);
  if (decision.allow) return { verdict, release: decision.release };
  return {
    verdict: {
      allow: false,
      error: new OpsError(ErrorCode.RateLimited, {
        action: command.verb,
        limit: decision.limit,
        retryAfterSeconds: decision.retryAfterSeconds,
      }),
      role: verdict.role,
      unresolvedGroups: verdict.unresolvedGroups,
    },
  };
}

/** Gives a counted use back when the command's answer says its action did not run. */
async function settleRate(
  release: (() => Promise<void>) | undefined,
  reply: Pick<Reply, 'ok' | 'error'> | undefined,
): Promise<void> {
  if (!release || !reply || actionRan(reply)) return;
  // Housekeeping: the answer goes out whether or not the store took the use back.
  await release().catch(() => undefined);
}

/** The dispatcher's middleware shape, narrowed to what the guards read. */
export type GuardMiddleware = (
  request: Request,
  next: () => Promise<Reply>,
  info: { command: GuardedCommand },
) => Promise<Reply>;

/**
 * Runs the guards before every command the dispatcher runs (typed in Slack, clicked, or on the
 * command line): the one place they run, as the dispatcher's first middleware. A denial is an ephemeral answer naming the role or channel needed, and an audit
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
    const { verdict, release } = await withinRate(deps, request, command, checked);
    if (!verdict.allow) return deny(deps, request, command.verb, verdict);
    let reply: Reply;
    try {
      reply = await next();
    } catch (error) {
      // A command's typo or refusal is thrown as an OpsError; the dispatcher answers it.
      await settleRate(release, { ok: false, error: { code: isOpsError(error) ? error.code : 'Internal' } });
      throw error;
    }
    await settleRate(release, reply);
    return reply;
  };
}

/**
 * The audit entry of a refusal (`denied`): who asked, through what, the command, the error's code
 * and details, then `more`; from the command line also who typed it (OS account, host, and how the
 * id stands to `cli.users`), as its requests and approvals say. The guards' refusals and the
 * command line's refusal inside a user namespace are written alike.
 */
export function deniedEntry(
  config: Pick<GuardMiddlewareDeps['config'], 'cli'>,
  request: Pick<Request, 'actor' | 'via' | 'channel' | 'words'>,
  verb: string,
  error: OpsError,
  text: string,
  more: Record<string, unknown> = {},
): AuditRecordInput {
  const { osUser, host } = request.actor;
  const target = auditTarget(request.words);
  return {
    actorId: request.actor.id,
    ...(request.actor.name ? { actorName: request.actor.name } : {}),
    via: request.via,
    ...(request.channel ? { channel: request.channel } : {}),
    action: 'denied',
    ...(target ? { target } : {}),
    params: {
      command: verb,
      code: error.code,
      details: error.params,
      ...more,
      ...(request.via === 'cli' && osUser !== undefined
        ? {
            osUser,
            ...(host !== undefined ? { host } : {}),
            identity: cliIdentity(config.cli?.users ?? {}, osUser, request.actor.id),
          }
        : {}),
    },
    outcome: 'denied',
    error: text,
  };
}

async function deny(
  deps: Pick<GuardMiddlewareDeps, 'audit' | 'config'>,
  request: Request,
  verb: string,
  verdict: Extract<GuardVerdict, { allow: false }>,
): Promise<Reply> {
  const lines = denialLines(verdict.error, verdict, request.actor.id, request.locale);
  const { audit } = deps;
  if (audit) {
    await audit.record(
      deniedEntry(deps.config, request, verb, verdict.error, lines.join(' '), {
        actorRole: verdict.role ?? null,
        ...(verdict.unresolvedGroups.length > 0 ? { unresolvedGroups: verdict.unresolvedGroups } : {}),
      }),
    );
  }
  return denialReply(verdict.error, lines);
}
