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
};
