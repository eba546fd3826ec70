import { formatNumber, formatRate, formatUtc } from '../blocks/format.js';
import { context, header, inline, section } from '../blocks/kit.js';
import type { Message } from '../blocks/message.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { sparkline } from '../escalation/blocks.js';
import { trendFile } from '../escalation/render-chart.js';
import {
  bucketed,
  isRate,
  isTrendWindow,
  latestValues,
  loadTrend,
  TREND_STATES,
  type TrendData,
  type TrendWindow,
} from '../escalation/trend.js';
import { type Locale, messages } from '../i18n/index.js';
import { parseTarget, queueMissing, resolveSystem, resolveTarget } from '../pipeline/parse.js';
import type { CommandContext, CommandDefinition, ReplyFile, Request } from '../pipeline/types.js';
import { answerVisibility, type VerbFacts } from '../verbs.js';

export const trendFacts = {
  verb: 'trend',
  order: 320,
  mutating: false,
  answer: 'shared',
  timeline: 'look',
  describe: (locale) => messages(locale).trend.describe,
} satisfies VerbFacts;

/** Sparkline width: one character per 90 s of the default hour, readable in a terminal. */
const SPARK_WIDTH = 40;

export interface TrendArgs {
  target: string;
  window: TrendWindow;
  out?: string;
}

/** `<system>/<queue> [1h|6h|24h] [--out file.png]`, in any order after the target. */
export function parseTrendArgs(args: readonly string[], locale: Locale, via?: Request['via']): TrendArgs {
  const t = messages(locale).trend;
  // `--out` is the command line's: Slack's usage line does not offer it.
  const usage = via === 'cli' ? t.cliUsage : t.usage;
  const rest: string[] = [];
  let out: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    if (word === '--out' || word.startsWith('--out=')) {
      const value = word === '--out' ? args[++i] : word.slice('--out='.length);
      if (!value || value.startsWith('--'))
        throw new OpsError(ErrorCode.UsageError, { message: t.outNeedsPath, usage });
      out = value;
      continue;
    }
    rest.push(word);
  }
  const [target, windowText, extra] = rest;
  if (!target) throw new OpsError(ErrorCode.UsageError, { message: t.needsQueue, usage });
  if (extra !== undefined)
    throw new OpsError(ErrorCode.UsageError, {
      message: messages(locale).commands.tooManyArguments(extra),
      usage,
    });
  const window = windowText ?? '1h';
  if (!isTrendWindow(window))
    throw new OpsError(ErrorCode.BadArgument, { message: t.badWindow(window), valid: t.validWindow });
  return { target, window, ...(out === undefined ? {} : { out }) };
}

/**
 * Depths drawn from zero, not between their own min and max: an `active` that moves between 8
 * and 10 is a flat line, not a saw. All zeros is the lowest bar.
 */
function depthSparkline(values: readonly (number | null)[]): string {
  const known = values.filter((v): v is number => v !== null);
  if (known.length === 0) return '';
  if (Math.max(...known) === 0) return values.map((v) => (v === null ? '·' : '▁')).join('');
  return sparkline([0, ...values]).slice(1);
}

/** One sparkline per state with its latest value: the terminal's chart, and the Slack summary. */
export function trendLines(data: TrendData, locale: Locale): string[] {
  const t = messages(locale).trend;
  const latest = latestValues(data.points);
  return TREND_STATES.map((state) => {
    const spark = depthSparkline(bucketed(data, state, SPARK_WIDTH)) || '·'.repeat(SPARK_WIDTH);
    const value = latest[state];
    const shown =
      value === null ? t.unknown : isRate(state) ? formatRate(value, locale) : formatNumber(value, locale);
    return t.line(t.states[state], spark, shown);
  });
}

/**
 * What the rates are computed from, and why one is not known (a queue that keeps no finished
 * jobs shows `?`, never a 0 that would read as "nothing done").
 */
function rateNotes(data: TrendData, locale: Locale): string[] {
  const t = messages(locale).trend;
  const known = data.points.some((p) => TREND_STATES.some((s) => isRate(s) && p.values[s] !== null));
  const notes: string[] = [];
  const rates = data.rates;
  if (known && rates)
    notes.push(t.rates(t.rateSource[rates.source] + (rates.estimated ? t.rateEstimated : '')));
  for (const outcome of ['completed', 'failed'] as const) {
    const why = rates?.unknown[outcome];
    if (why) notes.push(messages(locale).throughput.rateUnknown[why](outcome));
  }
  if (notes.length === 0) notes.push(t.noRates);
  return notes;
}

