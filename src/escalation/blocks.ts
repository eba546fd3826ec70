import type { KnownBlock } from '@slack/types';
import { ActionId } from '../blocks/action-ids.js';
import { formatDecimal, formatDuration, formatNumber, formatUtc } from '../blocks/format.js';
import { actions, button, context, header, inline, section } from '../blocks/kit.js';
import type { Message } from '../blocks/message.js';
import { escapeMrkdwn } from '../blocks/mrkdwn.js';
import { type Locale, messages } from '../i18n/index.js';
import type { Silence } from '../store/alert.js';
import { type Alert, displayValue, isSnoozed } from './lifecycle.js';

const BARS = '▁▂▃▄▅▆▇█';

/** The last values as a unicode sparkline, scaled between their own min and max; `·` where unknown. */
export function sparkline(values: readonly (number | null)[]): string {
  const known = values.filter((v): v is number => v !== null);
  if (known.length === 0) return '';
  const min = Math.min(...known);
  const max = Math.max(...known);
  return values
    .map((v) => {
      if (v === null) return '·';
      if (max === min) return BARS[3];
      return BARS[Math.round(((v - min) / (max - min)) * (BARS.length - 1))];
    })
    .join('');
}

/** A user (`U…`/`W…`) or user group (`S…`) id as a Slack mention. */
export function mention(id: string): string {
  return id.startsWith('S') ? `<!subteam^${id}>` : `<@${id}>`;
}

/** An alert's value (or threshold) as people read it: grouped, with the locale's decimals. */
export function shownValue(alert: Pick<Alert, 'metric'>, value: number | null, locale: Locale): string {
  const text = displayValue(alert.metric, value);
  // Counts get their thousands grouped; ratios and rates keep their decimals, written the
  // locale's way (0,85 in Turkish).
  if (/^-?\d+$/.test(text)) return formatNumber(Number(text), locale);
  const decimals = /^-?\d+\.(\d+)$/.exec(text)?.[1]?.length;
  return decimals === undefined ? text : formatDecimal(Number(text), decimals, locale);
}

/** Who did something, as Slack shows it: a mention for Slack ids, the name otherwise (CLI users). */
export function who(id: string): string {
  return /^[UW][A-Z0-9]+$/.test(id) ? `<@${id}>` : inline(id, 80);
}

/**
 * The one message of an alert, as it stands: while firing, severity, rule, value against the
 * threshold, trend and time to drain, with Ack / Snooze / Show DLQ / Scale… buttons; once
 * resolved, how long it lasted and no buttons.
 */
