import { type Locale, messages } from '../i18n/index.js';
import type { AuditVerifyResult } from '../store/audit-hash.js';
import type { TimelineEvent } from '../timeline/events.js';
import { factsOfAction } from '../verbs.js';
import { formatDecimal, formatNumber } from './format.js';
import { context, header, packSections } from './kit.js';
import type { Message } from './message.js';
import { escapeInline, escapeMrkdwn } from './mrkdwn.js';
import { actionOutcome } from './scale.js';

/** Everything a timeline shows: the span, its events, and the chain's verdict over it. */
export interface TimelineView {
  since: string;
  until: string;
  system?: string;
  events: TimelineEvent[];
  verification: TimelineVerification;
  /** True when the span held more audit entries than were read. */
  capped: boolean;
  capLimit: number;
}

/** The chain's verdict, and which entries of the chain this span covers. */
export interface TimelineVerification {
  result: AuditVerifyResult;
  firstSeq?: number;
  lastSeq?: number;
}

/** At most this many events in the Slack message; the command line prints them all. */
export const SLACK_TIMELINE_EVENTS = 40;

/** One event in words (unescaped: each builder escapes for its own format). */
export function describeEvent(event: TimelineEvent, locale: Locale): { who: string; what: string } {
  const t = messages(locale).timeline;
  const e = t.events;
  switch (event.kind) {
    case 'alert.fired': {
      const severity = messages(locale).escalation.severity[event.severity] ?? event.severity;
      const threshold = Number.isInteger(event.threshold)
        ? formatNumber(event.threshold, locale)
        : formatDecimal(event.threshold, 2, locale);
      return { who: t.monitor, what: e.alertFired(event.rule, event.subject, severity, threshold) };
    }
    case 'alert.resolved':
      return { who: t.monitor, what: e.alertResolved(event.rule, event.subject) };
    case 'alert.paged':
      return {
        who: event.by === 'monitor' ? t.monitor : event.by,
        what: e.alertPaged(
          event.rule,
          event.subject,
          event.pager,
          event.acknowledgedBy === undefined
            ? undefined
            : event.acknowledgedBy.startsWith('pagerduty:')
              ? e.inPagerDuty(event.acknowledgedName ?? event.acknowledgedBy)
              : event.acknowledgedBy,
        ),
      };
    case 'look':
      return {
        who: event.who,
        what:
          event.reason === undefined
            ? e.looked(event.verb, event.target)
            : e.lookFailed(event.verb, event.target, reasonText(event.reason, locale)),
      };
    case 'alert.handled':
      return { who: event.who, what: e.alertHandled(event.verb, event.target, event.count) };
    case 'guard.denied':
      return {
        who: event.who,
        what: e.guardDenied(
          event.verb,
          event.target,
          event.reason === undefined ? undefined : reasonText(event.reason, locale),
        ),
      };
    case 'requested':
      return { who: event.who, what: e.requested(event.action, event.target, event.request) };
    case 'approved':
      return { who: event.who, what: e.approved(event.action, event.target, event.request) };
    case 'approval.refused':
      return {
        who: event.who,
        what: e.approvalRefused(event.request, reasonText(event.reason ?? '', locale)),
      };
    case 'denied':
      return {
        who: event.who,
        what: e.denied(
          event.action,
          event.target,
          event.request,
          event.reason === undefined ? undefined : reasonText(event.reason, locale),
        ),
      };
    case 'expired':
      return { who: event.who, what: e.expired(event.request) };
    case 'interrupted':
      return { who: event.who, what: e.interrupted(event.request) };
    case 'action.done':
      return {
        who: event.who,
        what: e.actionDone(
          event.action,
          event.target,
          event.result ? actionResultText(event.action, event.result, locale) : event.outcome,
        ),
      };
    case 'action.failed':
      return {
        who: event.who,
        what: e.actionFailed(event.action, event.target, reasonText(event.outcome, locale)),
      };
  }
}

/** A refusal's or failure's code as words (`self-approval`, `NoWorkersAnswered`); other text as is. */
function reasonText(reason: string, locale: Locale): string {
  const words = messages(locale).timeline.events.reasons as Record<string, string>;
  return Object.hasOwn(words, reason) ? words[reason]! : reason;
}