export function trendMessage(data: TrendData, locale: Locale, note?: string): Message {
  const t = messages(locale).trend;
  const target = `${data.system}/${data.queue}`;
  const title = t.title(target, data.window);
  if (data.points.length === 0) {
    const text = t.noSamples(inline(target, 200), data.window);
    return { text, blocks: [section(text)] };
  }
  const notes = [
    t.samples(
      data.points.length,
      formatUtc(data.points[0]!.at, locale, false),
      formatUtc(data.points.at(-1)!.at, locale, false),
    ),
    ...rateNotes(data, locale),
  ];
  if (data.thresholds.length)
    notes.push(
      t.thresholds(
        data.thresholds
          .map((x) =>
            t.thresholdItem(
              inline(x.rule, 80),
              t.states[x.state],
              x.comparator,
              formatNumber(x.value, locale),
            ),
          )
          .join(', '),
      ),
    );
  if (data.alerts.length)
    notes.push(
      t.alerts(
        data.alerts
          .slice(-10)
          .map((a) =>
            t.alertItem(
              inline(a.id, 20),
              formatUtc(a.start, locale, false),
              a.end === undefined ? t.stillFiring : formatUtc(a.end, locale, false),
            ),
          )
          .join(', '),
      ),
    );
  if (note) notes.push(note);
  return {
    text: title,
    blocks: [
      header(title),
      // Sparklines are plain unicode; nothing from job data is in them.
      section(`\`\`\`${trendLines(data, locale).join('\n')}\`\`\``),
      context(...notes),
    ],
  };
}

/** `--json` data of `trend` (README). */
function trendData(data: TrendData, file: ReplyFile | undefined) {
  return {
    system: data.system,
    queue: data.queue,
    window: data.window,
    from: new Date(data.from).toISOString(),
    to: new Date(data.to).toISOString(),
    samples: data.points.length,
    latest: latestValues(data.points),
    rates: data.rates
      ? {
          source: data.rates.source,
          estimated: data.rates.estimated,
          unknown: {
            completed: data.rates.unknown.completed ?? null,
            failed: data.rates.unknown.failed ?? null,
          },
        }
      : null,
    thresholds: data.thresholds,
    alerts: data.alerts.map((a) => ({
      id: a.id,
      rule: a.rule,
      severity: a.severity,
      start: new Date(a.start).toISOString(),
      end: a.end === undefined ? null : new Date(a.end).toISOString(),
    })),
    file: file ? { filename: file.filename, bytes: file.content.length, saveAs: file.saveAs ?? null } : null,
  };
}

/**
 * The system and queue checked as `dlq` checks them. The chart itself is read from the store, so
 * a Redis that cannot be asked for its queue list (down, in an incident) does not stop it.
 */
async function knownQueue(ctx: CommandContext, system: string, queue: string) {
  try {
    return await resolveTarget(ctx, { system, queue });
  } catch (error) {
    if (isOpsError(error) && error.code === ErrorCode.RedisUnavailable) return resolveSystem(ctx, system);
    throw error;
  }
}

/**
 * `trend <system>/<queue> [1h|6h|24h]`: depth by state from the monitor's stored samples (no
 * Redis read). In Slack the chart is uploaded after the answer — into the queue's open alert
 * thread when the question was asked where that alert was posted; on the command line it is
 * written with `--out`, and the answer is sparklines.
 */
export const trendCommand: CommandDefinition = {
  ...trendFacts,
  async run(ctx, args, request: Request) {
    const t = messages(request.locale).trend;
    const parsed = parseTrendArgs(args, request.locale, request.via);
    if (parsed.out !== undefined && request.via !== 'cli')
      throw new OpsError(ErrorCode.BadArgument, { message: t.outOnlyCli, valid: t.describe.usage });
    const target = parseTarget(parsed.target);
    if (target.queue === undefined)
      throw await queueMissing(
        ctx,
        target.system,
        t.needsQueue,
        request.via === 'cli' ? t.cliUsage : t.usage,
      );
    const { system } = await knownQueue(ctx, target.system, target.queue);
    if (!ctx.alerts)
      throw new OpsError(ErrorCode.NotSupported, {
        system: 'queue-ops',
        type: 'read-only',
        what: t.needsStore,
      });
    const data = await loadTrend(
      ctx.alerts.trend,
      ctx.config.escalation.rules,
      { system, queue: target.queue, window: parsed.window },
      ctx.now().getTime(),
    );
    // The demo console writes the chart into its own directory and says where.
    const wantChart =
      data.points.length > 0 &&
      (request.via === 'slack' || request.via === 'console' || parsed.out !== undefined);
    let file: ReplyFile | undefined;
    let note: string | undefined;
    if (wantChart) {
      const rendered = await trendFile(data, request.locale);
      const thread =
        request.via === 'slack'
          ? (await ctx.alerts.open()).find(
              (a) =>
                a.system === system &&
                a.queue === target.queue &&
                a.messageTs &&
                a.channel === request.channel,
            )
          : undefined;
      file = {
        ...rendered,
        ...(thread?.messageTs ? { threadTs: thread.messageTs } : {}),
        ...(parsed.out !== undefined ? { saveAs: parsed.out } : {}),
      };
      if (request.via === 'slack') note = thread ? t.inThread : t.chartAttached;
    }
    return {
      ok: true,
      message: trendMessage(data, request.locale, note),
      data: trendData(data, file),
      visibility: answerVisibility(trendFacts),
      ...(file ? { files: [file] } : {}),
    };
  },
};
