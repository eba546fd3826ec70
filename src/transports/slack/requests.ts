import type { RespondArguments, RespondFn, webApi } from '@slack/bolt';
import { progressLine, requestMessage } from '../../approvals/blocks.js';
import type { Approvals, ProgressListener, RequestListener } from '../../approvals/service.js';
import { type Locale, messages } from '../../i18n/index.js';
import type { Logger } from '../../lib/logger.js';
import type { Reply } from '../../pipeline/types.js';
import type { ActionRequest } from '../../store/store.js';
import { postMessage, type ReplyDelivery, updateMessage } from './listeners.js';

type WebClient = webApi.WebClient;

export interface RequestDeliveryDeps {
  approvals: Pick<Approvals, 'get' | 'attachMessage'>;
  logger: Logger;
  locale?: Locale;
  /**
   * Posts the request: a client that never sends a post again by itself (the alerts' client). A
   * post whose answer was lost is looked for by its metadata first, and sent again only when it
   * is not there. Without it, the listener's client.
   */
  poster?: WebClient;
}

/** The message metadata a posted request carries, so a post whose answer was lost can be found. */
export const REQUEST_EVENT = 'queue_ops_request';

/** Posts of one request tried at most, when each answer is lost and no earlier post is found. */
const POST_ATTEMPTS = 3;

/** The `data.request` a reply carries when a command created or changed an approval request. */
function requestIdOf(reply: Reply): { id: string; status: string } | undefined {
  const data = reply.data as { request?: { id?: unknown; status?: unknown } } | undefined;
  const request = data?.request;
  if (!request || typeof request.id !== 'string' || typeof request.status !== 'string') return undefined;
  return { id: request.id, status: request.status };
}

/**
 * The listener hook that posts a new approval request with `chat.postMessage` instead of the
 * slash command's `respond()`: only a posted message has a `ts`, and only with a `ts` can expiry,
 * approval and the outcome update it in place. When the bot may not post there (typically
 * `not_in_channel`), the request goes out through `respond()` in the channel after all, and the
 * requester alone is told why it will not update itself.
 *
 * Everything else (answers to buttons, a typed `approve` of a request that is already posted,
 * errors) is left to the listener.
 */
export function createRequestDelivery(deps: RequestDeliveryDeps): ReplyDelivery {
  const locale = deps.locale ?? 'en';
  const log = deps.logger.child({ component: 'slack-requests' });
  const deliver: ReplyDelivery = async (reply, request, client, respond) => {
    const created = requestIdOf(reply);
    if (!reply.ok || !created || created.status !== 'pending') return false;
    if (request.action !== undefined || !request.channel) return false;
    const stored = await deps.approvals.get(created.id);
    // Already posted (a typed `approve` of a request needing several approvals): the listener
    // answers, and the posted message is updated through the approvals' change listener.
    if (!stored || stored.messageTs || stored.channel !== request.channel) return false;

    let ts: string | undefined;
    try {
      ts = await postOnce(deps.poster ?? client, request.channel, stored, reply.message);
    } catch (error) {
      log.warn(
        { err: error, requestId: stored.id, slackError: slackErrorCode(error) },
        'could not post the approval request; answered through respond() instead',
      );
      await respondSafely(
        respond,
        { response_type: 'in_channel', text: reply.message.text, blocks: reply.message.blocks },
        log,
      );
      await respondSafely(
        respond,
        {
          response_type: 'ephemeral',
          replace_original: false,
          text: messages(locale).slack.inviteForUpdates,
        },
        log,
      );
      return true;
    }
    if (ts) {
      try {
        await deps.approvals.attachMessage(stored.id, ts);
      } catch (error) {
        // The request is posted and stored; only in-place updates are lost.
        log.warn({ err: error, requestId: stored.id }, 'could not remember the request message');
      }
    }
    return true;
  };

  /**
   * Posts `request`'s message with its id in the metadata. When Slack's answer is lost (a reset,
   * a timeout) Slack may have taken it: the channel is looked at for it before it is posted again,
   * so it is never there twice with live buttons. A refusal (`not_in_channel`) posted nothing.
   */
  async function postOnce(
    poster: WebClient,
    channel: string,
    request: ActionRequest,
    message: Reply['message'],
  ): Promise<string | undefined> {
    const metadata = { event_type: REQUEST_EVENT, event_payload: { request_id: request.id } };
    for (let attempt = 1; ; attempt++) {
      try {
        return (await postMessage(poster, channel, message, { logger: log, locale, metadata })).ts;
      } catch (error) {
        if (slackErrorCode(error) !== undefined || attempt >= POST_ATTEMPTS) throw error;
        log.warn(
          { err: error, requestId: request.id },
          'request post unanswered; looking for it before posting again',
        );
        // Not known either way: the fallback below answers through respond(), as before.
        const found = await findRequestPost(poster, channel, request);
        if (found) return found;
      }
    }
  }

  return deliver;
}

/**
 * The ts of the bot's earlier post of `request` in `channel`, found by its metadata: one page of
 * the channel from a minute before the request was made (`channels:history` / `groups:history`).
 */
async function findRequestPost(
  client: WebClient,
  channel: string,
  request: ActionRequest,
): Promise<string | undefined> {
  const oldest = ((Date.parse(request.createdAt) - 60_000) / 1000).toFixed(6);
  const page = await client.conversations.history({
    channel,
    oldest,
    limit: 200,
    include_all_metadata: true,
  });
  const found = (page.messages ?? []).find(
    (m) =>
      m.metadata?.event_type === REQUEST_EVENT &&
      (m.metadata.event_payload as { request_id?: unknown } | undefined)?.request_id === request.id,
  );
  return found?.ts;
}

