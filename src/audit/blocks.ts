import { context, fitEscaped, header, inCode, inline, packSections, section } from '../blocks/kit.js';
import { BUILDER_TEXT_BUDGET, SlackLimits } from '../blocks/limits.js';
import type { KnownBlock, Message } from '../blocks/message.js';
import { cutWithEllipsis, escapeMrkdwn } from '../blocks/mrkdwn.js';
import { type Locale, messages } from '../i18n/index.js';
import type { AuditEntry } from '../store/store.js';
import type { AuditVerifyReport } from './audit.js';

const time = (iso: string) => iso.slice(11, 16);
const day = (iso: string) => iso.slice(0, 10);
const utc = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** Only a well-formed Slack channel id may become a `<#C…>` link; anything else is shown as text. */
const channelRef = (channel: string) =>
  /^[CGD][A-Z0-9]{2,}$/.test(channel) ? `<#${channel}>` : inline(channel, 60);

const actorRef = (entry: AuditEntry, max: number) =>
  entry.actorName
    ? `${inline(entry.actorName, max)} (${inCode(entry.actorId, 30)})`
    : inline(entry.actorId, max);

/** An outcome as stored, in the locale's words (`ok` → `tamam`); an unknown one as it is. */
function outcomeWord(outcome: string, locale: Locale): string {
  const words = messages(locale).audit.outcomes;
  return Object.hasOwn(words, outcome) ? words[outcome]! : outcome;
}

/** One compact line per entry; the list has to hold up to 100 of them within Slack's text budget. */
function entryLine(entry: AuditEntry, locale: Locale): string {
  const parts = [
    `\`#${entry.seq}\``,
    time(entry.at),
    inline(entry.actorName ?? entry.actorId, 24),
    `\`${inCode(entry.action, 40)}\``,
  ];
  if (entry.target) parts.push(inline(entry.target, 48));
  parts.push(`→ *${inline(outcomeWord(entry.outcome, locale), 24)}*`);
  if (entry.error) parts.push(`(${fitEscaped(entry.error.split(/\r?\n/, 1)[0] ?? '', 60)})`);
  return parts.join(' ');
}

/**
 * `/queue audit [n]`: the entries in the order given (newest first from `Audit.recent`), grouped by
 * UTC day. Whatever does not fit Slack's text budget is left out and counted, so the message is
 * always postable however long the names in it are.
 */
export function auditMessage(entries: readonly AuditEntry[], locale: Locale): Message {
  const t = messages(locale).audit;
  if (entries.length === 0) return { text: t.empty, blocks: [section(t.empty)] };

  const title = t.title(entries.length);
  // Room for the header, the omitted note and the separators between lines.
  const budget = BUILDER_TEXT_BUDGET - title.length - t.omitted(entries.length).length - 200;
  const pieces: string[] = [];
  let used = 0;
  let shown = 0;
  let currentDay = '';
  for (const entry of entries) {
    const heading = day(entry.at) !== currentDay ? `*${day(entry.at)}*` : undefined;
    const line = entryLine(entry, locale);
    const cost = line.length + 1 + (heading ? heading.length + 1 : 0);
    if (used + cost > budget) break;
    if (heading) {
      pieces.push(heading);
      currentDay = day(entry.at);
    }
    pieces.push(line);
    used += cost;
    shown += 1;
  }

  const blocks: KnownBlock[] = [header(title)];
  // Sections below the per-section cap leave a margin for the newline joins.
  const maxBlocks = SlackLimits.messageBlocks - 2;
  for (const text of packSections(pieces, SlackLimits.sectionText - 100).slice(0, maxBlocks)) {
    blocks.push(section(text));
  }
  if (shown < entries.length) blocks.push(context(t.omitted(entries.length - shown)));
  return { text: cutWithEllipsis(title, SlackLimits.messageText), blocks };
}

/** Scalar parameters as `key=value`; nested values are only named, never dumped. */
function paramsLine(params: Record<string, unknown>): string {
  const parts = Object.keys(params)
    .sort()
    .map((key) => {
      const value = params[key];
      const shown =
        value === null || ['string', 'number', 'boolean'].includes(typeof value) ? String(value) : '{…}';
      return `${key}=${shown}`;
    });
  return parts.join(' ');
}

