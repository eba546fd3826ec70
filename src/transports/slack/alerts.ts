import { webApi } from '@slack/bolt';
import type { Message } from '../../blocks/message.js';
import { DeliveryError, type SlackSender } from '../../escalation/outbox-contract.js';
import type { Locale } from '../../i18n/index.js';
import type { Logger } from '../../lib/logger.js';
import { postMessage, updateMessage } from './listeners.js';
import { uploadFile } from './uploads.js';

/** The metadata event type an alert's first post carries, so a lost answer can be found again. */
const ALERT_EVENT = 'queue_ops_alert';

/** Slack's answers that will not change by trying again. */
const PERMANENT = new Set([
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'message_not_found',
  'cant_update_message',
  'edit_window_closed',
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'missing_scope',
  'invalid_blocks',
  'msg_too_long',
]);

/** A Web API failure as the outbox reads it: retry (when), or give up. */
export function toDeliveryError(error: unknown): DeliveryError {
  const e = error as { code?: string; retryAfter?: number; statusCode?: number; data?: { error?: string } };
  switch (e?.code) {
    case 'slack_webapi_rate_limited_error':
      return new DeliveryError('rate limited (429)', false, Math.max(1, Number(e.retryAfter ?? 1)) * 1000);
    case 'slack_webapi_http_error':
      return new DeliveryError(`HTTP ${e.statusCode ?? '?'}`, false);
    case 'slack_webapi_platform_error': {
      const reason = String(e.data?.error ?? 'unknown_error');
      return new DeliveryError(reason, PERMANENT.has(reason));
    }
    case 'slack_webapi_request_error':
      return new DeliveryError('Slack did not answer', false);
    default:
      return new DeliveryError(error instanceof Error ? error.message : String(error), false);
  }
}

/**
 * A Web API client for the outbox: no retries of its own (the outbox retries, in order, across
 * ticks and restarts), 429s returned at once with their Retry-After, a short timeout.
 */
export function createAlertWebClient(
  token: string,
  options: {
    apiUrl?: string;
    logger?: webApi.WebClientOptions['logger'];
    /** Each HTTP call's cut-off (default 10 s); tests shorten it rather than wait. */
    timeoutMs?: number;
    /** How calls go out (the bot's, which records what Slack answered for `/readyz`). */
    fetch?: webApi.WebClientOptions['fetch'];
  } = {},
): webApi.WebClient {
  return new webApi.WebClient(token, {
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: options.timeoutMs ?? 10_000,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.apiUrl
      ? { slackApiUrl: options.apiUrl.endsWith('/') ? options.apiUrl : `${options.apiUrl}/` }
      : {}),
  });
}

/** `SlackSender` over the Web API: `chat.postMessage` and `chat.update`, after the validator. */
export function createSlackSender(client: webApi.WebClient, logger: Logger, locale: Locale): SlackSender {
  return {
    async post(channel: string, message: Message, threadTs?: string, alertId?: string) {
      try {
        const sent = await postMessage(client, channel, message, {
          logger,
          locale,
          ...(threadTs ? { threadTs } : {}),
          ...(alertId ? { metadata: { event_type: ALERT_EVENT, event_payload: { alert_id: alertId } } } : {}),
        });
        if (!sent.ts) throw new DeliveryError('no ts in the answer', false);
        return { channel: sent.channel ?? channel, ts: sent.ts };
      } catch (error) {
        throw error instanceof DeliveryError ? error : toDeliveryError(error);
      }
    },
    async findAlertPost(channel: string, alertId: string, sinceIso: string) {
      try {
        // The bot's own recent posts only: one page from when the item was queued (minus a minute
        // for clock skew), with metadata (`channels:history` / `groups:history`).
        const oldest = ((Date.parse(sinceIso) - 60_000) / 1000).toFixed(6);
        const page = await client.conversations.history({
          channel,
          oldest,
          limit: 200,
          include_all_metadata: true,
        });
        const found = (page.messages ?? []).find(
          (m) =>
            m.metadata?.event_type === ALERT_EVENT &&
            (m.metadata.event_payload as { alert_id?: unknown } | undefined)?.alert_id === alertId,
        );
        return found?.ts;
      } catch (error) {
        throw toDeliveryError(error);
      }
    },
    async upload(channel: string, threadTs: string, file) {
      try {
        await uploadFile(client, channel, file, threadTs);
      } catch (error) {
        throw toDeliveryError(error);
      }
    },
    async update(channel: string, ts: string, message: Message) {
      try {
        await updateMessage(client, channel, ts, message, { logger, locale });
      } catch (error) {
        throw toDeliveryError(error);
      }
    },
  };
}
