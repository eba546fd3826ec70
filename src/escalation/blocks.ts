import type { KnownBlock } from '@slack/types';
import { ActionId, indexedActionId, jobRef } from '../blocks/action-ids.js';
import {
  formatDecimal,
  formatDuration,
  formatDurationCompact,
  formatNumber,
  formatUtc,
} from '../blocks/format.js';
import { jobCommand } from '../blocks/job.js';
import { actions, button, context, errorLine, header, inCode, inline, section } from '../blocks/kit.js';
import type { Message } from '../blocks/message.js';
import { escapeMrkdwn } from '../blocks/mrkdwn.js';
import { pageLines } from '../blocks/pages.js';
import { ownerMention, queueContextLine } from '../blocks/queue-context.js';
import { contextOfQueue, type QueueContext, type QueueEntry } from '../config/queue-context.js';
import type { CauseId } from '../diagnosis/types.js';
import { type Locale, messages } from '../i18n/index.js';
import type { AlertPage, Silence } from '../store/alert.js';
import { causeBlocks, causeButtons, causeSection } from './alert-cause.js';
import { ALERT_JOBS_LISTED, type AlertJobs } from './alert-jobs.js';
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

/** The bare number of an alert's value (or threshold): grouped, with the locale's decimals. */
function shownNumber(alert: Pick<Alert, 'metric'>, value: number | null, locale: Locale): string {
  const text = displayValue(alert.metric, value);
  // Counts get their thousands grouped; ratios and rates keep their decimals, written the
  // locale's way (0,85 in Turkish).
  if (/^-?\d+$/.test(text)) return formatNumber(Number(text), locale);
  const decimals = /^-?\d+\.(\d+)$/.exec(text)?.[1]?.length;
  return decimals === undefined ? text : formatDecimal(Number(text), decimals, locale);
}

/**
 * An alert's value (or threshold) as people read it, with its unit: "5,580 s (1h 33m)", "152
 * jobs", "90%". A bare "5,580" in an alert line left the reader to guess seconds or jobs.
 */
export function shownValue(alert: Pick<Alert, 'metric'>, value: number | null, locale: Locale): string {
  const u = messages(locale).escalation.valueUnits;
  if (value === null) return displayValue(alert.metric, value);
  switch (alert.metric) {
    case 'waiting':
    case 'active':
    case 'delayed':
    case 'failed':
    case 'failedIncrease':
      return u.jobs(shownNumber(alert, value, locale));
    case 'drainRate':
    case 'throughput':
    case 'failedPerMinute':
      return u.perMinute(shownNumber(alert, value, locale));
    case 'oldestWaitingSeconds':
    case 'waitP95Seconds':
    case 'runP95Seconds':
      return u.seconds(
        shownNumber(alert, value, locale),
        Number.isFinite(value) && value >= 60 ? formatDurationCompact(value, locale) : null,
      );
    case 'minutesToDrain':
      return u.minutes(shownNumber(alert, value, locale));
    case 'workers':
      return u.workers(shownNumber(alert, value, locale));
    case 'redisMemoryRatio':
      return u.percent(formatNumber(Math.round(value * 100), locale));
    case 'evictionPolicy':
    case 'persistenceFailing':
      // Flags: their label says what 1 means.
      return shownNumber(alert, value, locale);
    case 'workerChurn':
      return u.changes(shownNumber(alert, value, locale));
    default:
      return u.samples(shownNumber(alert, value, locale));
  }
}

/** The owner and runbook of an alert's queue, and whether its rule pages the owner (`mentionOwner`). */
export type AlertOwnerLookup = (
  alert: Pick<Alert, 'rule' | 'system' | 'queue'>,
) => { context: QueueContext; mention: boolean } | undefined;