export function alertMessage(
  alert: Alert,
  locale: Locale,
  now: Date,
  settings: { clearAfterSamples: number; escalateTo: readonly string[] },
  silence?: Silence,
): Message {
  const t = messages(locale).escalation;
  const subject = inline(alert.subject, 150);
  const rule = inline(alert.rule, 80);
  const value = shownValue(alert, alert.value, locale);
  const threshold = shownValue(alert, alert.threshold, locale);
  const opened = Date.parse(alert.openedAt);
  const blocks: KnownBlock[] = [];
  if (alert.status === 'resolved') {
    const resolved = Date.parse(alert.resolvedAt ?? alert.updatedAt);
    const lasted = formatDuration((resolved - opened) / 1000, locale);
    blocks.push(header(`:white_check_mark: ${t.resolvedHeader(alert.rule, alert.subject)}`));
    blocks.push(
      section(
        `${t.valueLine(t.metric[alert.metric] ?? alert.metric, value, alert.comparator, threshold)}\n` +
          t.lasted(lasted, shownValue(alert, alert.worst, locale)),
      ),
    );
    blocks.push(context(t.resolvedAt(formatUtc(resolved, locale, false)), t.alertId(alert.id)));
    return { text: t.resolvedFallback(rule, subject), blocks };
  }

  const severity = t.severity[alert.severity] ?? alert.severity;
  // Header text is plain_text (never mrkdwn): raw names are safe there.
  blocks.push(
    header(`${t.severityEmoji[alert.severity] ?? ''} ${t.header(severity, alert.rule, alert.subject)}`),
  );
  const lines = [t.valueLine(t.metric[alert.metric] ?? alert.metric, value, alert.comparator, threshold)];
  const trend = sparkline(alert.series);
  const extras: string[] = [];
  if (trend) extras.push(t.trend(trend));
  if (alert.minutesToDrain === null) extras.push(t.notDraining);
  else if (alert.minutesToDrain !== undefined)
    extras.push(t.drain(formatNumber(Math.round(alert.minutesToDrain), locale)));
  if (extras.length) lines.push(extras.join(' · '));
  if (alert.clearing > 0) lines.push(t.clearing(alert.clearing, settings.clearAfterSamples));
  blocks.push(section(lines.join('\n')));

  const facts = [
    t.firingSince(formatUtc(opened, locale, false), formatDuration((now.getTime() - opened) / 1000, locale)),
  ];
  facts.push(t.alertId(alert.id));
  blocks.push(context(...facts));
  const states: string[] = [];
  if (alert.ackedBy) states.push(t.ackedBy(who(alert.ackedBy)));
  if (alert.snoozedUntil && isSnoozed(alert, now.getTime()))
    states.push(
      t.snoozedBy(who(alert.snoozedBy ?? '?'), formatUtc(Date.parse(alert.snoozedUntil), locale, false)),
    );
  if (alert.escalatedAt && settings.escalateTo.length)
    states.push(t.escalatedTo(settings.escalateTo.map(mention).join(' ')));
  if (silence) states.push(silenceNote(silence, locale));
  if (states.length) blocks.push(context(...states));

  const buttons = [
    button(t.buttons.ack, ActionId.AlertAck, alert.id, !alert.ackedBy),
    button(t.buttons.snooze30, ActionId.AlertSnooze30m, alert.id),
    button(t.buttons.snooze2h, ActionId.AlertSnooze2h, alert.id),
  ];
  if (alert.queue !== undefined) {
    // `system/queue` is an id; the commands behind these buttons check it and their own guards.
    buttons.push(button(t.buttons.dlq, ActionId.AlertDlq, alert.subject));
    buttons.push(button(t.buttons.scale, ActionId.AlertScale, alert.subject));
  }
  blocks.push(actions(buttons));
  return { text: t.fallback(severity, rule, subject, value), blocks };
}

/** What a message says of the silence that holds its alerts: id, pattern, until when, why. */
export function silenceNote(silence: Silence, locale: Locale): string {
  return messages(locale).escalation.silence.onMessage(
    inline(silence.id, 20),
    inline(silence.pattern, 150),
    formatUtc(Date.parse(silence.expiresAt), locale, false),
    silence.reason === undefined ? undefined : escapeMrkdwn(silence.reason.slice(0, 300)),
  );
}

/** A reply in the alert's thread: a reminder, the escalation, the end of a snooze, a reopening. */
export function threadMessage(
  alert: Alert,
  payload: { reason?: unknown; value?: unknown; mention?: unknown },
  locale: Locale,
  settings: { escalateAfterMinutes: number },
): Message {
  const t = messages(locale).escalation.thread;
  const value = shownValue(alert, typeof payload.value === 'number' ? payload.value : null, locale);
  let text: string;
  switch (payload.reason) {
    case 'escalate': {
      const ids = Array.isArray(payload.mention)
        ? payload.mention.filter((m): m is string => typeof m === 'string')
        : [];
      text = t.escalate(
        ids
          .filter((id) => /^[UWS][A-Z0-9]+$/.test(id))
          .map(mention)
          .join(' '),
        settings.escalateAfterMinutes,
      );
      break;
    }
    case 'snooze-over':
      text = t.snoozeOver(value);
      break;
    case 'reopened':
      text = t.reopened(value);
      break;
    default:
      text = t.renotify(value);
  }
  return { text, blocks: [section(text)] };
}
