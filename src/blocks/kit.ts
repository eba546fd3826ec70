import type { ActionsBlock, Button, ContextBlock, HeaderBlock, SectionBlock } from '@slack/types';
import { scrubSecrets } from '../lib/scrub.js';
import { SlackLimits } from './limits.js';
import { cutWithEllipsis, escapeInline, escapeMrkdwn, showInvisible } from './mrkdwn.js';

/** `cutWithEllipsis` that never leaves half of a surrogate pair (an emoji cut in two) before the ellipsis. */
export function truncate(text: string, max: number): string {
  const out = cutWithEllipsis(text, max);
  if (out === text) return out;
  const body = out.slice(0, -1);
  const last = body.charCodeAt(body.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? `${body.slice(0, -1)}…` : out;
}

/**
 * Escapes untrusted text and cuts it so that the escaped result is at most `max` characters.
 * Cutting after escaping could split an entity (`&am…`), so the cut happens on the raw text: the
 * longest raw prefix whose escaped form fits, searched for, since escaping grows characters
 * unevenly (`<` takes 4, an invisible one 8) and a name made mostly of them must still show its
 * start rather than a bare ellipsis.
 */
export function fitEscaped(raw: string, max: number, escapeFn: (s: string) => string = escapeMrkdwn): string {
  const whole = escapeFn(raw);
  if (whole.length <= max) return whole;
  let lo = 0;
  let hi = Math.min(raw.length - 1, max);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (escapeFn(truncate(raw, mid)).length <= max) lo = mid;
    else hi = mid - 1;
  }
  const out = escapeFn(truncate(raw, lo));
  return out.length > max ? '…' : out;
}

/** Untrusted text for `*bold*` or plain positions: escaped, formatting characters neutralised. */
export function inline(raw: string, max = 200): string {
  return fitEscaped(raw, max, escapeInline);
}

/** Untrusted text inside a `` `code` `` span or a code block: a backtick could end the code early. */
export function inCode(raw: string, max = 200): string {
  return fitEscaped(raw.replace(/`/g, "'"), max);
}

/**
 * The first line of an error, scrubbed of credentials, escaped and cut to `max`. Job errors are
 * shown to the whole channel, and HTTP clients put `?api_key=…` or `user:password@` in theirs.
 */
export function errorLine(raw: string, max: number): string {
  const first = raw.split(/\r?\n/, 1)[0] ?? '';
  return fitEscaped(scrubSecrets(first.trim()), max);
}

export function header(text: string): HeaderBlock {
  return {
    type: 'header',
    // plain_text is never parsed for mentions or links, but a bidi control still reverses it.
    text: { type: 'plain_text', text: truncate(showInvisible(text), SlackLimits.headerText), emoji: true },
  };
}

export function section(text: string): SectionBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: truncate(text, SlackLimits.sectionText) } };
}

export function context(...texts: string[]): ContextBlock {
  return {
    type: 'context',
    elements: texts
      .slice(0, SlackLimits.contextElements)
      .map((t) => ({ type: 'mrkdwn' as const, text: truncate(t, SlackLimits.contextText) })),
  };
}

export function button(label: string, actionId: string, value: string, primary = false): Button {
  const b: Button = {
    type: 'button',
    text: { type: 'plain_text', text: truncate(showInvisible(label), SlackLimits.buttonText), emoji: true },
    action_id: actionId,
    value,
  };
  if (primary) b.style = 'primary';
  return b;
}

export function actions(elements: Button[]): ActionsBlock {
  return { type: 'actions', elements: elements.slice(0, SlackLimits.actionsElements) };
}

/**
 * Joins pieces of mrkdwn (each self-contained: a code block never spans two pieces) into section
 * texts of at most `max` characters, greedily and in order.
 */
export function packSections(pieces: string[], max: number = SlackLimits.sectionText): string[] {
  const out: string[] = [];
  let current = '';
  for (const raw of pieces) {
    const piece = raw.length > max ? truncate(raw, max) : raw;
    if (current && current.length + 1 + piece.length > max) {
      out.push(current);
      current = piece;
    } else {
      current = current ? `${current}\n${piece}` : piece;
    }
  }
  if (current) out.push(current);
  return out;
}

/**
 * Splits table lines into code blocks of at most `max` characters each, repeating the heading
 * line at the top of every block so that a continuation stays readable.
 */
export function codeBlocks(heading: string, rows: string[], max: number = SlackLimits.sectionText): string[] {
  const fence = '```';
  const open = `${fence}\n${heading}`;
  const out: string[] = [];
  let current = open;
  let count = 0;
  for (const row of rows) {
    if (count > 0 && current.length + 1 + row.length + 1 + fence.length > max) {
      out.push(`${current}\n${fence}`);
      current = open;
      count = 0;
    }
    current += `\n${row}`;
    count++;
  }
  out.push(`${current}\n${fence}`);
  return out;
}