/** One entry as it happens, for `slack.auditChannel`. */
export function auditEntryMessage(entry: AuditEntry, locale: Locale): Message {
  const t = messages(locale).audit;
  const f = t.fields;
  const fields: { type: 'mrkdwn'; text: string }[] = [
    { type: 'mrkdwn', text: `*${f.actor}*\n${actorRef(entry, 80)}` },
    { type: 'mrkdwn', text: `*${f.via}*\n${inline(t.via[entry.via] ?? entry.via, 40)}` },
    { type: 'mrkdwn', text: `*${f.outcome}*\n${inline(entry.outcome, 80)}` },
  ];
  if (entry.target) fields.push({ type: 'mrkdwn', text: `*${f.target}*\n${inline(entry.target, 200)}` });
  if (entry.channel) fields.push({ type: 'mrkdwn', text: `*${f.channel}*\n${channelRef(entry.channel)}` });
  if (entry.params && Object.keys(entry.params).length > 0) {
    fields.push({ type: 'mrkdwn', text: `*${f.params}*\n\`${inCode(paramsLine(entry.params), 300)}\`` });
  }
  if (entry.error) {
    fields.push({
      type: 'mrkdwn',
      text: `*${f.error}*\n${fitEscaped(entry.error.split(/\r?\n/, 1)[0] ?? '', 500)}`,
    });
  }
  const blocks: KnownBlock[] = [
    section(
      `*\`${inCode(entry.action, 100)}\`* → *${inline(outcomeWord(entry.outcome, locale), 80)}* · ${utc(entry.at)}`,
    ),
    { type: 'section', fields },
    context(t.entryFooter(entry.seq, entry.hash, entry.keyId)),
  ];
  return {
    text: cutWithEllipsis(
      t.entryText(entry.seq, escapeMrkdwn(entry.action), escapeMrkdwn(entry.outcome)),
      300,
    ),
    blocks,
  };
}

/**
 * The lines of `audit verify` after the verdict: what the check rested on (keyed or not, and each
 * witness outside the store with what was found in it). Plain text; the builder escapes it.
 */
export function auditVerifyNotes(report: AuditVerifyReport, locale: Locale): string[] {
  const t = messages(locale).audit.verify;
  const lines = [
    report.keyId
      ? t.keyed(
          report.keyId,
          report.knownKeyIds.filter((id) => id !== report.keyId),
        )
      : t.unkeyed,
  ];
  if (report.witnesses.length === 0) return [...lines, t.noWitnesses];
  lines.push(t.witnessesChecked);
  for (const w of report.witnesses) {
    const label = t.reasons.witness[w.kind](w.where);
    lines.push(
      `• ${
        w.status === 'checked'
          ? t.witnessChecked(label, w.seq ?? 0)
          : w.status === 'empty'
            ? t.witnessEmpty(label)
            : t.witnessUnreadable(label, w.error ?? '?')
      }`,
    );
  }
  return lines;
}

/** `audit verify`: the verdict, then what it rested on. */
export function auditVerifyMessage(report: AuditVerifyReport, locale: Locale): Message {
  const t = messages(locale).audit.verify;
  const { result } = report;
  const verdict = result.ok
    ? t.ok(result.count)
    : t.bad(result.firstBad.seq, result.firstBad.reason, result.count);
  const notes = auditVerifyNotes(report, locale);
  const icon = result.ok ? ':white_check_mark:' : ':warning:';
  return {
    text: cutWithEllipsis([verdict, ...notes].join('\n'), SlackLimits.messageText),
    blocks: [
      section(`${icon} ${fitEscaped(verdict, SlackLimits.sectionText - 20)}`),
      context(...notes.map((line) => fitEscaped(line, 1000)).slice(0, 10)),
    ],
  };
}

/**
 * One entry as a line of a batched audit-channel post. Kept apart from the batch layout so the
 * way an entry (and its place in the chain) is written can change in this one place.
 */
export function auditChannelLine(entry: AuditEntry, locale: Locale): string {
  const t = messages(locale).audit;
  const parts = [
    `*\`${inCode(entry.action, 60)}\`* → *${inline(outcomeWord(entry.outcome, locale), 24)}*`,
    inline(entry.actorName ?? entry.actorId, 30),
  ];
  if (entry.target) parts.push(inline(entry.target, 60));
  if (entry.channel) parts.push(channelRef(entry.channel));
  if (entry.error) parts.push(`(${fitEscaped(entry.error.split(/\r?\n/, 1)[0] ?? '', 80)})`);
  parts.push(`${time(entry.at)} · ${t.entryFooter(entry.seq, entry.hash, entry.keyId)}`);
  return parts.join(' · ');
}

/** Entries the audit channel could not show, to be mentioned in the next post. */
export interface NotPosted {
  count: number;
  firstSeq: number;
  lastSeq: number;
}

/**
 * Several entries in one audit-channel post (Slack allows about one post per second per
 * channel), in chain order, with a note first when earlier entries had to be left out.
 */
export function auditBatchMessage(
  entries: readonly AuditEntry[],
  notPosted: NotPosted | undefined,
  locale: Locale,
): Message {
  const t = messages(locale).audit;
  const blocks: KnownBlock[] = [];
  if (notPosted && notPosted.count > 0) {
    blocks.push(context(t.notPosted(notPosted.count, notPosted.firstSeq, notPosted.lastSeq)));
  }
  const lines = entries.map((e) => auditChannelLine(e, locale));
  const maxSections = SlackLimits.messageBlocks - blocks.length;
  for (const text of packSections(lines, SlackLimits.sectionText - 100).slice(0, maxSections)) {
    blocks.push(section(text));
  }
  const first = entries[0];
  const last = entries[entries.length - 1];
  const text =
    first && last
      ? t.batchText(first.seq, last.seq, entries.length)
      : t.notPosted(notPosted?.count ?? 0, notPosted?.firstSeq ?? 0, notPosted?.lastSeq ?? 0);
  return { text: cutWithEllipsis(text, 300), blocks };
}