/**
 * What an action did, in the locale's words: its descriptor's `timelineOutcome` (pause, resume,
 * scale, revoke, restart, fail, retry, purge, undo, expire-results), else its report's line (a
 * limit's before → after and until when, as the request message says it), else field by field.
 * Ids and names only, never job data.
 */
function actionResultText(action: string, result: Record<string, unknown>, locale: Locale): string {
  return (
    factsOfAction(action)?.timelineOutcome?.(result, locale) ??
    actionOutcome(action, result, locale) ??
    resultText(result, locale)
  );
}

/**
 * An action's result in the locale's words and numbers (`retried 12 · skipped 2 no longer
 * failed`); fields the catalog does not word are left out (`alreadyThere 0` read as the program's
 * insides). Never more than five parts, and nothing long (ids and paths, not payloads).
 */
function resultText(result: Record<string, unknown>, locale: Locale): string {
  const named = messages(locale).timeline.events.result as unknown as Record<
    string,
    (value: string) => string
  >;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(result)) {
    if (parts.length >= 5) break;
    const text =
      typeof value === 'number'
        ? formatNumber(value, locale)
        : typeof value === 'boolean' || (typeof value === 'string' && value.length <= 80)
          ? String(value)
          : undefined;
    // A field the catalog does not word is the program's, not the reader's: left out.
    if (text === undefined || !Object.hasOwn(named, key)) continue;
    parts.push(named[key]!(text));
  }
  return parts.join(' · ');
}

/** The verdict in one line: verified, broken after the span, or broken within it. */
export function verificationLine(v: TimelineVerification, locale: Locale): string {
  const t = messages(locale).timeline.verification;
  const r = v.result;
  if (r.ok) return t.ok(r.count, v.firstSeq, v.lastSeq);
  if (v.lastSeq === undefined || r.firstBad.seq > v.lastSeq)
    return t.brokenAfter(r.firstBad.seq, r.firstBad.reason, v.lastSeq);
  return t.broken(r.firstBad.seq, r.firstBad.reason);
}

const hms = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;

/** A Markdown table cell: pipes and line breaks would end the cell or the row. */
function cell(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/[\r\n]+/g, ' ');
}

/** Markdown for a postmortem: a heading, a table of events, the chain's verdict. */
export function timelineMarkdown(view: TimelineView, locale: Locale): string {
  const t = messages(locale).timeline;
  const lines = [`# ${cell(t.title(hms(view.since), hms(view.until), view.system))}`, ''];
  if (view.events.length === 0) lines.push(t.empty);
  else {
    lines.push(`| ${t.columns.time} | ${t.columns.who} | ${t.columns.what} |`, '|---|---|---|');
    for (const event of view.events) {
      const { who, what } = describeEvent(event, locale);
      lines.push(`| ${hms(event.at)} | ${cell(who)} | ${cell(what)} |`);
    }
  }
  lines.push('');
  if (view.capped) lines.push(t.capped(view.capLimit), '');
  lines.push(verificationLine(view.verification, locale));
  return `${lines.join('\n')}\n`;
}

/**
 * One Slack message: the first events, then how to get the rest from the command line when they
 * do not all fit, then the chain's verdict.
 */
export function timelineMessage(view: TimelineView, locale: Locale): Message {
  const t = messages(locale).timeline;
  const title = t.title(hms(view.since), hms(view.until), view.system);
  const shown = view.events.slice(0, SLACK_TIMELINE_EVENTS);
  const lines = shown.map((event) => {
    const { who, what } = describeEvent(event, locale);
    return `\`${event.at.slice(11, 19)}\` *${escapeInline(who)}* ${escapeMrkdwn(what)}`;
  });
  const blocks: Message['blocks'] = [header(title)];
  if (lines.length === 0) blocks.push(context(escapeMrkdwn(t.empty)));
  for (const text of packSections(lines)) blocks.push({ type: 'section', text: { type: 'mrkdwn', text } });
  const notes: string[] = [];
  if (shown.length < view.events.length) {
    notes.push(escapeMrkdwn(t.truncated(shown.length, view.events.length)));
    notes.push(t.restCli(view.since, view.until, view.system));
  }
  if (view.capped) notes.push(escapeMrkdwn(t.capped(view.capLimit)));
  if (notes.length > 0) blocks.push(context(...notes));
  blocks.push(context(escapeMrkdwn(verificationLine(view.verification, locale))));
  return { text: title, blocks: blocks.slice(0, 50) };
}
