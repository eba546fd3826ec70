import { SlackLimits as L } from './limits.js';
import type { Message } from './message.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * Checks a message against Slack's Block Kit limits and returns every violation as
 * `"<json-pointer>: <what>, <limit>"`, e.g. `"/blocks/3/text/text: 3012 characters, at most 3000"`.
 * An empty list means Slack's documented limits are respected. `surface` decides the block cap
 * (50 in a message, 100 in a modal or Home tab).
 */
export function validateMessage(message: Message, surface: 'message' | 'modal' = 'message'): string[] {
  const out: string[] = [];
  const text = str((message as unknown as Json).text);
  if (text !== undefined && text.length > L.messageText) {
    out.push(`/text: ${text.length} characters, at most ${L.messageText}`);
  }
  const blocks: unknown = (message as unknown as Json).blocks;
  if (!Array.isArray(blocks)) {
    out.push('/blocks: expected an array');
    return out;
  }
  const maxBlocks = surface === 'modal' ? L.modalBlocks : L.messageBlocks;
  if (blocks.length > maxBlocks) out.push(`/blocks: ${blocks.length} blocks, at most ${maxBlocks}`);

  const blockIds = new Map<string, number>();
  blocks.forEach((block, i) => {
    const path = `/blocks/${i}`;
    if (!isObject(block)) {
      out.push(`${path}: expected an object`);
      return;
    }
    const id = str(block.block_id);
    if (id !== undefined) {
      maxLen(out, `${path}/block_id`, id, L.blockId);
      const first = blockIds.get(id);
      if (first !== undefined) out.push(`${path}/block_id: "${id}" is already used by /blocks/${first}`);
      else blockIds.set(id, i);
    }
    validateBlock(out, path, block);
  });

  if (surface === 'message') {
    const total = blocks.reduce<number>((sum, b) => sum + textLength(b), 0);
    if (total > L.totalBlockText) {
      out.push(`/blocks: ${total} characters of text in all blocks, at most ${L.totalBlockText}`);
    }
  }
  return out;
}

