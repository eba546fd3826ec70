import { ActionId, indexedActionId } from '../blocks/action-ids.js';
import { actions, button, context, header, section } from '../blocks/kit.js';
import type { KnownBlock, Message } from '../blocks/message.js';
import { escapeMrkdwn } from '../blocks/mrkdwn.js';
import { type Locale, messages } from '../i18n/index.js';
import { fixCommand, fixKey } from './fix-key.js';
import type { NoteAgreement } from './notes.js';
import type { Check, Diagnosis, Finding } from './types.js';
import { clock, evidenceText } from './words.js';

/** Causes one message shows; the rest are in `--json`. */
const MAX_CAUSES = 5;
const MAX_QUEUES_NAMED = 3;
const MAX_NOTES = 3;

export interface WhyView {
  system: string;
  queue?: string;
  diagnosis: Diagnosis;
  notes: NoteAgreement[];
  now: number;
}

/** The scope a fix button carries beside its key: `system` or `system/queue`. */
export const whyScope = (view: Pick<WhyView, 'system' | 'queue'>) =>
  view.queue === undefined ? view.system : `${view.system}/${view.queue}`;

function queuesText(queues: readonly string[], locale: Locale): string {
  const t = messages(locale).why;
  const named = queues.slice(0, MAX_QUEUES_NAMED).map((q) => `\`${escapeMrkdwn(q.replace(/`/g, "'"))}\``);
  if (queues.length > MAX_QUEUES_NAMED) named.push(t.moreQueues(queues.length - MAX_QUEUES_NAMED));
  return named.join(', ');
}

function causeBlocks(view: WhyView, cause: Finding, locale: Locale): KnownBlock[] {
  const t = messages(locale).why;
  const lines = [
    t.causeLine(t.cause[cause.id], t.confidence[cause.confidence], queuesText(cause.queues, locale)),
    ...cause.evidence.map((line) => `• ${evidenceText(line, view.now, locale, 'mrkdwn')}`),
  ];
  const blocks: KnownBlock[] = [section(lines.join('\n'))];
  const scope = whyScope(view);
  const buttons = cause.fixes.flatMap((fix, i) => {
    const value = `${fixKey(fix)}/${scope}`;
    return value.length <= 255
      ? [button(fixCommand(fix), indexedActionId(ActionId.WhyFix, i), value, i === 0)]
      : [];
  });
  if (buttons.length > 0) blocks.push(actions(buttons));
  else blocks.push(context(t.nothingToClick));
  return blocks;
}

function checkText(check: Check, locale: Locale): string {
  const t = messages(locale).why;
  const reason = check.reason ? (t.reason[check.reason] ?? escapeMrkdwn(check.reason)) : null;
  return t.checkLine(`\`${check.id}\``, t.checkResult[check.result], reason);
}

function noteText(note: NoteAgreement, locale: Locale): string {
  const t = messages(locale).why;
  const said =
    note.agrees === 'yes'
      ? t.note.yes(`\`${note.cause}\``)
      : note.agrees === 'elsewhere'
        ? t.note.elsewhere(`\`${note.instead}\``)
        : t.note.nothing;
  return `${t.note.usual(`\`${escapeMrkdwn(note.queue)}\``, escapeMrkdwn(note.note))}: ${said}`;
}

/**
 * `/queue why`: the verdict, then each cause (strongest first) with its queues, evidence lines and
 * fix buttons (a button's value is the fix's key and the scope, never its command), the runbook
 * notes against the live evidence, and what was checked. Pure: data in, message out.
 */
export function whyMessage(view: WhyView, locale: Locale): Message {
  const t = messages(locale).why;
  const { diagnosis } = view;
  const blocks: KnownBlock[] = [
    header(t.title(whyScope(view))),
    section(`*${t.verdict[diagnosis.verdict]}*`),
  ];
  for (const cause of diagnosis.causes.slice(0, MAX_CAUSES)) blocks.push(...causeBlocks(view, cause, locale));
  for (const note of view.notes.slice(0, MAX_NOTES)) blocks.push(context(noteText(note, locale)));
  if (diagnosis.verdict !== 'cause') {
    const heading = diagnosis.verdict === 'healthy' ? t.healthyLine : t.unclearLine;
    blocks.push(section([heading, ...diagnosis.checked.map((c) => `• ${checkText(c, locale)}`)].join('\n')));
  } else {
    blocks.push(context(diagnosis.checked.map((c) => checkText(c, locale)).join(' · ')));
  }
  blocks.push(context(t.generated(clock(view.now, view.now, locale))));
  const top = diagnosis.causes[0];
  const text = top
    ? `${t.title(whyScope(view))}: ${t.cause[top.id]} (${t.confidence[top.confidence]})`
    : `${t.title(whyScope(view))}: ${t.verdict[diagnosis.verdict]}`;
  return { text, blocks };
}
