import type { KnownBlock } from '@slack/types';
import type {
  FailOutcome,
  LimitOutcome,
  RevokeOutcome,
  RunningWork,
  SystemType,
} from '../backends/queue-backend.js';
import { type Locale, messages } from '../i18n/index.js';
import type { GroupState, GroupType, RestartReport, ScaleReport, TargetChange } from '../scalers/types.js';
import { factsOfAction, type ResultReport } from '../verbs.js';
import { formatDuration, formatUtc } from './format.js';
import { context, header, inCode, inline, packSections, section, truncate } from './kit.js';
import { SlackLimits } from './limits.js';
import type { Message } from './message.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { limitOutcomeLine } from './queue-limits.js';
import { restartOutcome } from './restart.js';

/** One group in `workers`: its live state, or why it could not be read (not yet escaped). */
export type GroupView =
  | { ok: true; state: GroupState }
  | { ok: false; group: string; type: GroupType; error: string };

/** mrkdwn lines for the worker groups of one system, everything untrusted escaped. */
export function groupLines(groups: readonly GroupView[], locale: Locale): string[] {
  const t = messages(locale).scale;
  return groups.map((g) => {
    if (!g.ok) return t.groupError(inline(g.group, 80), t.typeLabel[g.type] ?? g.type, inline(g.error, 400));
    const s = g.state;
    let detail: string;
    if (s.type === 'kubernetes') {
      const target = s.targets[0];
      detail = t.kubeDetail(
        inCode(target?.name ?? '', 120),
        target?.desired ?? null,
        target?.current ?? null,
        target?.ready ?? null,
      );
    } else if (s.type === 'compose') {
      const target = s.targets[0];
      detail = t.composeDetail(inCode(target?.name ?? '', 80), target?.current ?? null);
    } else {
      const shown = s.targets
        .slice(0, 8)
        .map((w) => t.poolWorker(inCode(w.name, 80), w.current, w.autoscale));
      if (s.targets.length > 8) shown.push(messages(locale).workers.moreWorkers(s.targets.length - 8));
      detail = t.poolDetail(shown);
    }
    const owner = s.autoscaler
      ? t.ownedBy(s.autoscaler.kind, inCode(s.autoscaler.name, 80), s.autoscaler.min, s.autoscaler.max)
      : '';
    return t.groupLine(inline(s.group, 80), t.typeLabel[s.type] ?? s.type, detail, s.min, s.max) + owner;
  });
}

function changeText(change: TargetChange, type: GroupType, locale: Locale, withAnswer: boolean): string {
  const t = messages(locale).scale;
  const unit = t.units[type] ?? '';
  const parts = [
    change.autoscale
      ? t.autoscaleChange(
          change.name,
          change.autoscale.before,
          change.autoscale.after ?? change.autoscale.before,
        )
      : t.change(change.name, change.before, change.after, unit),
  ];
  if (withAnswer && change.answer) parts.push(t.answered(change.answer));
  return parts.join(' ');
}

/** The one-line preview of a scale (plain text; the request message escapes it). */
export function scalePreview(plan: ScaleReport, locale: Locale): string {
  const t = messages(locale).scale;
  const target = `${plan.system}/${plan.group}`;
  const changes = plan.targets.map((c) => changeText(c, plan.type, locale, false));
  if (changes.length === 0) changes.push(t.noTargets(target));
  const note = plan.autoscaler
    ? t.autoscalerNote(
        plan.autoscaler.kind,
        plan.autoscaler.name,
        plan.autoscaler.before,
        plan.autoscaler.after,
      )
    : undefined;
  return t.previewScale(target, t.typeLabel[plan.type] ?? plan.type, changes, note);
}

