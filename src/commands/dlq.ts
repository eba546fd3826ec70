import type { DlqSample, RetryLoops } from '../backends/queue-backend.js';
import { askSystem } from '../backends/timeout.js';
import { dlqMessage } from '../blocks/dlq.js';
import { type QueueContextData, queueContextData } from '../blocks/queue-context.js';
import { contextOfQueue, type QueueContext } from '../config/queue-context.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { scrubSecrets } from '../lib/scrub.js';
import { parseTarget, queueMissing, resolveTarget } from '../pipeline/parse.js';
import type { CommandContext, CommandDefinition, Reply, Request } from '../pipeline/types.js';
import { answerVisibility, type VerbFacts } from '../verbs.js';

export const dlqFacts = {
  verb: 'dlq',
  order: 20,
  mutating: false,
  answer: 'shared',
  timeline: 'look',
  readPath: true,
} satisfies VerbFacts;

export const DLQ_DEFAULT_LIMIT = 10;
export const DLQ_MAX_LIMIT = 100;

/** `--json` data of `dlq`, exactly as README documents it; `failedAt` is ISO 8601 UTC or null. */
export interface DlqData {
  system: string;
  queue: string;
  total: number;
  jobs: { id: string; name: string; error: string; attempts: number; failedAt: string | null }[];
  /** Error groups (normalized first lines), each with one real failure's first line as `example`. */
  topErrors: { error: string; count: number; example?: string }[];
  /** Who owns the queue and its runbook (`queues[].owner`…), null when the config names none. */
  context: QueueContextData | null;
  /** Celery: the queue's tasks in a retry loop, from a bounded sample of its messages' `retries` header. */
  retrying?: RetryLoops;
}

export function toDlqData(system: string, sample: DlqSample, context?: QueueContext): DlqData {
  return {
    system,
    queue: sample.queue,
    total: sample.total,
    jobs: sample.jobs.map((j) => ({
      id: j.id,
      name: j.name,
      // The same scrubbing as the message: `--json` output is pasted into tickets too.
      error: scrubSecrets(j.error),
      attempts: j.attempts,
      failedAt:
        j.failedAt === null || !Number.isFinite(j.failedAt) ? null : new Date(j.failedAt).toISOString(),
    })),
    topErrors: sample.topErrors.map((e) => ({
      error: scrubSecrets(e.error),
      count: e.count,
      ...(e.example !== undefined ? { example: scrubSecrets(e.example) } : {}),
    })),
    context: queueContextData(context),
    ...(sample.retrying ? { retrying: sample.retrying } : {}),
  };
}

/** `10` → 10; anything but a whole number in 1..100 is a `BadArgument` naming the range. */
export function parseLimit(text: string | undefined, locale: Request['locale']): number {
  if (text === undefined) return DLQ_DEFAULT_LIMIT;
  const t = messages(locale);
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(value) || value < 1 || value > DLQ_MAX_LIMIT) {
    throw new OpsError(ErrorCode.BadArgument, {
      message: t.commands.dlqLimitInvalid(text),
      value: text,
      valid: t.commands.dlqLimitRange(1, DLQ_MAX_LIMIT),
    });
  }
  return value;
}

/** `dlq <system>/<queue> [limit]`: the newest failures and the most frequent errors. */
export const dlqCommand: CommandDefinition = {
  ...dlqFacts,
  async run(ctx: CommandContext, args: string[], request: Request): Promise<Reply> {
    const t = messages(request.locale);
    const usage = t.commands.usage.dlq;
    if (args.length === 0)
      throw new OpsError(ErrorCode.UsageError, { message: t.commands.dlqNeedsQueue, usage });
    if (args.length > 2) {
      throw new OpsError(ErrorCode.UsageError, { message: t.commands.tooManyArguments(args[2]!), usage });
    }
    // The limit is checked first: it needs no Redis, and a typo there should not cost a round trip.
    const limit = parseLimit(args[1], request.locale);
    const target = parseTarget(args[0]!);
    if (target.queue === undefined)
      throw await queueMissing(ctx, target.system, t.commands.dlqNeedsQueue, usage);
    const { system, backend, queue } = await askSystem(ctx, target.system, resolveTarget(ctx, target));
    const sample = await askSystem(ctx, system, backend.dlq(queue!, limit));
    const context = contextOfQueue(ctx.config.systems, system, queue);
    return {
      ok: true,
      message: dlqMessage(
        {
          system,
          type: backend.type,
          sample,
          limit,
          generatedAt: ctx.now(),
          context,
          canRetry: backend.retry !== undefined,
        },
        request.locale,
      ),
      data: toDlqData(system, sample, context),
      visibility: answerVisibility(dlqFacts),
    };
  },
};
