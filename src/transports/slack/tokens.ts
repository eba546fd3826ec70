import { webApi } from '@slack/bolt';
import { visibleText } from '../../errors.js';

/** The variable that holds the token Slack was asked about. */
export type TokenVariable = 'SLACK_BOT_TOKEN' | 'SLACK_APP_TOKEN';

/**
 * Slack refused a token at start (`invalid_auth`, `account_inactive`, `token_revoked`…), or did not
 * answer whether it takes it. `slackError` is Slack's error code, or undefined when Slack did not
 * answer (`reason` then says why, without a URL).
 */
export class SlackTokenError extends Error {
  constructor(
    readonly variable: TokenVariable,
    readonly slackError: string | undefined,
    readonly reason: string,
  ) {
    super(`${variable}: ${slackError ?? reason}`);
    this.name = 'SlackTokenError';
  }
}

/** Slack's error code of a refused call, or undefined when Slack did not answer it. */
function refusal(error: unknown): string | undefined {
  const e = error as { code?: unknown; data?: { error?: unknown } };
  if (e?.code !== webApi.ErrorCode.PlatformError) return undefined;
  // One line whatever a proxy put there.
  return visibleText(String(e.data?.error ?? 'unknown_error')).slice(0, 100);
}

/** Why a call got no answer, in words that never quote the URL. */
function noAnswer(error: unknown): string {
  const e = error as { code?: unknown; statusCode?: unknown; original?: { name?: unknown } };
  if (e?.code === webApi.ErrorCode.HTTPError) return `HTTP ${String(e.statusCode)}`;
  if (e?.original?.name === 'TimeoutError') return 'no answer within the timeout';
  if (e?.code === webApi.ErrorCode.RequestError) return 'Slack could not be reached';
  return 'unexpected answer';
}

/**
 * `auth.test` with the bot token, before anything listens: the bot's ids, or `SlackTokenError`.
 * Bolt would otherwise call it itself, unhandled, and a refused token ended the process with a
 * stack trace after "listening".
 */
export async function checkBotToken(client: webApi.WebClient): Promise<{ botId: string; botUserId: string }> {
  try {
    const answer = await client.auth.test();
    return { botId: String(answer.bot_id ?? ''), botUserId: String(answer.user_id ?? '') };
  } catch (error) {
    throw new SlackTokenError('SLACK_BOT_TOKEN', refusal(error), noAnswer(error));
  }
}

/**
 * Socket Mode: asks Slack for a connection with the app token before the socket client does. The
 * client retries some refusals (`token_revoked`) forever and throws others from `start()`; asked
 * here, every refusal is one line naming `SLACK_APP_TOKEN`. The URL it returns is not used.
 */
export async function checkAppToken(client: webApi.WebClient): Promise<void> {
  try {
    await client.apps.connections.open({});
  } catch (error) {
    throw new SlackTokenError('SLACK_APP_TOKEN', refusal(error), noAnswer(error));
  }
}