/** What a scale really did, from the stored result (plain text). */
export function scaleOutcome(report: ScaleReport, locale: Locale): string {
  const t = messages(locale).scale;
  const changes = report.targets.map((c) => changeText(c, report.type, locale, true));
  const note = report.autoscaler
    ? t.resultAutoscaler(report.autoscaler.kind, report.autoscaler.name, report.autoscaler.after)
    : undefined;
  return t.resultScale(changes, note);
}

export function revokeOutcome(outcome: RevokeOutcome, locale: Locale): string {
  const t = messages(locale).scale;
  return t.resultRevoke(
    outcome.answers.map((a) => `${a.worker}: ${a.answer}`),
    outcome.stillRunning,
  );
}

export function failOutcome(outcome: FailOutcome, locale: Locale): string {
  return messages(locale).scale.resultFail(outcome.id, outcome.state, outcome.lockWasHeld);
}

/** Each report's outcome line, when the stored result has the report's shape. */
const REPORT_OUTCOMES: Record<
  ResultReport,
  (result: Record<string, unknown>, locale: Locale) => string | undefined
> = {
  scale: (result, locale) =>
    Array.isArray(result.targets) ? scaleOutcome(result as unknown as ScaleReport, locale) : undefined,
  restart: (result, locale) =>
    Array.isArray(result.targets) && result.comeBack
      ? restartOutcome(result as unknown as RestartReport, locale)
      : undefined,
  revoke: (result, locale) =>
    Array.isArray(result.answers) ? revokeOutcome(result as unknown as RevokeOutcome, locale) : undefined,
  fail: (result, locale) =>
    typeof result.state === 'string' ? failOutcome(result as unknown as FailOutcome, locale) : undefined,
  limit: (result, locale) =>
    typeof result.kind === 'string' ? limitOutcomeLine(result as unknown as LimitOutcome, locale) : undefined,
};

/**
 * The outcome line of a finished action whose descriptor names its result's report (scale,
 * restart, revoke, fail, rate-limit, concurrency), or undefined for any other action.
 */
export function actionOutcome(
  action: string,
  result: Record<string, unknown>,
  locale: Locale,
): string | undefined {
  const report = factsOfAction(action)?.report;
  return report === undefined ? undefined : REPORT_OUTCOMES[report](result, locale);
}

/** What `stuck` shows. */
export interface StuckView {
  system: string;
  type: SystemType;
  minutes: number;
  /** Longest first. */
  work: RunningWork[];
  generatedAt: Date;
}

const STUCK_SHOWN = 40;

export function stuckMessage(view: StuckView, locale: Locale): Message {
  const t = messages(locale).scale;
  const now = view.generatedAt.getTime();
  const lines = view.work
    .slice(0, STUCK_SHOWN)
    .map((w) =>
      t.stuckLine(
        inCode(w.id, 80),
        inline(w.name, 80),
        t.stuckWhere(
          w.queue === undefined ? undefined : inline(w.queue, 60),
          w.worker === undefined ? undefined : inline(w.worker, 80),
        ),
        w.startedAt === undefined ? null : formatDuration((now - w.startedAt) / 1000, locale),
        w.lockExpired === true,
      ),
    );
  if (view.work.length > STUCK_SHOWN) lines.push(t.stuckMore(view.work.length - STUCK_SHOWN));
  const blocks: KnownBlock[] = [
    header(t.stuckTitle(view.system, view.minutes)),
    context(messages(locale).workers.updated(formatUtc(view.generatedAt, locale))),
  ];
  if (lines.length === 0) blocks.push(section(t.stuckNone(view.minutes)));
  else
    blocks.push(
      ...packSections(lines)
        .slice(0, SlackLimits.messageBlocks - 3)
        .map(section),
    );
  // The hint's placeholders (`<queue>`, `<job-id>`) are text, not Slack's <link> syntax: escaped whole.
  blocks.push(context(escapeMrkdwn(t.stuckHint(truncate(view.system, 80).replace(/`/g, "'"), view.type))));
  return { text: t.stuckFallback(inline(view.system, 80), view.work.length), blocks };
}
