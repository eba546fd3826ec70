import type { KnownBlock } from '@slack/types';
import { errorGroupKey } from '../backends/error-groups.js';
import { factsOfKind } from '../backends/kinds.js';
import type { DlqSample, FailedJob, SystemType } from '../backends/queue-backend.js';
import type { QueueContext } from '../config/queue-context.js';
import { type Locale, messages } from '../i18n/index.js';
import { ActionId, indexedActionId } from './action-ids.js';
import { formatAgo, formatNumber, formatUtc } from './format.js';
import {
  actions,
  button,
  context,
  errorLine,
  fitEscaped,
  header,
  inCode,
  inline,
  packSections,
  section,
} from './kit.js';
import { BUILDER_TEXT_BUDGET, SlackLimits } from './limits.js';
import type { Message } from './message.js';
import { queueContextLine } from './queue-context.js';
import { retryLoopLine } from './status.js';

/** What `/queue dlq` shows. */
export interface DlqView {
  system: string;
  type: SystemType;
  sample: DlqSample;
  /** The limit the user asked for (1..100). */
  limit: number;
  /** "Now" for the relative times; pass it to keep the builder pure (defaults to the clock). */
  generatedAt?: Date;
  /** Who owns the queue and its runbook, from the config. */
  context?: QueueContext;
  /** The system can retry: each error group gets a "Retry this group" button. */
  canRetry?: boolean;
}

/** From roomy to tight: the first level at which every job fits is used. */
const LEVELS = [
  { error: 300, name: 80 },
  { error: 160, name: 60 },
  { error: 100, name: 48 },
  { error: 60, name: 40 },
  { error: 32, name: 32 },
];
const MORE_COST = 300;

/** The `/queue dlq` message: total, top errors, the newest failures; never a job's data. */
export function dlqMessage(view: DlqView, locale: Locale): Message {
  const t = messages(locale).dlq;
  const now = view.generatedAt ?? new Date();
  const { sample } = view;
  const rawTarget = `${view.system}/${sample.queue}`;
  const total = formatNumber(sample.total, locale);

  const blocks: KnownBlock[] = [
    header(t.title(fitEscaped(rawTarget, 100), total)),
    context(t.shown(sample.jobs.length, total), t.updated(formatUtc(now, locale))),
  ];
  const owner = queueContextLine(view.context, locale);
  if (owner) blocks.push(context(owner));
  if (sample.topErrors.length > 0) {
    const groups = sample.topErrors.slice(0, 5);
    // The group's normalized form, and one real failure of it when that reads differently.
    const lines = groups.map((e) =>
      t.topError(
        formatNumber(e.count, locale),
        errorLine(e.error, 280) || t.noError,
        e.example && e.example !== e.error ? errorLine(e.example, 200) : undefined,
      ),
    );
    const heading = t.topErrors(formatNumber(sample.groupedOver, locale));
    if (!view.canRetry) blocks.push(section([heading, ...lines].join('\n')));
    else {
      // One section per group, its button beside it. The value is the queue and a key of the
      // group, never the error text: the retry finds the group again from the key.
      blocks.push(section(heading));
      groups.forEach((group, i) => {
        const value = `${errorGroupKey(group.error)}/${rawTarget}`;
        const fits = group.error !== '' && value.length <= SlackLimits.buttonValue;
        blocks.push(
          fits
            ? {
                ...section(lines[i]!),
                accessory: button(
                  messages(locale).filters.retryGroup,
                  indexedActionId(ActionId.DlqRetryGroup, i),
                  value,
                ),
              }
            : section(lines[i]!),
        );
      });
    }
  }

  if (sample.retrying && sample.retrying.retrying > 0)
    blocks.push(section(retryLoopLine(sample.retrying, locale)));

  const refreshValue = rawTarget.length <= SlackLimits.buttonValue ? rawTarget : '';
  const tail = actions([button(t.refresh, ActionId.DlqRefresh, refreshValue)]);

  if (sample.jobs.length === 0) {
    blocks.push(section(t.empty(inCode(rawTarget, 200))), tail);
    return { text: t.fallback(inline(rawTarget, 200), total), blocks };
  }

  const budget = BUILDER_TEXT_BUDGET - JSON.stringify(blocks).length - 200;
  let lines: string[] = [];
  for (const level of LEVELS) {
    lines = sample.jobs.map((job, i) => jobLine(job, sample.jobs[i - 1], level, now, locale));
    if (costOf(lines) <= budget) break;
  }
  let shown = lines.length;
  while (shown > 0 && costOf(lines.slice(0, shown)) + MORE_COST > budget && costOf(lines) > budget) shown--;

  const room = SlackLimits.messageBlocks - blocks.length - 2;
  const texts = packSections([t.jobsHeading, ...lines.slice(0, shown)]).slice(0, room);
  blocks.push(...texts.map(section));
  if (shown < lines.length) {
    blocks.push(context(t.moreJobs(lines.length - shown, inCode(t.moreHint(rawTarget, view.limit), 300))));
  }
  // One job in full (state, stack, flow) is one command away: BullMQ ids live in their queue, Celery's anywhere.
  const jobTarget = factsOfKind(view.type).jobIdsSystemWide ? view.system : rawTarget;
  blocks.push(context(t.jobHint(inCode(`/queue job ${jobTarget} ${sample.jobs[0]!.id}`, 300))));
  blocks.push(tail);
  return { text: t.fallback(inline(rawTarget, 200), total), blocks };
}

function jobLine(
  job: FailedJob,
  previous: FailedJob | undefined,
  level: { error: number; name: number },
  now: Date,
  locale: Locale,
): string {
  const t = messages(locale).dlq;
  const when =
    job.failedAt === null
      ? t.failedAtUnknown
      : `${formatAgo(job.failedAt, now, locale)} · ${formatUtc(job.failedAt, locale, false)}`;
  // Dead letters come in runs of one error; repeating it would crowd out the jobs themselves.
  const same =
    previous !== undefined && firstLine(previous.error) === firstLine(job.error) && job.error !== '';
  const error = same ? t.sameError : errorLine(job.error, level.error) || t.noError;
  return `\`${inCode(job.id, 64)}\` *${inline(job.name, level.name)}* · ${t.attempts(job.attempts)} · ${when}\n> ${error}`;
}

function costOf(lines: string[]): number {
  return lines.reduce((sum, l) => sum + l.length + 1, 0);
}

function firstLine(text: string): string {
  return (text.split(/\r?\n/, 1)[0] ?? '').trim();
}
