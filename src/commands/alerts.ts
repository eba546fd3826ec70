import { formatUtc } from '../blocks/format.js';
import { context, header, inCode, inline, section } from '../blocks/kit.js';
import type { Message } from '../blocks/message.js';
import { ErrorCode, OpsError } from '../errors.js';
import type { AlertService } from '../escalation/alerts.js';
import { shownValue } from '../escalation/blocks.js';
import { parseDuration } from '../escalation/duration.js';
import { type Locale, messages } from '../i18n/index.js';
import type { Alert } from '../store/alert.js';
import type { CommandContext, CommandDefinition, Reply, Request } from './types.js';

/** Snoozes longer than this are a typo, or a wish to switch the rule off (change the config). */
const MAX_SNOOZE_MS = 7 * 86_400_000;

function requireAlerts(ctx: CommandContext): AlertService {
  if (!ctx.alerts)
    throw new OpsError(ErrorCode.NotSupported, {
      system: 'queue-ops',
      type: 'read-only',
      what: messages(ctx.config?.locale ?? 'en').escalation.needsStore,
    });
  return ctx.alerts;
}

/** `--json` data of one alert (README: `alerts`, `ack`, `snooze`). */
export function alertData(alert: Alert) {
  return {
    id: alert.id,
    rule: alert.rule,
    severity: alert.severity,
    subject: alert.subject,
    metric: alert.metric,
    value: alert.value,
    comparator: alert.comparator,
    threshold: alert.threshold,
    status: alert.status,
    openedAt: alert.openedAt,
    ...(alert.resolvedAt ? { resolvedAt: alert.resolvedAt } : {}),
    ackedBy: alert.ackedBy ?? null,
    snoozedUntil: alert.snoozedUntil ?? null,
    escalatedAt: alert.escalatedAt ?? null,
    messageTs: alert.messageTs ?? null,
  };
}

export function alertsListMessage(alerts: readonly Alert[], locale: Locale): Message {
  const t = messages(locale).escalation;
  if (alerts.length === 0) return { text: t.list.none, blocks: [section(t.list.none)] };
  const lines = alerts
    .slice(0, 40)
    .map((a) =>
      t.list.line(
        inline(a.id, 20),
        t.severity[a.severity] ?? a.severity,
        inline(a.rule, 80),
        inline(a.subject, 150),
        shownValue(a, a.value, locale),
        formatUtc(Date.parse(a.openedAt), locale, false),
      ),
    );
  return {
    text: `${t.list.title}: ${alerts.length}`,
    blocks: [
      header(t.list.title),
      section(lines.join('\n')),
      context(`\`${inCode(t.ack.usage, 200)}\``, `\`${inCode(t.snooze.usage, 200)}\``),
    ],
  };
}

function alertId(args: string[], usage: string, locale: Locale): string {
  const id = args[0];
  if (!id) throw new OpsError(ErrorCode.UsageError, { message: messages(locale).escalation.needsId, usage });
  return id;
}

function oneLine(text: string, alert: Alert, ctx: CommandContext, request: Request): Reply {
  void ctx;
  return {
    ok: true,
    message: { text, blocks: [section(text)] },
    data: { alert: alertData(alert) },
    // The alert's own message shows the change for everyone; the answer is for the clicker.
    visibility: request.action ? 'ephemeral' : 'in_channel',
  };
}

/** `alerts`: open alerts, oldest first. */
export const alertsCommand: CommandDefinition = {
  verb: 'alerts',
  mutating: false,
  describe: (locale) => messages(locale).escalation.alerts,
  async run(ctx, args, request) {
    const t = messages(request.locale).escalation;
    if (args.length > 0)
      throw new OpsError(ErrorCode.UsageError, {
        message: messages(request.locale).actions.tooMany,
        usage: t.alerts.usage,
      });
    const open = await requireAlerts(ctx).open();
    return {
      ok: true,
      message: alertsListMessage(open, request.locale),
      data: { alerts: open.map(alertData) },
      // The open alerts are the incident's, not the asker's: the channel sees the same list.
      visibility: 'in_channel',
    };
  },
};

/** `ack <id>`: reminders and escalation stop; the alert's message says who. */
export const ackCommand: CommandDefinition = {
  verb: 'ack',
  mutating: true,
  rateLimited: false,
  describe: (locale) => messages(locale).escalation.ack,
  async run(ctx, args, request) {
    const t = messages(request.locale).escalation;
    if (args.length > 1)
      throw new OpsError(ErrorCode.UsageError, {
        message: messages(request.locale).actions.tooMany,
        usage: t.ack.usage,
      });
    const id = alertId(args, t.ack.usage, request.locale);
    const { alert, changed } = await requireAlerts(ctx).ack(id, request.actor.id);
    const by = request.actor.name ?? request.actor.id;
    return oneLine(
      changed ? t.ack.done(inline(id, 20), inline(by, 80)) : t.ack.already(inline(id, 20)),
      alert,
      ctx,
      request,
    );
  },
};

/** `snooze <id> <duration>`: no reminders or escalation until then. */
export const snoozeCommand: CommandDefinition = {
  verb: 'snooze',
  mutating: true,
  rateLimited: false,
  describe: (locale) => messages(locale).escalation.snooze,
  async run(ctx, args, request) {
    const t = messages(request.locale).escalation;
    if (args.length > 2)
      throw new OpsError(ErrorCode.UsageError, {
        message: messages(request.locale).actions.tooMany,
        usage: t.snooze.usage,
      });
    const id = alertId(args, t.snooze.usage, request.locale);
    const text = args[1];
    if (text === undefined)
      throw new OpsError(ErrorCode.UsageError, { message: t.snooze.validDuration, usage: t.snooze.usage });
    const ms = parseDuration(text);
    if (ms === undefined || ms > MAX_SNOOZE_MS)
      throw new OpsError(ErrorCode.BadArgument, {
        message: t.snooze.badDuration(text),
        valid: t.snooze.validDuration,
      });
    const { alert } = await requireAlerts(ctx).snooze(id, request.actor.id, ms);
    const until = formatUtc(Date.parse(alert.snoozedUntil ?? ctx.now().toISOString()), request.locale, false);
    return oneLine(t.snooze.done(inline(id, 20), until), alert, ctx, request);
  },
};
