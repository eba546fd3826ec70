import type { App, Context, Middleware, NextFn, RespondArguments, RespondFn, webApi } from '@slack/bolt';
import { ActionIdPattern } from '../../blocks/action-ids.js';
import { errorMessage } from '../../blocks/error.js';
import type { Message } from '../../blocks/message.js';
import { assertValidMessage } from '../../blocks/validate.js';
import { type Locale, messages } from '../../i18n/index.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { newRef } from '../../pipeline/ref.js';
import type { Reply, Request } from '../../pipeline/types.js';
import { actionIdOf, isFromEphemeral, isInPlaceAction, requestFromSlack } from './request.js';
import { type RespondPolicy, reliableRespond, responseUrlOf } from './respond.js';
import { uploadFile } from './uploads.js';

/** What the Slack listeners need: something that answers a `Request`, and a logger. */
export interface SlackListenerDeps {
  dispatcher: { handle(request: Request): Promise<Reply> };
  logger: Logger;
  /** The locale for Slack users (config `locale`); English by default. */
  locale?: Locale;
  /**
   * A user's own language (their Slack locale, cached: `createUserLocales`), which overrides
   * `locale` when it is known. Never throws; undefined keeps `locale`.
   */
  userLocale?: (userId: string) => Promise<Locale | undefined>;
  /**
   * Gets the first go at every answer before it is sent through `respond()`, e.g. to post an
   * approval request with `chat.postMessage` so its message can later be updated in place. See
   * `ReplyDelivery`.
   */
  deliver?: ReplyDelivery;
  /**
   * A click on the App Home tab has no response_url: its answer (a denial, an error, the outcome)
   * is shown by re-publishing that user's tab with the text at the top (`HomeTab.notice`).
   */
  homeNotice?: (userId: string, text: string) => Promise<void>;
  /**
   * Timeout and retries of answers through a payload's `response_url` (`reliableRespond`);
   * the defaults suit Slack, tests shorten them.
   */
  respondPolicy?: Partial<RespondPolicy>;
}

/**
 * Delivers an answer itself and resolves true, or resolves false to leave it to the listener's
 * usual `respond()`. Should not throw; if it does, the listener logs it and answers as usual.
 */
export type ReplyDelivery = (
  reply: Reply,
  request: Request,
  client: WebClient,
  respond: RespondFn | undefined,
) => Promise<boolean>;

/** The arguments every listener step uses; Bolt's command and action arguments both fit. */
interface StepArgs {
  ack: () => Promise<void>;
  body: unknown;
  context: Context;
  respond?: RespondFn;
  client: WebClient;
}
type Step = (args: StepArgs) => Promise<void>;

/** Every action id this app issues, and everything else (answered as unknown). */
const OURS = ActionIdPattern;
const NOT_OURS = new RegExp(`^(?!${ActionIdPattern.source.replace(/^\^/, '')})`);

/**
 * Registers `/queue` and the `queue_ops.*` buttons. Every request is acknowledged before any
 * other work (Slack gives 3 s and Redis may hang for 5), then answered through `respond()`.
 */