/** The lookup over a config: each system's `queues` context, each rule's `mentionOwner`. */
export function alertOwnerLookup(config: {
  systems: readonly { name: string; queueContext?: readonly QueueEntry[] }[];
  escalation: { rules: readonly { name: string; mentionOwner?: boolean | undefined }[] };
}): AlertOwnerLookup {
  const mentioning = new Set(config.escalation.rules.filter((r) => r.mentionOwner).map((r) => r.name));
  return (alert) => {
    const context = contextOfQueue(config.systems, alert.system, alert.queue);
    return context ? { context, mention: mentioning.has(alert.rule) } : undefined;
  };
}

/** What an alert's message says of its queue's owner; the owner is mentioned only when the rule says so. */
function ownerLine(
  alert: Alert,
  ownerOf: AlertOwnerLookup | undefined,
  locale: Locale,
  keep: 'all' | 'ownerAndRunbook' | 'owner' = 'all',
): string | undefined {
  const found = ownerOf?.(alert);
  if (!found) return undefined;
  const { owner, runbook } = found.context;
  const context = keep === 'all' ? found.context : keep === 'owner' ? { owner } : { owner, runbook };
  return queueContextLine(context, locale, { mention: found.mention });
}

/** Metrics about a queue's failed jobs: their alert points on to one job (`/queue job`). */
const FAILURE_METRICS: ReadonlySet<string> = new Set(['failed', 'failedIncrease', 'failedPerMinute']);

/**
 * The jobs an alert is about, one line each with the command of its view (the buttons open it in
 * Slack); `max` of them. `compact` (a group past five alerts, where Slack's total text runs out):
 * their ids only, the buttons being the links. Undefined when there is nothing to say.
 */
function jobLines(
  alert: Alert,
  jobs: AlertJobs | undefined,
  locale: Locale,
  now: Date,
  max: number,
  compact = false,
) {
  const t = messages(locale).escalation.jobs;
  if (!jobs) return undefined;
  if (jobs.unread) return t.unread;
  if (jobs.jobs.length === 0) return t.none[jobs.kind];
  const shown = jobs.jobs.slice(0, max);
  if (compact)
    return `*${t.title[jobs.kind]}*: ${shown.map((job) => `\`${inCode(job.id, 64)}\``).join(', ')}`;
  const lines = shown.map((job) => {
    const detail =
      job.error !== undefined
        ? errorLine(job.error, 120)
        : job.startedAt !== undefined
          ? t.running(formatDuration(Math.max(0, now.getTime() - job.startedAt) / 1000, locale))
          : undefined;
    return t.line(
      inCode(job.id, 64),
      inline(job.name || '?', 60),
      detail || undefined,
      `\`${inCode(jobCommand(alert.subject, job.id), 200)}\``,
    );
  });
  return `*${t.title[jobs.kind]}*\n${lines.join('\n')}`;
}

