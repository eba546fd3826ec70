import {
  limitRefusal,
  type QueueBackend,
  type QueueLimits,
  type WorkerRateLimit,
} from '../backends/queue-backend.js';
import { askSystem } from '../backends/timeout.js';
import { formatUtc } from '../blocks/format.js';
import { describeLimit, describePrevious, formatLimitDuration } from '../blocks/queue-limits.js';
import { parseDuration } from '../config/duration.js';
import { ErrorCode, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import { type LimitKind, type LimitParams, restoreRates } from '../limits/service.js';
import { parseTarget, queueMissing, resolveSystem, resolveTarget } from '../pipeline/parse.js';
import type { CommandContext, CommandDefinition, Reply, Request } from '../pipeline/types.js';
import type { LimitRecord, LimitValue } from '../store/store.js';
import type { VerbFacts } from '../verbs.js';
import { actorOf, requestReply, requireApprovals } from './actions.js';

export const rateLimitFacts = {
  verb: 'rate-limit',
  order: 290,
  mutating: true,
  describe: (locale) => ({
    usage: messages(locale).limits.usage.rateLimit,
    summary: messages(locale).limits.summary.rateLimit,
  }),
  policy: 'rate-limit',
  report: 'limit',
} satisfies VerbFacts;

export const concurrencyFacts = {
  verb: 'concurrency',
  order: 300,
  mutating: true,
  describe: (locale) => ({
    usage: messages(locale).limits.usage.concurrency,
    summary: messages(locale).limits.summary.concurrency,
  }),
  policy: 'concurrency',
  report: 'limit',
} satisfies VerbFacts;

/** The longest `--for`: past a week a limit is a config change, not an incident measure. */
export const MAX_LIMIT_FOR_MS = 7 * 86_400_000;
/** BullMQ's global concurrency: at least one job at a time (0 would stop the queue; that is `pause`). */
export const MAX_CONCURRENCY = 10_000;
const MAX_RATE_JOBS = 1_000_000;
const MAX_RATE_WINDOW_MS = 86_400_000;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Celery rate: tasks per second (bare), `/s`, `/m` or `/h`; the number, then the unit. */
const CELERY_RATE = /^(\d{1,9}(?:\.\d{1,6})?)(?:\/([smh]))?$/;

/** A Celery rate as its `rate()` accepts it: tasks per second (bare), `/s`, `/m` or `/h`, above 0. */
export function parseCeleryRate(text: string): string | undefined {
  const match = CELERY_RATE.exec(text.trim().toLowerCase());
  if (!match || !(Number(match[1]) > 0)) return undefined;
  return match[0];
}

/**
 * A Celery rate `times` over: what `workers` workers allow in all, since each keeps to a task's
 * rate limit on its own (`10/m` on 3 workers is up to `30/m`). Decimals as Celery writes them.
 */
export function celeryRateTimes(rate: string, times: number): string | undefined {
  const match = CELERY_RATE.exec(rate);
  if (!match) return undefined;
  const total = Math.round(Number(match[1]) * times * 1e6) / 1e6;
  return `${total}/${match[2] ?? 's'}`;
}

/** `<max>/<duration>` for BullMQ: `100/1m`, `10/s`, `50/500ms` → max jobs per duration in ms. */
export function parseBullmqRate(text: string): { max: number; durationMs: number } | undefined {
  const match = /^(\d{1,7})\/(\d{0,8})(ms|s|m|h)$/.exec(text.trim().toLowerCase());
  if (!match) return undefined;
  const max = Number(match[1]);
  const durationMs = (match[2] === '' ? 1 : Number(match[2])) * UNIT_MS[match[3]!]!;
  if (max < 1 || max > MAX_RATE_JOBS || durationMs < 1 || durationMs > MAX_RATE_WINDOW_MS) return undefined;
  return { max, durationMs };
}

/** A whole number of jobs at once, 1..{@link MAX_CONCURRENCY}. */
export function parseConcurrency(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text.trim())) return undefined;
  const n = Number(text.trim());
  return n >= 1 && n <= MAX_CONCURRENCY ? n : undefined;
}

/** The words without `--for <duration>` (or `--for=<duration>`), and the duration. */
export function takeFor(
  args: readonly string[],
  usage: string,
  locale: Locale,
): { words: string[]; forMs?: number } {
  const t = messages(locale).limits;
  const words: string[] = [];
  let forMs: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--for' || arg.startsWith('--for=')) {
      const text = arg === '--for' ? args[++i] : arg.slice('--for='.length);
      const ms = text === undefined ? undefined : parseDuration(text);
      if (text === undefined || ms === undefined || ms > MAX_LIMIT_FOR_MS)
        throw new OpsError(ErrorCode.BadArgument, {
          message: t.forInvalid(text ?? '--for'),
          valid: t.forValid,
        });
      forMs = ms;
    } else if (arg.startsWith('-') && !/^-?\d/.test(arg))
      throw new OpsError(ErrorCode.UsageError, { message: messages(locale).scale.unknownFlag(arg), usage });
    else words.push(arg);
  }
  return forMs === undefined ? { words } : { words, forMs };
}