/** Throws an Error that lists every violation; transports call it before sending. */
export function assertValidMessage(message: Message, surface: 'message' | 'modal' = 'message'): void {
  const problems = validateMessage(message, surface);
  if (problems.length > 0) {
    throw new Error(`Message breaks Slack's Block Kit limits:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

function validateBlock(out: string[], path: string, block: Json): void {
  switch (block.type) {
    case 'section':
      validateSection(out, path, block);
      return;
    case 'header':
      textObject(out, `${path}/text`, block.text, L.headerText, ['plain_text']);
      return;
    case 'context':
      validateContext(out, path, block);
      return;
    case 'actions':
      validateActions(out, path, block);
      return;
    case 'markdown':
      stringField(out, `${path}/text`, block.text, L.markdownText);
      return;
    case 'table':
      validateTable(out, path, block);
      return;
    case 'divider':
    case 'image':
    case 'rich_text':
    case 'input':
    case 'file':
    case 'video':
      return;
    default:
      if (typeof block.type !== 'string') out.push(`${path}/type: missing`);
  }
}

function validateSection(out: string[], path: string, block: Json): void {
  const hasText = block.text !== undefined;
  const fields = block.fields;
  if (!hasText && fields === undefined) out.push(`${path}: needs text or fields`);
  if (hasText) textObject(out, `${path}/text`, block.text, L.sectionText);
  if (fields !== undefined) {
    if (!Array.isArray(fields)) out.push(`${path}/fields: expected an array`);
    else {
      if (fields.length > L.sectionFields) {
        out.push(`${path}/fields: ${fields.length} fields, at most ${L.sectionFields}`);
      }
      fields.forEach((f, j) => {
        textObject(out, `${path}/fields/${j}`, f, L.sectionFieldText);
      });
    }
  }
  if (isObject(block.accessory)) validateElement(out, `${path}/accessory`, block.accessory);
}

function validateContext(out: string[], path: string, block: Json): void {
  const elements = block.elements;
  if (!Array.isArray(elements) || elements.length === 0) {
    out.push(`${path}/elements: needs 1 to ${L.contextElements} elements`);
    return;
  }
  if (elements.length > L.contextElements) {
    out.push(`${path}/elements: ${elements.length} elements, at most ${L.contextElements}`);
  }
  elements.forEach((e, j) => {
    if (isObject(e) && (e.type === 'mrkdwn' || e.type === 'plain_text')) {
      textObject(out, `${path}/elements/${j}`, e, L.contextText);
    }
  });
}

function validateActions(out: string[], path: string, block: Json): void {
  const elements = block.elements;
  if (!Array.isArray(elements) || elements.length === 0) {
    out.push(`${path}/elements: needs 1 to ${L.actionsElements} elements`);
    return;
  }
  if (elements.length > L.actionsElements) {
    out.push(`${path}/elements: ${elements.length} elements, at most ${L.actionsElements}`);
  }
  const actionIds = new Map<string, number>();
  elements.forEach((e, j) => {
    const p = `${path}/elements/${j}`;
    if (!isObject(e)) {
      out.push(`${p}: expected an object`);
      return;
    }
    const id = str(e.action_id);
    if (id !== undefined) {
      const first = actionIds.get(id);
      if (first !== undefined)
        out.push(`${p}/action_id: "${id}" is already used by ${path}/elements/${first}`);
      else actionIds.set(id, j);
    }
    validateElement(out, p, e);
  });
}

function validateElement(out: string[], path: string, e: Json): void {
  stringField(out, `${path}/action_id`, e.action_id, L.actionId);
  if (e.type === 'button') {
    textObject(out, `${path}/text`, e.text, L.buttonText, ['plain_text']);
    stringField(out, `${path}/value`, e.value, L.buttonValue);
    stringField(out, `${path}/url`, e.url, L.buttonUrl);
    stringField(out, `${path}/accessibility_label`, e.accessibility_label, L.accessibilityLabel);
  }
  if (e.confirm !== undefined) validateConfirm(out, `${path}/confirm`, e.confirm);
}

function validateConfirm(out: string[], path: string, confirm: unknown): void {
  if (!isObject(confirm)) {
    out.push(`${path}: expected an object`);
    return;
  }
  textObject(out, `${path}/title`, confirm.title, L.confirmTitle, ['plain_text']);
  textObject(out, `${path}/text`, confirm.text, L.confirmText);
  textObject(out, `${path}/confirm`, confirm.confirm, L.confirmButton, ['plain_text']);
  textObject(out, `${path}/deny`, confirm.deny, L.confirmButton, ['plain_text']);
}

function validateTable(out: string[], path: string, block: Json): void {
  const rows = block.rows;
  if (!Array.isArray(rows)) {
    out.push(`${path}/rows: expected an array`);
    return;
  }
  if (rows.length > L.tableRows) out.push(`${path}/rows: ${rows.length} rows, at most ${L.tableRows}`);
  rows.forEach((row, j) => {
    if (Array.isArray(row) && row.length > L.tableCells) {
      out.push(`${path}/rows/${j}: ${row.length} cells, at most ${L.tableCells}`);
    }
  });
  const settings = block.column_settings;
  if (Array.isArray(settings) && settings.length > L.tableColumnSettings) {
    out.push(`${path}/column_settings: ${settings.length} items, at most ${L.tableColumnSettings}`);
  }
}

/** A required text object `{ type, text }` of at most `max` characters and at least one. */
function textObject(
  out: string[],
  path: string,
  value: unknown,
  max: number,
  types: readonly string[] = ['plain_text', 'mrkdwn'],
): void {
  if (!isObject(value)) {
    out.push(`${path}: missing text object`);
    return;
  }
  if (typeof value.type !== 'string' || !types.includes(value.type)) {
    out.push(`${path}/type: "${String(value.type)}", expected ${types.join(' or ')}`);
  }
  const text = str(value.text);
  if (text === undefined || text.length === 0) {
    out.push(`${path}/text: empty, at least 1 character`);
    return;
  }
  maxLen(out, `${path}/text`, text, max);
}

function stringField(out: string[], path: string, value: unknown, max: number): void {
  if (value === undefined) return;
  if (typeof value !== 'string') {
    out.push(`${path}: expected a string`);
    return;
  }
  maxLen(out, path, value, max);
}

function maxLen(out: string[], path: string, value: string, max: number): void {
  if (value.length > max) out.push(`${path}: ${value.length} characters, at most ${max}`);
}

/** Characters of every `text` string in a block, at any depth: what Slack's cumulative cap counts. */
function textLength(node: unknown): number {
  if (Array.isArray(node)) return node.reduce<number>((sum, n) => sum + textLength(n), 0);
  if (!isObject(node)) return 0;
  let sum = 0;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'text' && typeof value === 'string') sum += value.length;
    else if (typeof value === 'object') sum += textLength(value);
  }
  return sum;
}