export function registerSlackListeners(app: App, deps: SlackListenerDeps): void {
  const locale = deps.locale ?? 'en';
  const log = deps.logger.child({ component: 'slack' });

  app.use(ignoreRetries(log));

  /** Bolt's respond() has no timeout and no retry: answers go through `reliableRespond`. */
  const respondFor = (body: unknown, bolt: RespondFn | undefined): RespondFn | undefined => {
    const url = responseUrlOf(body);
    if (!url) return bolt;
    return reliableRespond(url, {
      logger: log,
      ...(deps.respondPolicy ? { policy: deps.respondPolicy } : {}),
    });
  };

  const unknownAction = async (body: unknown, respond: RespondFn | undefined, as: Locale = locale) => {
    // A forged or stale button: say so to the clicker only, run nothing.
    log.warn({ actionId: actionIdOf(body)?.slice(0, 255) }, 'button not issued by queue-ops ignored');
    await send(respond, errorMessage(messages(as).slack.unknownAction), ephemeralNew, log, as);
  };

  /**
   * One payload, one pipeline: parsed into a `Request` once, then the dispatcher (which resolves
   * the verb and runs the guards, the audit and the command in its one middleware chain).
   */
  const handle: Step = async ({ ack, body, context, respond: boltRespond, client }) => {
    await ack();
    const slackRespond = respondFor(body, boltRespond);
    // After ack(): the user's own locale may take a users.info call (cached).
    const userId = slackUserId(body);
    const own = userId && deps.userLocale ? await deps.userLocale(userId).catch(() => undefined) : undefined;
    context.locale ??= own ?? locale;
    const requestLocale: Locale = context.locale ?? locale;
    const request = requestFromSlack(body, { locale: requestLocale });
    if (!request) {
      await unknownAction(body, slackRespond, requestLocale);
      return;
    }
    const homeNotice = deps.homeNotice;
    const respond: RespondFn | undefined =
      respondIfUrl(body, slackRespond) ??
      (request.surface === 'home' && homeNotice
        ? async (message) => {
            const text = typeof message === 'string' ? message : (message.text ?? '');
            await homeNotice(request.actor.id, text);
            return undefined as never;
          }
        : undefined);

    let reply: Reply;
    try {
      reply = await deps.dispatcher.handle(request);
    } catch (error) {
      // The last resort: the dispatcher answers every failure itself, so this is a broken
      // dispatcher, and the user still gets one line with a ref rather than silence.
      reply = internalError(error, log, requestLocale, request);
    }
    if (!(deps.deliver && (await tryDeliver(deps.deliver, reply, request, client, respond, log))))
      await sendReply(respond, reply, body, request, log, requestLocale);
    // After the answer, so the chart lands below the text that explains it.
    if (reply.ok && reply.files?.length) await uploadReplyFiles(client, reply, request, log);
  };

  const unknown: Step = async ({ ack, body, respond }) => {
    await ack();
    await unknownAction(body, respondIfUrl(body, respondFor(body, respond)));
  };

  // Any command: Slack sends an app only the commands in its own manifest, so whatever name the
  // workspace gave it (`/queue`, or `/q` beside another app's `/queue`) is this bot's.
  app.command(/^\//, handle as unknown as Parameters<App['command']>[1]);
  app.action(OURS, handle as unknown as Parameters<App['action']>[1]);
  // Buttons outside our namespace still get an ack and an answer rather than Slack's timeout error.
  app.action(NOT_OURS, unknown as unknown as Parameters<App['action']>[1]);
  routeActionlessClicks(app);
}

/**
 * Bolt routes a block_actions payload by `actions[0].action_id`. One without a usable first action
 * (none, an empty list, an id that is not a string) matches no listener: Bolt never acks it and
 * the user sees Slack's timeout error three seconds later. Such a payload is handed on with a
 * first action no id of ours can match, so it reaches the not-ours listener: acked, answered with
 * one line, nothing run.
 */
function routeActionlessClicks(app: App): void {
  const processEvent = app.processEvent.bind(app);
  app.processEvent = (event) => processEvent({ ...event, body: withRoutableAction(event.body) });
}

/** The body itself, or a copy whose first action carries an empty action id (see above). */
export function withRoutableAction<T>(body: T): T {
  if (typeof body !== 'object' || body === null) return body;
  const b = body as { type?: unknown; actions?: unknown };
  if (b.type !== 'block_actions') return body;
  const first: unknown = Array.isArray(b.actions) ? b.actions[0] : undefined;
  const routable =
    typeof first === 'object' &&
    first !== null &&
    typeof (first as { action_id?: unknown }).action_id === 'string';
  return routable ? body : { ...body, actions: [{ type: 'button', action_id: '' }] };
}

/**
 * Bolt builds `respond` from any truthy `response_url`; one that is not an http(s) URL (a payload
 * with a forged field) would make every answer throw before it is sent. Without a usable URL the
 * answer goes where a Home tab click's goes (or nowhere), as when Slack sends none. (Slack's are
 * https; a local stand-in's may be plain http.)
 */
function respondIfUrl(body: unknown, respond: RespondFn | undefined): RespondFn | undefined {
  const url = responseUrlOf(body);
  if (url === undefined || /\s/.test(url)) return undefined;
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || protocol === 'http:' ? respond : undefined;
  } catch {
    return undefined;
  }
}