const isOff = (word: string) => word.toLowerCase() === 'off';

/** The limit queue-ops has in force on the target now, if any (its store; absent: none). */
async function activeLimit(
  ctx: CommandContext,
  system: string,
  target: string,
  kind: LimitKind,
): Promise<LimitRecord | undefined> {
  const limits = await ctx.store?.activeLimits?.(system);
  return limits?.find((l) => l.target === target && l.kind === kind);
}

/** `; lifted by itself at 14:30 UTC (after 30m)` and what it replaces, for the preview. */
function timing(forMs: number | undefined, active: LimitRecord | undefined, locale: Locale): string {
  const t = messages(locale).limits;
  let text = '';
  if (active?.expiresAt)
    text += t.previewUntilReplaced(formatUtc(Date.parse(active.expiresAt), locale, false));
  if (forMs !== undefined) text += t.previewFor(formatLimitDuration(forMs));
  return text;
}

async function submit(
  ctx: CommandContext,
  request: Request,
  params: LimitParams,
  preview: string,
): Promise<Reply> {
  const created = await requireApprovals(ctx).submit({
    actor: actorOf(request),
    action: params.kind,
    target: `${params.system}/${params.target}`.slice(0, 200),
    params: { ...params },
    preview,
  });
  return requestReply(created, request, ctx);
}

/** Celery: `rate-limit <system> <task> <rate|off>`; the preview names each worker and its rate now. */
async function celeryRateLimit(
  ctx: CommandContext,
  request: Request,
  system: string,
  backend: QueueBackend,
  words: string[],
  forMs: number | undefined,
): Promise<Reply> {
  const locale = request.locale;
  const t = messages(locale).limits;
  const usage = t.usage.rateLimit;
  const [, task, rateText, extra] = words;
  // `rate-limit zeus 100/m`: a rate where the task goes (task names have no `/`).
  if (
    task !== undefined &&
    rateText === undefined &&
    task.includes('/') &&
    parseCeleryRate(task) === undefined
  )
    throw new OpsError(ErrorCode.BadArgument, {
      message: t.celeryRateInvalid(task),
      valid: t.celeryRateValid,
    });
  if (task === undefined || rateText === undefined)
    throw new OpsError(ErrorCode.UsageError, {
      message: task === undefined ? t.needsTask : t.needsRate,
      usage,
    });
  if (extra !== undefined)
    throw new OpsError(ErrorCode.UsageError, {
      message: messages(locale).commands.tooManyArguments(extra),
      usage,
    });
  const value = isOff(rateText) ? null : parseCeleryRate(rateText);
  if (value === undefined)
    throw new OpsError(ErrorCode.BadArgument, {
      message: t.celeryRateInvalid(rateText),
      valid: t.celeryRateValid,
    });
  if (value === null && forMs !== undefined)
    throw new OpsError(ErrorCode.UsageError, { message: t.forWithOff, usage });
  requireApprovals(ctx);
  if (!backend.taskRateLimits)
    throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'rate-limit' });
  const [{ workers, tasks }, active] = await Promise.all([
    askSystem(ctx, system, backend.taskRateLimits(task)),
    activeLimit(ctx, system, task, 'rate-limit'),
  ]);
  if (workers.length === 0)
    throw new OpsError(ErrorCode.BadArgument, {
      message: t.unknownTask(system, task),
      valid: t.tasksValid(tasks),
    });
  let preview = t.previewCelery(system, task, value, workers);
  const inAll = value === null || workers.length < 2 ? undefined : celeryRateTimes(value, workers.length);
  if (inAll) preview += t.previewCeleryEach(inAll);
  if (value === null && active) {
    const back = restoreRates(workers, active.previous).map((w: WorkerRateLimit) =>
      t.restoreTo(w.worker, w.rate),
    );
    preview += t.previewCeleryRestore(back);
  }
  preview += timing(forMs, active, locale);
  return await submit(
    ctx,
    request,
    { system, kind: 'rate-limit', target: task, value, ...(forMs ? { forMs } : {}) },
    `${preview}.`,
  );
}

/** What a BullMQ queue has of one kind now, with the `until` queue-ops knows of. */
function bullmqNow(limits: QueueLimits, kind: LimitKind, locale: Locale): string {
  return describeLimit(kind, kind === 'concurrency' ? limits.concurrency : limits.rateLimit, locale);
}