async function respondSafely(respond: RespondFn | undefined, args: RespondArguments, log: Logger) {
  if (!respond) return;
  try {
    await respond(args);
  } catch (error) {
    log.warn({ err: error }, 'respond() failed; answer not delivered');
  }
}

/** Slack's error code (`not_in_channel`, `channel_not_found`, …) from a Web API error. */
function slackErrorCode(error: unknown): string | undefined {
  const data = (error as { data?: { error?: unknown } } | undefined)?.data;
  return typeof data?.error === 'string' ? data.error : undefined;
}

export interface RequestMessageUpdaterDeps {
  client: WebClient;
  logger: Logger;
  locale?: Locale;
  now?: () => Date;
  /** Least time between two progress updates of one message (default 2 s: Slack's rate limits). */
  progressEveryMs?: number;
}

/** Keeps each posted request message in step with the request (for `approvals.onChange`). */
export interface RequestMessageUpdater {
  /**
   * Queues a `chat.update` of the request's message and returns at once: a slow Slack must not
   * hold up an approval or the expiry sweep. Updates of one request run in order, and a state
   * that is already out of date when its turn comes is skipped. Never throws.
   */
  listener: RequestListener;
  /**
   * For `approvals.onProgress`: "Purging… 340,000 of 1,000,000, 34 %, ~12 s left" in the
   * message, at most once per `progressEveryMs`; the outcome replaces it when the request ends.
   */
  progress: ProgressListener;
  /**
   * Sends again the messages whose last update Slack never took (an outage longer than the
   * client's retries): the bot's sweep calls it every 30 s, so a request message left showing
   * its buttons after an outage catches up with its outcome once Slack answers again.
   */
  resendFailed(): void;
  /** Resolves when every update queued so far has been tried (shutdown, tests). */
  idle(): Promise<void>;
}

/**
 * Slack's answers that will not change by asking again (the message or channel is gone, the bot
 * was removed): such an update is dropped, not resent.
 */
const FINAL_SLACK_ERRORS = new Set([
  'message_not_found',
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'cant_update_message',
  'edit_window_closed',
  'invalid_auth',
  'account_inactive',
  'token_revoked',
  'missing_scope',
  'invalid_blocks',
  'msg_too_long',
]);

/** Messages kept for a later try at most; the oldest go first (a day-long outage). */
const MAX_FAILED = 500;

export function createRequestMessageUpdater(deps: RequestMessageUpdaterDeps): RequestMessageUpdater {
  const locale = deps.locale ?? 'en';
  const now = deps.now ?? (() => new Date());
  const log = deps.logger.child({ component: 'slack-requests' });
  const latest = new Map<string, ActionRequest>();
  const chains = new Map<string, Promise<void>>();
  const progressEveryMs = deps.progressEveryMs ?? 2000;
  /** Per executing request: when progress was first seen (for the rate), and last sent. */
  const progressState = new Map<string, { since: { at: number; done: number }; sentAt: number }>();
  const progressLines = new WeakMap<ActionRequest, string>();
  /** Requests whose latest state never reached their message, by id (insertion order: oldest first). */
  const failed = new Map<string, ActionRequest>();

  const update = async (request: ActionRequest, channel: string, ts: string) => {
    // A newer state of the same request is queued behind this one: it alone is worth sending.
    if (latest.get(request.id) !== request) return;
    try {
      const message = requestMessage(request, locale, now(), progressLines.get(request));
      await updateMessage(deps.client, channel, ts, message, {
        logger: log,
        locale,
      });
      failed.delete(request.id);
    } catch (error) {
      const slackError = slackErrorCode(error);
      const again = !slackError || !FINAL_SLACK_ERRORS.has(slackError);
      log.warn(
        // `sentAgain`: kept for the next sweep (Slack was away), or dropped (its answer is final).
        { err: error, requestId: request.id, status: request.status, slackError, sentAgain: again },
        'could not update the request message',
      );
      failed.delete(request.id);
      if (!again) return;
      failed.set(request.id, request);
      if (failed.size > MAX_FAILED) failed.delete(failed.keys().next().value!);
    }
  };

  const enqueue = (request: ActionRequest) => {
    const { messageTs, channel } = request;
    if (!messageTs || !channel) return;
    latest.set(request.id, request);
    const previous = chains.get(request.id) ?? Promise.resolve();
    const next = previous.then(() => update(request, channel, messageTs));
    chains.set(request.id, next);
    void next.then(() => {
      if (chains.get(request.id) !== next) return;
      chains.delete(request.id);
      latest.delete(request.id);
    });
  };

  return {
    async listener(request) {
      // Finished (or failed): no more progress for it; the outcome is what the message shows.
      if (request.status !== 'executing') progressState.delete(request.id);
      enqueue(request);
    },
    progress(request, update) {
      if (!request.messageTs || !request.channel) return;
      const at = now().getTime();
      const state = progressState.get(request.id);
      if (!state) {
        progressState.set(request.id, { since: { at, done: update.done }, sentAt: 0 });
      }
      const current = progressState.get(request.id)!;
      if (at - current.sentAt < progressEveryMs) return;
      current.sentAt = at;
      // A copy, so that the outcome (a different object) always supersedes this in the chain.
      const snapshot: ActionRequest = { ...request };
      progressLines.set(snapshot, progressLine(request.action, update, current.since, at, locale));
      enqueue(snapshot);
    },
    resendFailed() {
      const due = [...failed.values()];
      failed.clear();
      // A request with a newer state queued meanwhile is brought up to date by that one.
      for (const request of due) if (!latest.has(request.id)) enqueue(request);
    },
    async idle() {
      while (chains.size > 0) await Promise.all([...chains.values()]);
    },
  };
}