/** The user behind a slash command (`user_id`) or a button click (`user.id`). */
function slackUserId(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as { user_id?: unknown; user?: { id?: unknown } };
  if (typeof b.user_id === 'string' && b.user_id) return b.user_id;
  const id = typeof b.user === 'object' && b.user !== null ? b.user.id : undefined;
  return typeof id === 'string' && id ? id : undefined;
}

/**
 * Slack redelivers an event it thinks we missed; the first delivery already ran the command.
 * Acknowledged (so Slack stops) and dropped.
 */
function ignoreRetries(log: Logger): Middleware<object> {
  return async (args) => {
    const { context, next } = args as unknown as { context: Context; next: NextFn };
    if (context.retryNum !== undefined && context.retryNum > 0) {
      const ack = (args as { ack?: () => Promise<void> }).ack;
      if (ack) await ack();
      log.info({ retryNum: context.retryNum, retryReason: context.retryReason }, 'Slack retry ignored');
      return;
    }
    await next();
  };
}

/**
 * A reply's files: a `trend` chart into the request's channel, or the thread the file names; a
 * file for one person (a long timeline) into their direct messages with the bot
 * (`conversations.open`, scope `im:write`).
 */
async function uploadReplyFiles(
  client: WebClient,
  reply: Reply,
  request: Request,
  log: Logger,
): Promise<void> {
  for (const file of reply.files ?? []) {
    try {
      if (file.privateTo !== undefined) {
        const opened = await client.conversations.open({ users: file.privateTo });
        const direct = opened.channel?.id;
        if (!direct) throw new Error('conversations.open returned no channel');
        await uploadFile(client, direct, file);
        continue;
      }
      if (!request.channel) continue;
      await uploadFile(client, request.channel, file, file.threadTs);
    } catch (error) {
      const data = (error as { data?: { error?: string } }).data;
      log.warn({ err: error, slackError: data?.error, filename: file.filename }, 'file upload failed');
    }
  }
}

async function tryDeliver(
  deliver: ReplyDelivery,
  reply: Reply,
  request: Request,
  client: WebClient,
  respond: RespondFn | undefined,
  log: Logger,
): Promise<boolean> {
  try {
    return await deliver(reply, request, client, respond);
  } catch (error) {
    log.warn({ err: error }, 'reply delivery hook failed; answering through respond()');
    return false;
  }
}

type Placement = Pick<RespondArguments, 'response_type' | 'replace_original'>;
const ephemeralNew: Placement = { response_type: 'ephemeral', replace_original: false };

/**
 * Where a reply goes. Failures and ephemeral answers never overwrite a shared message: the
 * clicker alone sees them. A refresh/open (or a reply that asks for it) replaces the message
 * that held the button.
 */
function placementFor(reply: Reply, body: unknown, request: Request): Placement {
  const fromButton = request.action !== undefined;
  if (!fromButton) return { response_type: reply.visibility };
  if (!reply.ok) return ephemeralNew;
  if (reply.visibility === 'ephemeral' && !isFromEphemeral(body)) return ephemeralNew;
  if (reply.replaceOriginal || isInPlaceAction(request.action?.actionId ?? ''))
    return { replace_original: true };
  return { response_type: reply.visibility, replace_original: false };
}

async function sendReply(
  respond: RespondFn | undefined,
  reply: Reply,
  body: unknown,
  request: Request,
  log: Logger,
  locale: Locale,
): Promise<void> {
  await send(respond, reply.message, placementFor(reply, body, request), log, locale);
}

