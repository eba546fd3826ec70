import { errorMessage } from '../blocks/error.js';
import { ErrorCode, type OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import type { Reply } from '../pipeline/types.js';
import type { GuardVerdict } from './guard.js';
import { isSlackUserId } from './roles.js';

/**
 * The lines of a denial: the error's own line, then why and what to do. Plain text; the caller
 * escapes it for mrkdwn.
 */
export function denialLines(
  error: OpsError,
  verdict: Pick<GuardVerdict, 'unresolvedGroups'>,
  actorId: string,
  locale: Locale,
): string[] {
  const m = messages(locale);
  const lines = [m.errors.describe(error)];
  switch (error.code) {
    case ErrorCode.WrongChannel:
      if (!Array.isArray(error.params.channels) || error.params.channels.length === 0) {
        lines.push(m.guards.noAllowedChannels);
      }
      break;
    case ErrorCode.Forbidden:
      if (verdict.unresolvedGroups.length > 0) {
        lines.push(m.guards.groupsUnresolved(verdict.unresolvedGroups.map((g) => `\`${g}\``).join(', ')));
      }
      if (!isSlackUserId(actorId)) lines.push(m.guards.cliActor(actorId));
      break;
    case ErrorCode.TwoFactorRequired:
      lines.push(error.params.status === 'off' ? m.guards.twoFactorOff : m.guards.twoFactorUnknown);
      break;
  }
  return lines;
}

/** The ephemeral answer to a denied command, in the same shape as every other error answer. */
export function denialReply(error: OpsError, lines: string[]): Reply {
  return {
    ok: false,
    message: errorMessage(lines.join('\n')),
    visibility: 'ephemeral',
    error: { code: error.code, params: error.params },
  };
}