/** One button per listed job, opening its view (`job`, through the same guards). */
function jobButtons(alert: Alert, jobs: AlertJobs | undefined, locale: Locale, max: number) {
  const t = messages(locale).escalation;
  return (jobs?.jobs ?? []).slice(0, max).flatMap((job, i) => {
    const ref = jobRef(alert.subject, job.id);
    return ref
      ? [button(t.buttons.job(job.id.slice(0, 40)), indexedActionId(ActionId.JobRefresh, i), ref)]
      : [];
  });
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
  settings: {
    clearAfterSamples: number;
    escalateTo: readonly string[];
    ownerOf?: AlertOwnerLookup;
    /** Some pager of `paging:` matches the alert: it gets a Page button. */
    canPage?: (alert: Alert) => boolean;
  },
  silence?: Silence,
  /** The jobs the alert is about (`readAlertJobs`), read as the message is sent. */
  jobs?: AlertJobs,
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
  if (alert.cause) blocks.push(...causeSection(alert.cause, locale));

  const facts = [
    t.firingSince(formatUtc(opened, locale, false), formatDuration((now.getTime() - opened) / 1000, locale)),
  ];
  facts.push(t.alertId(alert.id));
  blocks.push(context(...facts));
  const owner = ownerLine(alert, settings.ownerOf, locale);
  if (owner) blocks.push(context(owner));
  const listed =
    alert.queue === undefined ? undefined : jobLines(alert, jobs, locale, now, ALERT_JOBS_LISTED);
  if (listed) blocks.push(section(listed));
  if (alert.queue !== undefined && FAILURE_METRICS.has(alert.metric) && (!jobs || jobs.unread))
    blocks.push(
      context(messages(locale).queueContext.alertJobHint(inCode(jobCommand(alert.subject, '<id>'), 300))),
    );
  const states: string[] = [];
  if (alert.ackedBy) states.push(t.ackedBy(ackedWho(alert.ackedBy, alert.pages ?? [])));
  if (alert.snoozedUntil && isSnoozed(alert, now.getTime()))
    states.push(
      t.snoozedBy(who(alert.snoozedBy ?? '?'), formatUtc(Date.parse(alert.snoozedUntil), locale, false)),
    );
  if (alert.escalatedAt && settings.escalateTo.length)
    states.push(t.escalatedTo(settings.escalateTo.map(mention).join(' ')));
  if (silence) states.push(silenceNote(silence, locale));
  if (states.length) blocks.push(context(...states));
  const paging = pageLines(alert.pages ?? [], locale);
  if (paging.length) blocks.push(context(...paging));

  const buttons = alertButtons(alert, locale, jobs, ALERT_JOBS_LISTED, settings.canPage?.(alert) ?? false);
  // The cause's fixes and Why? follow the alert's own buttons, in the same row.
  blocks.push(
    alert.cause
      ? actions([
          ...(buttons.elements as Parameters<typeof actions>[0]),
          ...causeButtons(alert.cause, alert.system, alert.subject, locale),
        ])
      : buttons,
  );
  const paged = settings.ownerOf?.(alert);
  // The notification's own text carries the mention too, so the owner's phone says why.
  const text = t.fallback(severity, rule, subject, value);
  return {
    text: paged?.mention && paged.context.owner ? `${text} ${ownerMention(paged.context.owner)}` : text,
    blocks,
  };
}

/**
 * Who acknowledged, as a message says it: a PagerDuty acknowledgement by the name PagerDuty gave
 * (`pagerduty:<user id>` is kept on the alert, the name on its page), anyone else as `who`.
 */
export function ackedWho(ackedBy: string, pages: readonly AlertPage[]): string {
  if (!ackedBy.startsWith('pagerduty:')) return who(ackedBy);
  const name = pages.find((p) => p.acknowledgedBy === ackedBy)?.acknowledgedName;
  return `PagerDuty · ${inline(name ?? ackedBy.slice('pagerduty:'.length), 80)}`;
}

/** The per-alert buttons: Ack, Snooze, Page when a pager matches, for queues Show DLQ and Scale…, then one per listed job. */
function alertButtons(
  alert: Alert,
  locale: Locale,
  jobs: AlertJobs | undefined,
  maxJobs: number,
  canPage: boolean,
) {
  const t = messages(locale).escalation;
  const buttons = [
    button(t.buttons.ack, ActionId.AlertAck, alert.id, !alert.ackedBy),
    button(t.buttons.snooze30, ActionId.AlertSnooze30m, alert.id),
    button(t.buttons.snooze2h, ActionId.AlertSnooze2h, alert.id),
  ];
  if (canPage) buttons.push(button(t.page.button, ActionId.AlertPage, alert.id));
  if (alert.queue !== undefined) {
    // `system/queue` is an id; the commands behind these buttons check it and their own guards.
    buttons.push(button(t.buttons.dlq, ActionId.AlertDlq, alert.subject));
    buttons.push(button(t.buttons.scale, ActionId.AlertScale, alert.subject));
    buttons.push(...jobButtons(alert, jobs, locale, maxJobs));
  }
  return actions(buttons);
}

