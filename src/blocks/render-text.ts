import type { Message } from './message.js';

/** A button as the terminal shows it: `[1] Open DLQ pushizo/dispatch-ios`. */
export interface TextButton {
  /** 1-based, in the order the buttons appear in the message. */
  index: number;
  label: string;
  actionId: string;
  value: string;
}

/** A message as readable terminal text, plus its buttons so a console can "press" one by number. */
export interface RenderedText {
  text: string;
  buttons: TextButton[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const EMOJI: Record<string, string> = {
  warning: '⚠',
  x: '✖',
  white_check_mark: '✔',
  information_source: 'ℹ',
  hourglass_flowing_sand: '⏳',
  lock: '🔒',
  no_entry: '⛔',
  gear: '⚙',
  alarm_clock: '⏰',
  eyes: '👀',
  large_blue_circle: '🔵',
  large_orange_circle: '🟠',
  red_circle: '🔴',
  mega: '📣',
  repeat: '🔁',
  rotating_light: '🚨',
  zzz: '💤',
};

/**
 * Renders Block Kit as terminal text (CLI without `--json`, the demo console): headers underlined,
 * mrkdwn unescaped with `*bold*` markers dropped, code blocks as they are, context lines, and the
 * buttons numbered in order.
 */
export function renderText(message: Message): RenderedText {
  const buttons: TextButton[] = [];
  const parts: string[] = [];
  const addButton = (e: Json) => {
    const label = plain(textOf(e.text));
    const index = buttons.length + 1;
    buttons.push({ index, label, actionId: String(e.action_id ?? ''), value: String(e.value ?? '') });
    return `[${index}] ${label}`;
  };

  for (const block of message.blocks as unknown[]) {
    if (!isObject(block)) continue;
    switch (block.type) {
      case 'header': {
        const title = plain(textOf(block.text));
        parts.push(`${title}\n${'='.repeat(Math.min(60, [...title].length))}`);
        break;
      }
      case 'section': {
        const lines: string[] = [];
        if (isObject(block.text)) lines.push(textObject(block.text));
        if (Array.isArray(block.fields))
          for (const f of block.fields) if (isObject(f)) lines.push(textObject(f));
        if (isObject(block.accessory) && block.accessory.type === 'button')
          lines.push(addButton(block.accessory));
        parts.push(lines.join('\n'));
        break;
      }
      case 'context': {
        const texts = (Array.isArray(block.elements) ? block.elements : [])
          .filter(isObject)
          .filter((e) => e.type === 'mrkdwn' || e.type === 'plain_text')
          .map(textObject);
        parts.push(texts.join(' · '));
        break;
      }
      case 'actions': {
        const lines = (Array.isArray(block.elements) ? block.elements : [])
          .filter(isObject)
          .filter((e) => e.type === 'button')
          .map(addButton);
        if (lines.length) parts.push(lines.join('\n'));
        break;
      }
      case 'divider':
        parts.push('─'.repeat(40));
        break;
      case 'markdown':
        parts.push(String(block.text ?? ''));
        break;
      case 'table':
        parts.push(renderTable(block.rows));
        break;
      case 'rich_text':
        parts.push(plain(collectText(block)));
        break;
      default:
        break;
    }
  }
  return { text: parts.filter((p) => p !== '').join('\n\n'), buttons };
}

/** Mrkdwn (or plain text) to terminal text. Exported for transports that render one string. */
export function mrkdwnToText(mrkdwn: string): string {
  // Code blocks stay exactly as written (only entities decoded); the rest is de-formatted.
  return mrkdwn
    .split(/(```[\s\S]*?```)/g)
    .map((chunk, i) =>
      i % 2 === 1 ? plain(chunk.replace(/^```\n?/, '').replace(/\n?```$/, '')) : prose(chunk),
    )
    .join('');
}

function textObject(o: Json): string {
  const text = textOf(o);
  return o.type === 'mrkdwn' ? mrkdwnToText(text) : plain(text);
}

function textOf(v: unknown): string {
  return isObject(v) && typeof v.text === 'string' ? v.text : '';
}

/** Slack's three entities back to characters, and the zero-width spaces `escapeInline` adds. */
export function plain(text: string): string {
  return text
    .replace(/\u200b/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function prose(text: string): string {
  // Characters escapeInline guarded (`\u200b*\u200b`) are literal: hide them from the bold pass.
  const guarded: string[] = [];
  let out = text.replace(/\u200b([`*_~])\u200b/g, (_, c: string) => {
    guarded.push(c);
    return `\u0000${guarded.length - 1}\u0000`;
  });
  out = out
    .replace(/<([^<>|]+)\|([^<>]+)>/g, (_, target: string, label: string) => linkText(target, label))
    .replace(/<([^<>]+)>/g, (_, target: string) => linkText(target, undefined))
    .replace(/(^|[\s(])\*(\S(?:[^*\n]*?\S)?)\*(?=$|[\s.,;:!?)])/gm, '$1$2')
    .replace(/:([a-z_]+):/g, (m, name: string) => EMOJI[name] ?? m);
  out = out.replace(/\u0000(\d+)\u0000/g, (_, i: string) => guarded[Number(i)] ?? '');
  return plain(out);
}

function linkText(target: string, label: string | undefined): string {
  if (target.startsWith('@')) return `@${label ?? target.slice(1)}`;
  if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
  if (target.startsWith('!date^')) return label ?? target;
  if (target.startsWith('!subteam^')) return `@${label ?? target.slice(9)}`;
  if (target.startsWith('!')) return `@${target.slice(1)}`;
  return label ? `${label} (${target})` : target;
}

function renderTable(rows: unknown): string {
  if (!Array.isArray(rows)) return '';
  const cells = rows.map((row) =>
    (Array.isArray(row) ? row : []).map((c) =>
      isObject(c) && typeof c.text === 'string' ? plain(c.text) : plain(collectText(c)),
    ),
  );
  const widths: number[] = [];
  for (const row of cells) {
    row.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, c.length);
    });
  }
  return cells
    .map((row) =>
      row
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function collectText(node: unknown): string {
  if (Array.isArray(node)) return node.map(collectText).join('');
  if (!isObject(node)) return '';
  if (typeof node.text === 'string') return node.text;
  if (Array.isArray(node.elements)) return collectText(node.elements);
  return '';
}
