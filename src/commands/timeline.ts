import {
  SLACK_TIMELINE_EVENTS,
  type TimelineView,
  timelineMarkdown,
  timelineMessage,
  verificationLine,
} from '../blocks/timeline.js';
import { parseDuration } from '../config/duration.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { CommandContext, CommandDefinition, Reply, Request } from '../pipeline/types.js';
import { mergeEvents } from '../timeline/events.js';
import type { VerbFacts } from '../verbs.js';
import { visibilityFor } from './visibility.js';

export const timelineFacts = {
  verb: 'timeline',
  order: 310,
  mutating: false,
  answer: 'own',
  timeline: 'look',
  describe: (locale) => messages(locale).timeline.describe,
} satisfies VerbFacts;

/** Audit entries read for one timeline at most; a longer span is narrowed with --since/--until. */
export const TIMELINE_MAX_ENTRIES = 5000;
/** Alerts read for one timeline at most. */
export const TIMELINE_MAX_ALERTS = 500;
const PAGE = 500;
const DEFAULT_SINCE_MS = 2 * 3_600_000;

/** `2h` (ago) or an ISO time → ISO; undefined when it is neither. */
export function parseWhen(text: string, now: Date): string | undefined {
  const ago = parseDuration(text);
  if (ago !== undefined) return new Date(now.getTime() - ago).toISOString();
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : new Date(at).toISOString();
}

interface TimelineArgs {
  since: string;
  until: string;
  system?: string;
}

function parseArgs(ctx: CommandContext, args: string[], request: Request): TimelineArgs {
  const t = messages(request.locale).timeline;
  const now = ctx.now();
  let since: string | undefined;
  let until: string | undefined;
  let system: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const flag = arg.startsWith('--') ? arg.split('=', 1)[0] : undefined;
    if (flag === '--since' || flag === '--until') {
      const value = arg.includes('=') ? arg.slice(flag.length + 1) : args[++i];
      if (!value)
        throw new OpsError(ErrorCode.BadArgument, { message: t.needsValue(flag), valid: t.timeValid });
      const at = parseWhen(value, now);
      if (!at)
        throw new OpsError(ErrorCode.BadArgument, { message: t.badTime(flag, value), valid: t.timeValid });
      if (flag === '--since') since = at;
      else until = at;
    } else if (arg.startsWith('-') || system !== undefined) {
      throw new OpsError(ErrorCode.BadArgument, { message: t.unknownFlag(arg), valid: t.flagsValid });
    } else {
      if (!ctx.backends.get(arg))
        throw new OpsError(ErrorCode.UnknownSystem, { system: arg, valid: ctx.backends.names() });
      system = arg;
    }
  }
  until ??= now.toISOString();
  since ??= new Date(Date.parse(until) - DEFAULT_SINCE_MS).toISOString();
  if (since >= until)
    throw new OpsError(ErrorCode.BadArgument, { message: t.badOrder(since, until), valid: t.orderValid });
  return { since, until, ...(system ? { system } : {}) };
}

/**
 * `timeline [--since 2h] [--until …] [system]`: the audit trail and the alert history of a span,
 * merged in time order, with the chain's verdict over it. Read-only.
 */
export const timelineCommand: CommandDefinition = {
  ...timelineFacts,
  async run(ctx, args, request): Promise<Reply> {
    const t = messages(request.locale);
    const audit = ctx.audit;
    const store = ctx.store;
    if (!audit || !store)
      throw new OpsError(ErrorCode.NotSupported, {
        system: 'queue-ops',
        type: 'read-only',
        what: t.actions.auditNeedsStore,
      });
    const span = parseArgs(ctx, args, request);
    const visibility = await visibilityFor(ctx, request);
    // Paged by seq: bounded reads, and the whole span unless it is larger than the cap.
    const entries = [];
    let afterSeq: number | undefined;
    let capped = false;
    for (;;) {
      const page = await store.listAudit({
        sinceAt: span.since,
        limit: PAGE,
        ...(afterSeq !== undefined ? { afterSeq } : {}),
        ...(visibility.all ? {} : { visibleIn: visibility.channel }),
      });
      const inSpan = page.filter((e) => e.at <= span.until);
      entries.push(...inSpan);
      if (page.length < PAGE || inSpan.length < page.length) break;
      if (entries.length >= TIMELINE_MAX_ENTRIES) {
        capped = true;
        break;
      }
      afterSeq = page[page.length - 1]?.seq;
    }
    const alerts = await store.escalation.listAlertsInSpan(span.since, span.until, TIMELINE_MAX_ALERTS);
    const events = mergeEvents(entries, alerts, span.since, span.until, span.system);
    // The whole chain is walked: a span is only as trustworthy as every entry before it.
    const report = await audit.verifyReport();
    const seqs = entries.map((e) => e.seq);
    const view: TimelineView = {
      ...span,
      events,
      capped,
      capLimit: TIMELINE_MAX_ENTRIES,
      verification: {
        result: report.result,
        ...(seqs.length > 0 ? { firstSeq: Math.min(...seqs), lastSeq: Math.max(...seqs) } : {}),
      },
    };
    const markdown = timelineMarkdown(view, request.locale);
    return {
      ok: true,
      message: timelineMessage(view, request.locale),
      terminal: markdown,
      // In Slack a long timeline comes whole as a Markdown file, and the message shows the first
      // events. The answer is ephemeral (an admin's holds entries from private channels), so the
      // file goes to the asker's direct messages, never the channel; the command line prints
      // the Markdown itself and saves nothing.
      ...(request.via === 'slack' && events.length > SLACK_TIMELINE_EVENTS
        ? {
            files: [
              {
                // `timeline-2026-12-01-0507.md`: the span's start, UTC.
                filename: `timeline-${span.since.slice(0, 16).replace('T', '-').replace(':', '')}.md`,
                title: messages(request.locale).timeline.fileTitle,
                content: Buffer.from(markdown),
                privateTo: request.actor.id,
              },
            ],
          }
        : {}),
      data: {
        since: span.since,
        until: span.until,
        ...(span.system ? { system: span.system } : {}),
        // `outcome` words the result for --json readers as before; the result itself (a retry's
        // id map can be a thousand ids) stays out.
        events: events.map((event) => {
          if (!('result' in event)) return event;
          const { result: _result, ...rest } = event;
          return rest;
        }),
        verification: {
          ...report.result,
          ...(seqs.length > 0
            ? { spanFirstSeq: view.verification.firstSeq, spanLastSeq: view.verification.lastSeq }
            : {}),
          text: verificationLine(view.verification, request.locale),
        },
      },
      visibility: 'ephemeral',
    };
  },
};