const SEVERITY_ORDER = ['critical', 'warning', 'info'] as const;

/** Resolved alerts a group message still names (the newest), so it stays short. */
const GROUP_RESOLVED_LINES = 5;

/** What a group's message is rendered with: the escalation's settings, owners and pagers. */
interface GroupSettings {
  clearAfterSamples: number;
  escalateTo: readonly string[];
  maxAlertsPerMessage: number;
  ownerOf?: AlertOwnerLookup;
  canPage?: (alert: Alert) => boolean;
}

/** What every line of one group message shares. */
interface GroupContext {
  members: readonly Alert[];
  firing: readonly Alert[];
  locale: Locale;
  now: Date;
  settings: GroupSettings;
  jobsOf: ReadonlyMap<string, AlertJobs>;
  /** How many jobs each alert lists: one past five alerts. */
  jobsShown: number;
}

/** A resolved alert of a group: what it was, how long it lasted, its worst value. */
function groupResolvedLine(a: Alert, locale: Locale): string {
  const lasted = formatDuration(
    (Date.parse(a.resolvedAt ?? a.updatedAt) - Date.parse(a.openedAt)) / 1000,
    locale,
  );
  return messages(locale).escalation.group.resolvedLine(
    inline(a.rule, 80),
    inline(a.subject, 150),
    lasted,
    shownValue(a, a.worst, locale),
  );
}

/** A firing alert of a group: its value and state, its owner and runbook, its jobs. */
function groupAlertLine(a: Alert, group: GroupContext): string {
  const { locale, now, settings } = group;
  const t = messages(locale).escalation;
  const parts = [
    t.group.alertLine(
      t.severity[a.severity] ?? a.severity,
      inline(a.rule, 80),
      inline(a.subject, 150),
      t.valueLine(
        t.metric[a.metric] ?? a.metric,
        shownValue(a, a.value, locale),
        a.comparator,
        shownValue(a, a.threshold, locale),
      ),
    ),
  ];
  const trend = sparkline(a.series);
  if (trend) parts.push(t.trend(trend));
  if (a.clearing > 0) parts.push(t.clearing(a.clearing, settings.clearAfterSamples));
  if (a.ackedBy)
    parts.push(
      t.ackedBy(
        ackedWho(
          a.ackedBy,
          group.members.flatMap((m) => m.pages ?? []),
        ),
      ),
    );
  if (a.snoozedUntil && isSnoozed(a, now.getTime()))
    parts.push(t.snoozedBy(who(a.snoozedBy ?? '?'), formatUtc(Date.parse(a.snoozedUntil), locale, false)));
  if (a.silencedBy) parts.push(t.group.silenced(inline(a.silencedBy, 20)));
  parts.push(t.alertId(a.id));
  // A group lists up to 20 alerts: each keeps its owner and runbook, only its owner past five,
  // and its jobs, only the first past five.
  const firingCount = group.firing.length;
  const owner = ownerLine(a, settings.ownerOf, locale, firingCount > 5 ? 'owner' : 'ownerAndRunbook');
  const listed =
    a.queue === undefined
      ? undefined
      : jobLines(a, group.jobsOf.get(a.id), locale, now, group.jobsShown, group.jobsShown === 1);
  return [parts.join(' · '), owner, listed].filter(Boolean).join('\n');
}