async function send(
  respond: RespondFn | undefined,
  message: Message,
  placement: Placement,
  log: Logger,
  locale: Locale,
): Promise<void> {
  if (!respond) {
    log.warn('no response_url on this payload; answer dropped');
    return;
  }
  const checked = validOrError(message, log, locale);
  const args: RespondArguments = checked.ok
    ? { ...placement, text: checked.message.text, blocks: checked.message.blocks }
    : { ...ephemeralNew, text: checked.message.text, blocks: checked.message.blocks };
  try {
    await respond(args);
  } catch (error) {
    // An expired response_url (30 min, 5 uses), or Slack down through every retry: nobody is
    // left to tell.
    const statusCode = (error as { statusCode?: number }).statusCode;
    log.warn({ err: error, statusCode }, 'respond() failed; answer not delivered');
  }
}

/**
 * Runs the message through the limits validator; an invalid one is replaced by a one-line error
 * whose ref points at the log line with the validator's complaint.
 */
function validOrError(
  message: Message,
  log: Logger,
  locale: Locale,
): { ok: true; message: Message } | { ok: false; message: Message; ref: string } {
  try {
    assertValidMessage(message);
    return { ok: true, message };
  } catch (error) {
    const ref = newRef();
    log.error({ err: error, ref }, 'outgoing Slack message failed validation');
    return { ok: false, message: errorMessage(messages(locale).common.somethingWentWrong(ref)), ref };
  }
}

function internalError(error: unknown, log: Logger, locale: Locale, request: Request): Reply {
  const ref = newRef();
  log.error(
    { err: error, ref, words: request.words, actor: request.actor.id },
    'request failed unexpectedly',
  );
  return {
    ok: false,
    visibility: 'ephemeral',
    message: errorMessage(messages(locale).common.somethingWentWrong(ref)),
    error: { code: 'Internal', ref },
  };
}

type WebClient = webApi.WebClient;

/** Options for `postMessage` / `updateMessage`. */
export interface SendOptions {
  /** Where a validation failure is logged (with the ref shown in Slack). */
  logger?: Logger;
  locale?: Locale;
  /** Post as a reply in this thread. */
  threadTs?: string;
  /** Slack message metadata, for other apps and for reading back (the audit channel witness). */
  metadata?: { event_type: string; event_payload: Record<string, string | number | boolean> };
}

/** The outcome of `postMessage` / `updateMessage`. */
export interface SendResult {
  /** False when the message failed validation and a one-line error (with `ref`) was sent instead. */
  ok: boolean;
  channel?: string;
  ts?: string;
  ref?: string;
}

/**
 * `chat.postMessage` after the limits validator (approval requests, alerts, the audit channel).
 * Web API errors are thrown to the caller, which knows whether to retry.
 */
export async function postMessage(
  client: WebClient,
  channel: string,
  message: Message,
  options: SendOptions = {},
): Promise<SendResult> {
  const checked = validOrError(message, options.logger ?? defaultLogger(), options.locale ?? 'en');
  const res = await client.chat.postMessage({
    channel,
    text: checked.message.text,
    blocks: checked.message.blocks,
    ...(options.threadTs ? { thread_ts: options.threadTs } : {}),
    ...(options.metadata ? { metadata: options.metadata } : {}),
  });
  return { ok: checked.ok, channel: res.channel, ts: res.ts, ...(checked.ok ? {} : { ref: checked.ref }) };
}

/**
 * `chat.update` of a message this app posted (an approval request's outcome, an alert's state),
 * after the limits validator. Ephemeral messages cannot be updated this way; use `respond()`.
 */
export async function updateMessage(
  client: WebClient,
  channel: string,
  ts: string,
  message: Message,
  options: Omit<SendOptions, 'threadTs'> = {},
): Promise<SendResult> {
  const checked = validOrError(message, options.logger ?? defaultLogger(), options.locale ?? 'en');
  const res = await client.chat.update({
    channel,
    ts,
    text: checked.message.text,
    blocks: checked.message.blocks,
  });
  return { ok: checked.ok, channel: res.channel, ts: res.ts, ...(checked.ok ? {} : { ref: checked.ref }) };
}

let fallbackLogger: Logger | undefined;
/** Callers should pass their logger; a validation failure must still reach some log. */
function defaultLogger(): Logger {
  fallbackLogger ??= createLogger({ base: { name: 'queue-ops', component: 'slack' } });
  return fallbackLogger;
}
