import { webApi } from '@slack/bolt';
import type { Logger } from '../../lib/logger.js';
import { boltLogger, slackClientOptions, type slackSettingsFromEnv } from './create-app.js';
import { failedMethod } from './health.js';

type Fetch = NonNullable<webApi.WebClientOptions['fetch']>;

/** What every Web API client the bot builds shares. */
export interface SlackClientBase {
  logger: Logger;
  /** Every call goes through it: `/readyz` says what Slack last answered (health.ts). */
  fetch: Fetch;
  /** Tests' options (`BotOptions.clientOptions`); a `retryConfig` there replaces the default policy. */
  overrides?: webApi.WebClientOptions;
}

/**
 * The options of one of the bot's clients: bounded (without a timeout, a Slack that takes the
 * connection and never answers holds an approval post or a Home tab for minutes), fetching
 * through the health recorder, every failed try logged.
 */
export function slackClientSettings(
  base: SlackClientBase,
  defaultRetries: webApi.RetryOptions,
): webApi.WebClientOptions {
  const { retryConfig, fetch: _replaced, ...overrides } = base.overrides ?? {};
  return {
    timeout: 10_000,
    ...overrides,
    fetch: base.fetch,
    retryConfig: loggedRetries(retryConfig ?? defaultRetries, base.logger),
  };
}

/**
 * A client for calls made outside a listener (the audit channel, in-place updates, the guards'
 * lookups, the token checks). Bounded retries, so a Slack outage costs minutes of retries rather
 * than WebClient's default half hour. Through Bolt's namespace: @slack/web-api is CommonJS and
 * Node's ESM loader cannot see `retryPolicies` as a named export.
 */
export function createWebApiClient(
  token: string,
  base: SlackClientBase,
  settings: ReturnType<typeof slackSettingsFromEnv>,
): webApi.WebClient {
  return new webApi.WebClient(token, {
    logger: boltLogger(base.logger),
    ...slackClientSettings(base, webApi.retryPolicies.fiveRetriesInFiveMinutes),
    ...slackClientOptions(settings),
  });
}

/**
 * WebClient retries a failed call (a 5xx, no answer within its timeout, a 429 after its
 * Retry-After) without a word; each failed try is logged, so an approval message that reached its
 * outcome late says why. Codes and statuses only: an error's text can quote the API URL.
 */
export function loggedRetries(policy: webApi.RetryOptions, logger: Logger): webApi.RetryOptions {
  const onFailedAttempt = (error: {
    attemptNumber?: number;
    retriesLeft?: number;
    code?: unknown;
    statusCode?: unknown;
    headers?: unknown;
    message?: unknown;
    original?: { message?: string; name?: string };
  }) => {
    // A 429 waited out by the client itself comes back as a request error around this text.
    const reason = /^A rate limit was exceeded/.test(error.original?.message ?? '')
      ? 'rate limited (429)'
      : error.original?.name === 'TimeoutError'
        ? 'no answer within the timeout'
        : typeof error.code === 'string'
          ? error.code
          : 'unknown';
    logger.warn(
      {
        method: failedMethod(error) ?? 'unknown',
        attempt: error.attemptNumber,
        retriesLeft: error.retriesLeft,
        reason,
        ...(typeof error.statusCode === 'number' ? { statusCode: error.statusCode } : {}),
      },
      error.retriesLeft
        ? 'Slack did not take a Web API call; trying again'
        : 'Slack did not take a Web API call',
    );
  };
  return { ...policy, onFailedAttempt } as webApi.RetryOptions;
}
