import { type Locale, messages } from '../i18n/index.js';
import type { PageEvent } from '../paging/pager.js';
import type { Alert, AlertPage } from '../store/alert.js';
import { shownValue } from './blocks.js';

const SEVERITY_ORDER = ['critical', 'warning', 'info'] as const;

/** A page is plain text: the emphasis Slack's lines carry (`*60*`) is left out, names stay whole. */
const plain = (text: string) => text.replace(/[`*]/g, '');

/** Where an alert's Slack message is, as a link (Slack's archive address finds it in any workspace). */
export function slackLink(alert: Pick<Alert, 'channel' | 'messageTs'>): string | undefined {
  if (!alert.channel || !alert.messageTs) return undefined;
  return `https://slack.com/archives/${alert.channel}/p${alert.messageTs.replace('.', '')}`;
}

/**
 * One pager event for a message: for a trigger, a summary a phone can show (the cause's words when
 * the alert carries a diagnosed cause, else its rule, subject and value), the source, severity,
 * and the value, threshold, since and evidence (the last values) of each alert in the details.
 */
export function pageEvent(
  action: AlertPage['sent'],
  key: string,
  members: readonly Alert[],
  locale: Locale,
): PageEvent {
  const t = messages(locale).escalation;
  const firing = members.filter((a) => a.status === 'firing');
  const shown = firing.length ? firing : members;
  const lead = shown[0]!;
  const severity = SEVERITY_ORDER.find((s) => shown.some((a) => a.severity === s)) ?? 'info';
  const cause = lead.cause?.summary;
  const line = (a: Alert) =>
    `${a.rule} · ${a.subject}: ${t.valueLine(
      t.metric[a.metric] ?? a.metric,
      shownValue(a, a.value, locale),
      a.comparator,
      shownValue(a, a.threshold, locale),
    )}`;
  const summary =
    typeof cause === 'string' && cause !== ''
      ? cause
      : shown.length === 1
        ? `${t.severity[lead.severity] ?? lead.severity} ${line(lead)}`
        : t.page.groupSummary(shown.length, [...new Set(shown.map((a) => a.system))].join(', '), line(lead));
  const details: Record<string, string | number | null> = {
    value: lead.value,
    threshold: lead.threshold,
    since: lead.openedAt,
    evidence: lead.series.map((v) => (v === null ? '?' : String(v))).join(' '),
    alert: lead.id,
  };
  if (shown.length > 1) details.alerts = plain(shown.slice(0, 20).map(line).join('\n'));
  const host = members.find((a) => a.messageTs && a.channel);
  const href = host ? slackLink(host) : undefined;
  return {
    action,
    key,
    summary: plain(summary),
    source: lead.queue === undefined ? lead.system : `${lead.system}/${lead.queue}`,
    severity,
    details,
    ...(href ? { link: { href, text: t.page.linkText } } : {}),
  };
}