/** A storm: counted by cause, rule and system, a few named, the rest one command away. */
function stormBlocks(firing: readonly Alert[], systems: readonly string[], locale: Locale): KnownBlock[] {
  const t = messages(locale).escalation;
  const g = t.group;
  const counts = new Map<string, number>();
  for (const a of firing) counts.set(a.rule, (counts.get(a.rule) ?? 0) + 1);
  const bySystem = new Map<string, number>();
  for (const a of firing) bySystem.set(a.system, (bySystem.get(a.system) ?? 0) + 1);
  const byCause = new Map<string, number>();
  for (const a of firing) {
    const name = a.cause
      ? (messages(locale).why.cause[a.cause.id as CauseId] ?? a.cause.id)
      : t.cause.noCause;
    byCause.set(name, (byCause.get(name) ?? 0) + 1);
  }
  const named = firing.slice(0, 5).map((a) => `• ${inline(a.rule, 80)} · ${inline(a.subject, 150)}`);
  return [
    section(
      [
        g.summaryCauses([...byCause].map(([name, n]) => `${inline(name, 80)} ${n}`).join(', ')),
        g.summaryRules([...counts].map(([rule, n]) => `${inline(rule, 80)} ${n}`).join(', ')),
        g.summarySystems([...bySystem].map(([system, n]) => `${inline(system, 80)} ${n}`).join(', ')),
      ].join('\n'),
    ),
    section([...named, g.more(firing.length - named.length)].join('\n')),
    context(g.seeAlerts, ...systems.slice(0, 5).map((s) => g.ackAll(inCode(s, 80)))),
  ];
}

/** The owners the firing alerts' rules page (`mentionOwner`), at most ten, as mentions. */
function pagedOwners(firing: readonly Alert[], ownerOf: AlertOwnerLookup | undefined): string[] {
  return [
    ...new Set(
      firing.flatMap((a) => {
        const found = ownerOf?.(a);
        return found?.mention && found.context.owner ? [found.context.owner] : [];
      }),
    ),
  ]
    .slice(0, 10)
    .map(ownerMention);
}

/** The group message's notes: held posts, owners paged in a storm, silences, escalation, since when. */
function groupNotes(
  group: GroupContext,
  held: number,
  paged: readonly string[],
  silences: readonly Silence[],
): string[] {
  const { firing, locale, settings, now } = group;
  const t = messages(locale).escalation;
  const notes: string[] = [];
  if (held) notes.push(t.group.held(held));
  // A storm lists no alert in full: the owners are named here instead.
  if (firing.length > settings.maxAlertsPerMessage && paged.length > 0)
    notes.push(messages(locale).queueContext.owners(paged.join(' ')));
  for (const s of silences.slice(0, 3)) notes.push(silenceNote(s, locale));
  if (firing.some((a) => a.escalatedAt) && settings.escalateTo.length)
    notes.push(t.escalatedTo(settings.escalateTo.map(mention).join(' ')));
  const opened = Math.min(...firing.map((a) => Date.parse(a.openedAt)));
  if (Number.isFinite(opened))
    notes.push(
      t.firingSince(
        formatUtc(opened, locale, false),
        formatDuration((now.getTime() - opened) / 1000, locale),
      ),
    );
  return notes;
}

/**
 * The one message of a group of alerts (`escalation.groupBy`), as it stands: a header with the
 * worst severity and how many fire, then each firing alert on its own line with its own buttons
 * (Ack, Snooze, Show DLQ, Scale…); the ones that resolved meanwhile, checked off; the silences
 * that hold some of them. More than `maxAlerts` firing (a storm): a summary by rule and system
 * that points to `/queue alerts` and `/queue ack all`, without per-alert buttons. Once every alert
 * of the group has resolved: a resolved message without buttons.
 */
