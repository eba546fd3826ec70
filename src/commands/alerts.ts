import { askSystem } from '../backends/timeout.js';
import { formatUtc } from '../blocks/format.js';
import { context, header, inCode, inline, packSections, section } from '../blocks/kit.js';
import type { Message } from '../blocks/message.js';
import { escapeMrkdwn } from '../blocks/mrkdwn.js';
import { pageLines } from '../blocks/pages.js';
import { parseDuration } from '../config/duration.js';
import { ErrorCode, OpsError } from '../errors.js';
import { type AlertService, alertJson } from '../escalation/alerts.js';
import { shownValue, who } from '../escalation/blocks.js';
import { patternRegExp } from '../escalation/rules.js';
import { checkPattern, type SilencePattern, suggestQueuePattern } from '../escalation/silences.js';
import { type Locale, messages } from '../i18n/index.js';
import { suggest } from '../lib/suggest.js';
import type { CommandContext, CommandDefinition, Reply, Request } from '../pipeline/types.js';
import type { Alert, Silence } from '../store/alert.js';
import { answerVisibility, type VerbFacts } from '../verbs.js';

export const alertsFacts = {
  verb: 'alerts',
  order: 160,
  mutating: false,
  answer: 'shared',
  timeline: 'look',
  describe: (locale) => messages(locale).escalation.alerts,
} satisfies VerbFacts;

// Answering an alert storm must not stop at the eleventh alert.
export const ackFacts = {
  verb: 'ack',
  order: 170,
  mutating: true,
  rateLimited: false,
  requires: 'operator',
  timeline: 'alert.handled',
  describe: (locale) => messages(locale).escalation.ack,
} satisfies VerbFacts;

export const snoozeFacts = {
  verb: 'snooze',
  order: 180,
  mutating: true,
  rateLimited: false,
  requires: 'operator',
  timeline: 'alert.handled',
  describe: (locale) => messages(locale).escalation.snooze,
} satisfies VerbFacts;

// Pages a person now: an operator's call, at once, like `ack` (no `policies.page`).
export const pageFacts = {
  verb: 'page',
  order: 190,
  mutating: true,
  requires: 'operator',
  timeline: 'alert.handled',
  describe: (locale) => messages(locale).escalation.page,
} satisfies VerbFacts;

export const silenceFacts = {
  verb: 'silence',
  order: 200,
  mutating: true,
  requires: 'operator',
  timeline: 'alert.handled',
  describe: (locale) => messages(locale).escalation.silence,
} satisfies VerbFacts;

export const silencesFacts = {
  verb: 'silences',
  order: 210,
  mutating: false,
  describe: (locale) => messages(locale).escalation.silences,
} satisfies VerbFacts;

export const unsilenceFacts = {
  verb: 'unsilence',
  order: 220,
  mutating: true,
  requires: 'operator',
  timeline: 'alert.handled',
  describe: (locale) => messages(locale).escalation.unsilence,
} satisfies VerbFacts;

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

/** Lines `alerts` shows at most; the rest are counted ("N more"), never dropped silently. */
const MAX_LISTED = 40;
/** Characters of alert lines in one answer: its sections, header and context stay within Slack's. */
const LIST_TEXT_BUDGET = 7000;

/** Acknowledged, snoozed (still) or silenced: someone has it in hand. */
export function isHandled(alert: Alert, now: number): boolean {
  return (
    alert.ackedBy !== undefined ||
    alert.silencedBy !== undefined ||
    (alert.snoozedUntil !== undefined && Date.parse(alert.snoozedUntil) > now)
  );
}

const SEVERITY_ORDER: Record<string, number> = { critical: 0, warning: 1, info: 2 };

/**
 * The order `alerts` lists in, text and `--json` alike: unhandled first, then critical before
 * warning before info, then oldest first. At 3 a.m. the top line is what nobody has taken yet.
 */
export function listOrder(alerts: readonly Alert[], now: number): Alert[] {
  return [...alerts].sort(
    (a, b) =>
      Number(isHandled(a, now)) - Number(isHandled(b, now)) ||
      (SEVERITY_ORDER[a.severity] ?? 9) - (SEVERITY_ORDER[b.severity] ?? 9) ||
      (a.openedAt < b.openedAt ? -1 : a.openedAt > b.openedAt ? 1 : 0) ||
      (a.id < b.id ? -1 : 1),
  );
}

