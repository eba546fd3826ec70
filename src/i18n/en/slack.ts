/** What the Slack transport itself says: answers to buttons it cannot map, and start-up problems. */
export const slack = {
  /** A button whose action id (or value) queue-ops never issued: answered, nothing run. */
  unknownAction:
    'That button is not one queue-ops knows, so nothing was done. Type `/queue help` to see what works.',
  /** A start-up line naming the variables that are missing. */
  missingEnv: (names: readonly string[]) =>
    `queue-ops cannot start the Slack app: ${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} not set.`,
  /** Neither transport is configured: point at the offline demo. */
  noTransport:
    'Set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP) to connect to Slack; to try queue-ops without Slack, run `npm run demo`.',
  badApiUrl: (value: string) =>
    `queue-ops cannot start the Slack app: SLACK_API_URL (${value}) is not an http(s) URL.`,
  badPort: (value: string) => `queue-ops cannot start the Slack app: PORT (${value}) is not a port number.`,
  configInvalid: 'queue-ops did not start: the config file has problems.',
  started: (mode: 'socket' | 'http', port: number | undefined) =>
    mode === 'socket'
      ? 'queue-ops is connected to Slack (Socket Mode).'
      : `queue-ops is listening for Slack on port ${port} at /slack/events.`,
  startFailed: (reason: string) => `queue-ops could not start the Slack app: ${reason}`,
  /** Slack refused a token at start: the variable, Slack's own error, and where to get a new one. */
  tokenRefused: (variable: 'SLACK_BOT_TOKEN' | 'SLACK_APP_TOKEN', error: string) =>
    `queue-ops did not start: Slack refused ${variable} (${error}). ${
      variable === 'SLACK_BOT_TOKEN'
        ? 'Set it to the app’s current Bot User OAuth Token (OAuth & Permissions, xoxb-…).'
        : 'Set it to an app-level token with connections:write (Basic Information, xapp-…).'
    }`,
  /** Slack did not answer whether it takes a token (unreachable, 5xx, timeout) after the client's retries. */
  tokenUnchecked: (variable: 'SLACK_BOT_TOKEN' | 'SLACK_APP_TOKEN', reason: string) =>
    `queue-ops did not start: Slack did not answer whether it takes ${variable} (${reason}); check SLACK_API_URL, the network and Slack's status.`,
  /**
   * Slack did not answer a start-up check (unreachable, 5xx, timeout): the bot keeps trying, and
   * says where, so the one line a probe-restarted pod shows names the URL.
   */
  waitingForSlack: (method: string, url: string, reason: string, seconds: number) =>
    `queue-ops is waiting for Slack: ${method} at ${url} got no answer (${reason}); trying again in ${seconds} s. /healthz answers 200 meanwhile, /readyz 503.`,
  /** The start-up check went through after one or more failures. */
  slackAnswered: 'Slack answered; queue-ops is starting.',
  /** The bot's own store (approvals, audit) cannot be opened: the bot does not start without it. */
  storeFailed: (reason: string) => `queue-ops did not start: ${reason}`,
  /**
   * Told only to the requester when the bot could not post the request itself (it is not a member
   * of the channel), so the request went out through the command's reply instead.
   */
  inviteForUpdates:
    'The request is posted above, but queue-ops is not a member of this channel, so that message cannot be updated when the request expires or is approved with a typed command. Invite the bot (`/invite @queue-ops`) to get updates in place; `/queue pending` always shows the current state.',
};
