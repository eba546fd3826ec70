import type { QueueContext } from '../config/queue-context.js';
import { type Locale, messages } from '../i18n/index.js';
import { inCode, truncate } from './kit.js';
import { escapeMrkdwn } from './mrkdwn.js';

/** Notes are the runbook table's one row: a line, not an essay. */
const NOTES_CHARS = 300;

/** `--json`'s `context` of a queue: every key, null where the config says nothing. */
export interface QueueContextData {
  owner: string | null;
  runbook: string | null;
  dashboard: string | null;
  notes: string | null;
}

export function queueContextData(context: QueueContext | undefined): QueueContextData | null {
  if (!context) return null;
  return {
    owner: context.owner ?? null,
    runbook: context.runbook ?? null,
    dashboard: context.dashboard ?? null,
    notes: context.notes ?? null,
  };
}

/** A Slack user group (`S…`) or user (`U…`/`W…`) as a mention; the config allows nothing else. */
export function ownerMention(owner: string): string {
  return owner.startsWith('S') ? `<!subteam^${owner}>` : `<@${owner}>`;
}

/**
 * An `https:` link from the config as Slack shows one: `<url|label>`. The schema refuses `<`, `>`,
 * `|` and spaces in it; `&` is escaped as Slack asks of all text.
 */
function link(url: string, label: string): string {
  return `<${url.replace(/&/g, '&amp;')}|${label}>`;
}

/**
 * What the config says about a queue, on one mrkdwn line: owner, runbook, dashboard, notes.
 * The owner is named without notifying them unless `mention: true` (an alert whose rule says
 * `mentionOwner: true`): a `status` typed in the incident channel must not page a user group each
 * time. Undefined when there is nothing to show.
 */
export function queueContextLine(
  context: QueueContext | undefined,
  locale: Locale,
  options: { mention?: boolean } = {},
): string | undefined {
  if (!context) return undefined;
  const t = messages(locale).queueContext;
  const parts: string[] = [];
  if (context.owner !== undefined)
    parts.push(
      t.owner(options.mention === true ? ownerMention(context.owner) : `\`${inCode(context.owner, 40)}\``),
    );
  if (context.runbook !== undefined) parts.push(link(context.runbook, t.runbook));
  if (context.dashboard !== undefined) parts.push(link(context.dashboard, t.dashboard));
  if (context.notes !== undefined)
    parts.push(t.notes(escapeMrkdwn(truncate(context.notes.replace(/\s*\n\s*/g, ' '), NOTES_CHARS))));
  return parts.length > 0 ? parts.join(' · ') : undefined;
}