export function groupMessage(
  members: readonly Alert[],
  locale: Locale,
  now: Date,
  settings: GroupSettings,
  silences: readonly Silence[] = [],
  /** The jobs each firing alert is about, by alert id, read as the message is sent. */
  jobsOf: ReadonlyMap<string, AlertJobs> = new Map(),
): Message {
  const t = messages(locale).escalation;
  const g = t.group;
  const shown = members.filter((a) => !a.postHeld);
  const firing = shown.filter((a) => a.status === 'firing');
  const resolved = shown.filter((a) => a.status === 'resolved');
  const held = members.filter((a) => a.postHeld && a.status === 'firing');
  const systems = [...new Set(members.map((a) => a.system))];
  const where = systems.join(', ');
  const blocks: KnownBlock[] = [];
  const resolvedLines = () => resolved.slice(-GROUP_RESOLVED_LINES).map((a) => groupResolvedLine(a, locale));
  if (firing.length === 0 && held.length === 0) {
    blocks.push(header(`:white_check_mark: ${g.resolvedHeader(shown.length, where)}`));
    const lines = resolvedLines();
    if (lines.length) blocks.push(section(lines.join('\n')));
    return { text: g.resolvedFallback(shown.length, inline(where, 200)), blocks };
  }
  const worst = SEVERITY_ORDER.find((s) => firing.some((a) => a.severity === s)) ?? 'info';
  const severity = t.severity[worst] ?? worst;
  // Alerts one cause explains: the message leads with the cause, then lists them.
  const cause = sharedCause(firing);
  blocks.push(
    header(
      `${t.severityEmoji[worst] ?? ''} ${cause ? g.causeHeader(cause.summary) : g.header(severity, firing.length, where)}`,
    ),
  );
  if (cause) {
    blocks.push(context(g.header(severity, firing.length, inline(where, 200))));
    blocks.push(...causeBlocks(cause, systems[0]!, systems[0]!, locale));
  }
  const jobsShown = firing.length > 5 ? 1 : ALERT_JOBS_LISTED;
  const group: GroupContext = { members, firing, locale, now, settings, jobsOf, jobsShown };
  if (firing.length > settings.maxAlertsPerMessage) blocks.push(...stormBlocks(firing, systems, locale));
  else {
    for (const a of firing) {
      blocks.push(section(groupAlertLine(a, group)));
      blocks.push(alertButtons(a, locale, jobsOf.get(a.id), jobsShown, settings.canPage?.(a) ?? false));
    }
  }
  if (resolved.length) blocks.push(context(resolvedLines().join('\n')));
  const paged = pagedOwners(firing, settings.ownerOf);
  const notes = groupNotes(group, held.length, paged, silences);
  if (notes.length) blocks.push(context(...notes));
  const paging = pageLines(
    members.flatMap((m) => m.pages ?? []),
    locale,
  );
  if (paging.length) blocks.push(context(...paging));
  const text = g.fallback(severity, firing.length, inline(where, 200));
  return { text: paged.length > 0 ? `${text} ${paged.join(' ')}` : text, blocks };
}

/**
 * The cause every firing alert of a group carries (the same id, on one system), or undefined: a
 * group shares a cause only when `groupBy` put them together by it, or they happen to share it.
 */
function sharedCause(firing: readonly Alert[]): Alert['cause'] {
  const first = firing[0]?.cause;
  if (!first) return undefined;
  const same = firing.every((a) => a.cause?.id === first.id && a.system === firing[0]!.system);
  if (!same) return undefined;
  // The lead names the most queues the cause was seen to explain.
  return firing.reduce((best, a) => (a.cause!.queues > best.queues ? a.cause! : best), first);
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
  payload: { reason?: unknown; value?: unknown; mention?: unknown; pager?: unknown; error?: unknown },
  locale: Locale,
  settings: { escalateAfterMinutes: number },
): Message {
  const message = threadText(alert, payload, locale, settings);
  if (alert.groupId === undefined) return message;
  // A group's thread is shared: each reply says which alert it is about.
  const text = `${inline(alert.rule, 80)} · ${inline(alert.subject, 150)}: ${message.text}`;
  return { text, blocks: [section(text)] };
}

function threadText(
  alert: Alert,
  payload: { reason?: unknown; value?: unknown; mention?: unknown; pager?: unknown; error?: unknown },
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
    case 'page-refused':
      text = t.pageRefused(
        inline(String(payload.pager ?? '?'), 63),
        inline(String(payload.error ?? '?'), 150),
      );
      break;
    default:
      text = t.renotify(value);
  }
  return { text, blocks: [section(text)] };
}