/** Who has the alert in hand, and how: acknowledged (by), snoozed (until), silenced (by which). */
function handledBy(alert: Alert, now: number, silences: ReadonlyMap<string, Silence>, locale: Locale) {
  const t = messages(locale).escalation.list;
  const states: string[] = [];
  if (alert.ackedBy !== undefined) states.push(t.acked(who(alert.ackedBy)));
  if (alert.snoozedUntil !== undefined && Date.parse(alert.snoozedUntil) > now)
    states.push(
      t.snoozed(
        formatUtc(Date.parse(alert.snoozedUntil), locale, false),
        alert.snoozedBy === undefined ? null : who(alert.snoozedBy),
      ),
    );
  if (alert.silencedBy !== undefined) {
    const silence = silences.get(alert.silencedBy);
    states.push(
      t.silenced(
        `\`${inCode(alert.silencedBy, 20)}\``,
        silence ? `\`${inCode(silence.pattern, 150)}\`` : null,
      ),
    );
  }
  return states.length > 0 ? states.join(' · ') : null;
}

/**
 * `alerts`: every open alert as one line, in {@link listOrder}, each saying who has it in hand.
 * Lines are whole (a section holds as many whole lines as fit, never one cut mid-date); what does
 * not fit, or is past {@link MAX_LISTED}, is counted and the answer says where to see it all.
 */
export function alertsListMessage(
  alerts: readonly Alert[],
  locale: Locale,
  options: { now?: Date; silences?: readonly Silence[] } = {},
): Message {
  const t = messages(locale).escalation;
  if (alerts.length === 0) return { text: t.list.none, blocks: [section(t.list.none)] };
  const now = (options.now ?? new Date()).getTime();
  const silences = new Map((options.silences ?? []).map((s) => [s.id, s]));
  const ordered = listOrder(alerts, now);
  const lines: string[] = [];
  let used = 0;
  for (const a of ordered) {
    if (lines.length >= MAX_LISTED) break;
    const line =
      t.list.line(
        inline(a.id, 20),
        t.severity[a.severity] ?? a.severity,
        inline(a.rule, 80),
        inline(a.subject, 150),
        shownValue(a, a.value, locale),
        formatUtc(Date.parse(a.openedAt), locale, false),
        handledBy(a, now, silences, locale),
      ) + pagedNote(a, locale);
    if (used + line.length + 1 > LIST_TEXT_BUDGET) break;
    used += line.length + 1;
    lines.push(line);
  }
  const left = ordered.slice(lines.length);
  const unhandled = ordered.filter((a) => !isHandled(a, now)).length;
  const notes = [t.list.unhandledCount(unhandled, ordered.length)];
  if (left.length > 0) notes.push(t.list.more(left.length, left.filter((a) => !isHandled(a, now)).length));
  return {
    text: `${t.list.title}: ${alerts.length}`,
    blocks: [
      header(t.list.title),
      ...packSections(lines).map(section),
      context(...notes),
      context(`\`${inCode(t.ack.usage, 200)}\``, `\`${inCode(t.snooze.usage, 200)}\``),
    ],
  };
}

/** Who was paged for an alert, when, and who acknowledged where: one clause of its line. */
export function pagedNote(alert: Alert, locale: Locale): string {
  const pages = pageLines(alert.pages ?? [], locale);
  return pages.length ? messages(locale).escalation.page.listPaged(pages.join('; ')) : '';
}

/** More words than the verb takes: a usage error naming the usage. */
function atMost(args: string[], max: number, usage: string, locale: Locale): void {
  if (args.length > max)
    throw new OpsError(ErrorCode.UsageError, { message: messages(locale).actions.tooMany, usage });
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
    data: { alert: alertJson(alert) },
    // The alert's own message shows the change for everyone; the answer is for the clicker.
    visibility: request.action ? 'ephemeral' : 'in_channel',
  };
}

/** `alerts`: open alerts, unhandled first, critical before warning, each saying who has it. */
export const alertsCommand: CommandDefinition = {
  ...alertsFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).escalation;
    atMost(args, 0, t.alerts.usage, request.locale);
    const service = requireAlerts(ctx);
    const [open, silences] = await Promise.all([service.open(), service.silences()]);
    const now = ctx.now();
    return {
      ok: true,
      message: alertsListMessage(open, request.locale, { now, silences }),
      // The same order as the text: unhandled first, critical before warning.
      data: { alerts: listOrder(open, now.getTime()).map(alertJson) },
      // The open alerts are the incident's, not the asker's: the channel sees the same list.
      visibility: answerVisibility(alertsFacts),
    };
  },
};

/** `ack <id>`: reminders and escalation stop; the alert's message says who. */
export const ackCommand: CommandDefinition = {
  ...ackFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).escalation;
    if (args[0]?.toLowerCase() === 'all') return await ackAll(ctx, args.slice(1), request);
    atMost(args, 1, t.ack.usage, request.locale);
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

