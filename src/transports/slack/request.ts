import {
  type ActionId,
  ActionIdPattern,
  ActionId as ActionIds,
  baseActionId,
  wordsForAction,
} from '../../blocks/action-ids.js';
import { isOpsError } from '../../errors.js';
import type { Locale } from '../../i18n/index.js';
import { tokenize } from '../../pipeline/parse.js';
import type { Request } from '../../pipeline/types.js';

/** Buttons that re-render what they sit on, so their answer replaces that message in place. */
const IN_PLACE_ACTIONS: ReadonlySet<string> = new Set<ActionId>([
  ActionIds.StatusRefresh,
  ActionIds.OpenDlq,
  ActionIds.DlqRefresh,
  ActionIds.WorkersRefresh,
]);

/** True for refresh/open buttons, whose answer replaces the message that held them. */
export function isInPlaceAction(actionId: string): boolean {
  return IN_PLACE_ACTIONS.has(baseActionId(actionId));
}

/**
 * A button value is only ever an id (`system/queue`, a request id, or ""), so anything longer,
 * or with whitespace or control characters in it, was not made by us.
 */
const BUTTON_VALUE = /^[^\s\p{Cc}]{0,255}$/u;

/** The part of Bolt's context `requestFromSlack` reads. */
export interface SlackRequestContext {
  /** Set by `registerSlackListeners` from config; English when absent. */
  locale?: Locale;
}

/**
 * Builds the one `Request` a slash command or a button click stands for: the listener builds it
 * once and hands it to the dispatcher, whose chain runs the same guards as for the command line.
 *
 * From a button only the clicking user, the channel, the action id and its value are read; the
 * rest of the payload (message blocks, state, texts) can be edited by a client and is ignored.
 * Returns undefined for anything queue-ops never issued: another command, an action id we do not
 * know, or a value that cannot be one of our ids.
 */
export function requestFromSlack(body: unknown, context: SlackRequestContext = {}): Request | undefined {
  const locale: Locale = context.locale ?? 'en';
  if (!isRecord(body)) return undefined;

  if (typeof body.command === 'string') {
    // Slack only sends an app its own commands, so the name (`/queue` in the manifest) is not checked.
    if (typeof body.user_id !== 'string') return undefined;
    return {
      actor: withName(body.user_id, body.user_name),
      via: 'slack',
      channel: stringOr(body.channel_id),
      words: commandWords(stringOr(body.text) ?? ''),
      locale,
    };
  }

  if (body.type === 'block_actions') {
    const user = isRecord(body.user) ? body.user : undefined;
    const actions = Array.isArray(body.actions) ? body.actions : [];
    const action: unknown = actions[0];
    if (!user || typeof user.id !== 'string' || !isRecord(action)) return undefined;
    const actionId = action.action_id;
    const value = action.value ?? '';
    if (typeof actionId !== 'string' || typeof value !== 'string') return undefined;
    if (!ActionIdPattern.test(actionId) || !BUTTON_VALUE.test(value)) return undefined;
    const words = wordsForAction(actionId, value);
    if (!words) return undefined;
    const container = isRecord(body.container) ? body.container : {};
    const channel = isRecord(body.channel) ? stringOr(body.channel.id) : undefined;
    const messageTs = stringOr(container.message_ts);
    const view = isRecord(body.view) ? body.view : undefined;
    const fromHome = container.type === 'view' && view?.type === 'home';
    return {
      actor: withName(user.id, user.username ?? user.name),
      via: 'slack',
      channel: channel ?? stringOr(container.channel_id),
      words,
      action: messageTs === undefined ? { actionId, value } : { actionId, value, messageTs },
      ...(fromHome ? { surface: 'home' as const } : {}),
      locale,
    };
  }

  return undefined;
}

/** The action id of a block_actions payload, when there is one (for logging and routing). */
export function actionIdOf(body: unknown): string | undefined {
  if (!isRecord(body) || !Array.isArray(body.actions)) return undefined;
  const action: unknown = body.actions[0];
  return isRecord(action) ? stringOr(action.action_id) : undefined;
}

/** Whether the button sat on an ephemeral message (only `respond` can change those). */
export function isFromEphemeral(body: unknown): boolean {
  return isRecord(body) && isRecord(body.container) && body.container.is_ephemeral === true;
}

/**
 * The words of a slash command, split by the same tokenizer as the CLI and the demo console, so
 * `deny r-abc "wrong queue"` gives the reason `wrong queue` (curly quotes from macOS too).
 *
 * On an unclosed quote the plain whitespace words are used, quote characters kept, rather than a
 * usage error: the commonest case is an apostrophe in a reason (`deny r-abc it's stale`), which
 * should just work; this runs after `ack()` and must not throw; and a `Request` carries only words,
 * so the tokenizer's error could not reach the dispatcher's answer anyway. The kept quote means a
 * name like `"pushizo/x` never matches a real system or queue (the command answers "no system
 * called …, did you mean"), so nothing is guessed into another target.
 */
function commandWords(text: string): string[] {
  try {
    return tokenize(text);
  } catch (error) {
    if (!isOpsError(error)) throw error;
    return text.trim().split(/\s+/).filter(Boolean);
  }
}

function withName(id: string, name: unknown): Request['actor'] {
  return typeof name === 'string' && name ? { id, name } : { id };
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' && value ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