/** BullMQ: `rate-limit <system>/<queue> <max>/<duration>|off` and `concurrency <system>/<queue> <n>|off`. */
async function bullmqLimit(
  ctx: CommandContext,
  request: Request,
  kind: LimitKind,
  system: string,
  backend: QueueBackend,
  queueWord: string,
  words: string[],
  forMs: number | undefined,
): Promise<Reply> {
  const locale = request.locale;
  const t = messages(locale).limits;
  const usage = kind === 'concurrency' ? t.usage.concurrency : t.usage.rateLimit;
  const [, valueText, extra] = words;
  if (valueText === undefined)
    throw new OpsError(ErrorCode.UsageError, {
      message: kind === 'concurrency' ? t.needsConcurrency : t.needsRate,
      usage,
    });
  if (extra !== undefined)
    throw new OpsError(ErrorCode.UsageError, {
      message: messages(locale).commands.tooManyArguments(extra),
      usage,
    });
  let value: LimitValue | null | undefined;
  if (isOff(valueText)) value = null;
  else if (kind === 'concurrency') value = parseConcurrency(valueText);
  else value = parseBullmqRate(valueText);
  if (value === undefined)
    throw new OpsError(
      ErrorCode.BadArgument,
      kind === 'concurrency'
        ? { message: t.concurrencyInvalid(valueText), valid: t.concurrencyValid }
        : { message: t.bullmqRateInvalid(valueText), valid: t.bullmqRateValid },
    );
  if (value === null && forMs !== undefined)
    throw new OpsError(ErrorCode.UsageError, { message: t.forWithOff, usage });
  requireApprovals(ctx);
  if (!backend.queueLimits)
    throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: kind });
  const { queue } = await askSystem(ctx, system, resolveTarget(ctx, parseTarget(queueWord)));
  const [limits, status, active] = await Promise.all([
    askSystem(ctx, system, backend.queueLimits(queue!)),
    askSystem(ctx, system, backend.status([queue!])),
    activeLimit(ctx, system, queue!, kind),
  ]);
  const refused = value === null ? undefined : limitRefusal(system, limits, kind);
  if (refused) throw refused;
  const target = `${system}/${queue}`;
  const now = bullmqNow(limits, kind, locale);
  if (value === null && now === t.none && !active)
    throw new OpsError(ErrorCode.BadArgument, { message: t.nothingToLift(target, t.kindName[kind] ?? kind) });
  let what: string;
  if (value === null) {
    const back = active ? describePrevious(kind, active.previous, locale) : t.none;
    what = kind === 'concurrency' ? t.liftConcurrency(back) : t.liftRate(back);
  } else if (typeof value === 'number') what = t.setConcurrency(value);
  else {
    const rate = value as { max: number; durationMs: number };
    what = t.setRate(rate.max, formatLimitDuration(rate.durationMs));
  }
  const consumers = status.workers.filter((w) => !w.queues || w.queues.includes(queue!)).length;
  const preview = `${t.previewBullmq(target, what, now, consumers, limits.version)}${timing(forMs, active, locale)}.`;
  return await submit(
    ctx,
    request,
    { system, kind, target: queue!, value, ...(forMs ? { forMs } : {}) },
    preview,
  );
}

function limitCommand(kind: LimitKind): CommandDefinition {
  return {
    ...(kind === 'concurrency' ? concurrencyFacts : rateLimitFacts),
    action: {
      name: kind,
      async execute(request, _run, deps) {
        if (!deps.limits)
          throw new OpsError(ErrorCode.NotSupported, { system: 'queue-ops', type: 'read-only', what: kind });
        return { ...(await deps.limits.execute(request)) };
      },
    },
    async run(ctx, args, request) {
      const t = messages(request.locale).limits;
      const usage = kind === 'concurrency' ? t.usage.concurrency : t.usage.rateLimit;
      const { words, forMs } = takeFor(args, usage, request.locale);
      const first = words[0];
      if (first === undefined)
        throw new OpsError(ErrorCode.UsageError, {
          message: messages(request.locale).commands.nameTarget,
          usage,
        });
      const target = parseTarget(first);
      const { system, backend } = resolveSystem(ctx, target.system);
      // A task's rate (Celery) names no queue, and a task has no concurrency.
      if (backend.facts.limitTarget === 'task') {
        if (kind === 'concurrency')
          throw new OpsError(ErrorCode.NotSupported, {
            system,
            type: backend.type,
            what: 'limit.concurrency.celery',
          });
        return await celeryRateLimit(ctx, request, system, backend, words, forMs);
      }
      if (target.queue === undefined) throw await queueMissing(ctx, system, t.needsQueue, usage);
      return await bullmqLimit(ctx, request, kind, system, backend, first, words, forMs);
    },
  };
}

/** `rate-limit`: a Celery task's rate on every worker, or a BullMQ queue's global rate limit. */
export const rateLimitCommand = limitCommand('rate-limit');
/** `concurrency`: a BullMQ queue's global concurrency. */
export const concurrencyCommand = limitCommand('concurrency');