/** `page <alert-id> [pager]`: pages the alert's message now, through one pager or every matching one. */
export const pageCommand: CommandDefinition = {
  ...pageFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).escalation.page;
    atMost(args, 2, t.usage, request.locale);
    const id = args[0];
    if (!id) throw new OpsError(ErrorCode.UsageError, { message: t.needsId, usage: t.usage });
    const { alert, paged, already } = await requireAlerts(ctx).page(id, args[1], request.actor.id);
    const names = (list: string[]) => list.map((n) => inline(n, 63)).join(', ');
    const lines = [
      ...(paged.length ? [t.done(inline(id, 20), names(paged))] : []),
      ...(already.length ? [t.already(inline(id, 20), names(already))] : []),
    ];
    const text = lines.join('\n');
    return {
      ok: true,
      message: { text, blocks: [section(text)] },
      data: { alert: alertJson(alert), paged, already },
      visibility: request.action ? 'ephemeral' : 'in_channel',
    };
  },
};

/** `snooze <id> <duration>`: no reminders or escalation until then. */
export const snoozeCommand: CommandDefinition = {
  ...snoozeFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).escalation;
    atMost(args, 2, t.snooze.usage, request.locale);
    const id = alertId(args, t.snooze.usage, request.locale);
    const text = args[1];
    if (text === undefined)
      throw new OpsError(ErrorCode.UsageError, { message: t.snooze.needsDuration, usage: t.snooze.usage });
    const ms = durationWithin(text, MAX_SNOOZE_MS, request.locale);
    const { alert } = await requireAlerts(ctx).snooze(id, request.actor.id, ms);
    const until = formatUtc(Date.parse(alert.snoozedUntil ?? ctx.now().toISOString()), request.locale, false);
    return oneLine(t.snooze.done(inline(id, 20), until), alert, ctx, request);
  },
};

/** A snooze's or a silence's duration in ms, or one line: not a duration, or over the maximum. */
function durationWithin(text: string, maxMs: number, locale: Locale): number {
  const t = messages(locale).escalation.snooze;
  const ms = parseDuration(text);
  if (ms === undefined || ms > maxMs)
    throw new OpsError(ErrorCode.BadArgument, {
      message: ms === undefined ? t.badDuration(inCode(text, 40)) : t.tooLong(inCode(text, 40)),
      valid: t.validDuration,
    });
  return ms;
}

/** Longest silence: past a week it is a rule to change in the config, not a silence. */
const MAX_SILENCE_MS = 7 * 86_400_000;

/** `--json` data of one silence (README: `silence`, `silences`, `unsilence`). */
export function silenceData(silence: Silence) {
  return {
    id: silence.id,
    pattern: silence.pattern,
    reason: silence.reason ?? null,
    createdBy: silence.createdBy,
    createdAt: silence.createdAt,
    expiresAt: silence.expiresAt,
    liftedBy: silence.liftedBy ?? null,
    liftedAt: silence.liftedAt ?? null,
  };
}

/** One silence as a line: id, pattern, until, who, why. Everything typed is escaped. */
export function silenceLine(silence: Silence, locale: Locale): string {
  return messages(locale).escalation.silence.line(
    inline(silence.id, 20),
    inline(silence.pattern, 150),
    formatUtc(Date.parse(silence.expiresAt), locale, false),
    who(silence.createdBy),
    silence.reason === undefined ? undefined : escapeMrkdwn(silence.reason.slice(0, 300)),
  );
}

const FORCE = '--force';

/**
 * Refuses a pattern whose queue part matches no queue of the systems it names, even after a
 * fresh discovery (a typo such as `pushizo/dispach-*` silenced nothing for an hour), with the
 * pattern most likely meant. A system whose Redis does not answer cannot be checked: the silence
 * is then let through (an outage is when silences are set). `--force` skips the check.
 */
async function requireMatchingQueue(
  ctx: CommandContext,
  pattern: SilencePattern,
  typed: string,
  locale: Locale,
): Promise<void> {
  if (pattern.queue === undefined || pattern.queue === '*') return;
  const systemMatches = patternRegExp(pattern.system);
  const systems = ctx.backends.names().filter((name) => systemMatches.test(name));
  const queues: string[] = [];
  for (const system of systems) {
    const backend = ctx.backends.get(system);
    if (!backend) continue;
    let names: string[];
    try {
      // The pattern is never a queue's name, so this looks afresh (at most once every few seconds).
      names = await askSystem(ctx, system, backend.listQueues([pattern.queue]));
    } catch {
      return;
    }
    if (names.some((queue) => patternRegExp(pattern.queue as string).test(queue))) return;
    queues.push(...names);
  }
  const t = messages(locale).escalation.silence;
  const likely = suggestQueuePattern(pattern.queue, queues);
  const prefix = typed.slice(0, typed.length - pattern.queue.length);
  throw new OpsError(ErrorCode.BadArgument, {
    message: t.noQueueMatches(
      inCode(typed, 150),
      systems.length === 1 ? inCode(systems[0] as string, 80) : undefined,
      likely === undefined ? undefined : inCode(`${prefix}${likely}`, 150),
    ),
    valid: t.forceHint,
  });
}

/** `silence <pattern> <duration> [--force] [reason]`: matching alerts notify nobody until then. */
export const silenceCommand: CommandDefinition = {
  ...silenceFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).escalation.silence;
    // `--force` (anywhere after the duration): silence queues that do not exist yet.
    const force = args.slice(2).includes(FORCE);
    const [pattern, duration, ...reasonWords] = args.filter((word, i) => i < 2 || word !== FORCE);
    if (pattern === undefined || duration === undefined)
      throw new OpsError(ErrorCode.UsageError, { message: t.needsPattern, usage: t.usage });
    const parsed = checkPattern(pattern, ctx.config, request.locale);
    const ms = durationWithin(duration, MAX_SILENCE_MS, request.locale);
    if (!force) await requireMatchingQueue(ctx, parsed, pattern, request.locale);
    const reason = reasonWords.join(' ').trim();
    const { silence, alerts } = await requireAlerts(ctx).silence(
      pattern,
      ms,
      request.actor.id,
      reason === '' ? undefined : reason,
    );
    const text = t.done(
      inline(silence.id, 20),
      inline(pattern, 150),
      formatUtc(Date.parse(silence.expiresAt), request.locale, false),
      alerts.length,
    );
    return {
      ok: true,
      message: { text, blocks: [section(text)] },
      data: { silence: silenceData(silence), silenced: alerts.map((a) => a.id) },
      audit: { silence: silence.id, count: alerts.length },
      visibility: 'in_channel',
    };
  },
};

/** `silences`: the silences in force. */
export const silencesCommand: CommandDefinition = {
  ...silencesFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).escalation.silences;
    atMost(args, 0, t.usage, request.locale);
    const silences = await requireAlerts(ctx).silences();
    const message: Message =
      silences.length === 0
        ? { text: t.none, blocks: [section(t.none)] }
        : {
            text: `${t.title}: ${silences.length}`,
            blocks: [
              header(t.title),
              section(
                silences
                  .slice(0, 40)
                  .map((s) => silenceLine(s, request.locale))
                  .join('\n'),
              ),
              context(`\`${inCode(messages(request.locale).escalation.unsilence.usage, 200)}\``),
            ],
          };
    return { ok: true, message, data: { silences: silences.map(silenceData) }, visibility: 'ephemeral' };
  },
};

/** `unsilence <id>`: lifts a silence; alerts it held notify again. */
export const unsilenceCommand: CommandDefinition = {
  ...unsilenceFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale).escalation.unsilence;
    atMost(args, 1, t.usage, request.locale);
    const id = args[0];
    if (!id) throw new OpsError(ErrorCode.UsageError, { message: t.needsId, usage: t.usage });
    const { silence, changed } = await requireAlerts(ctx).unsilence(id, request.actor.id);
    const text = changed ? t.done(inline(id, 20), inline(silence.pattern, 150)) : t.already(inline(id, 20));
    return {
      ok: true,
      message: { text, blocks: [section(text)] },
      data: { silence: silenceData(silence), changed },
      visibility: 'in_channel',
    };
  },
};

/** `ack all <system>`: every open, unacknowledged alert of the system in one step. */
async function ackAll(ctx: CommandContext, args: string[], request: Request): Promise<Reply> {
  const t = messages(request.locale).escalation.ackAll;
  atMost(args, 1, t.usage, request.locale);
  const system = args[0];
  if (!system) throw new OpsError(ErrorCode.UsageError, { message: t.needsSystem, usage: t.usage });
  const systems = ctx.config.systems.map((s) => s.name);
  if (!systems.includes(system))
    throw new OpsError(ErrorCode.UnknownSystem, {
      system,
      valid: systems,
      suggestion: suggest(system, systems),
    });
  const acked = await requireAlerts(ctx).ackAll(system, request.actor.id);
  const by = request.actor.name ?? request.actor.id;
  const text =
    acked.length === 0
      ? t.none(inline(system, 80))
      : t.done(acked.length, inline(system, 80), inline(by, 80));
  return {
    ok: true,
    message: { text, blocks: [section(text)] },
    data: { system, acked: acked.map(alertJson) },
    audit: { system, count: acked.length },
    visibility: 'in_channel',
  };
}
