import type { Executor } from '../approvals/service.js';
import { RETRY_MAX, type RetrySelection, type RetrySoFar } from '../backends/queue-backend.js';
import { askSystem } from '../backends/timeout.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import { scrubSecrets } from '../lib/logger.js';
import { parseTarget, queueMissing, resolveTarget } from '../pipeline/parse.js';
import type { ActionDeps, CommandDefinition } from '../pipeline/types.js';
import { actorOf, backendOfRequest, requestReply, requireApprovals } from './actions.js';

/** An error line in a preview: one line, credentials scrubbed, short enough for a confirm dialog. */
function previewError(error: string): string {
  const line = scrubSecrets(error.split(/\r?\n/, 1)[0] ?? '').trim();
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/**
 * `retry <id|all> [limit]` words → a selection. The limit is checked before anything else: it
 * needs no Redis, and a typo there should not cost a round trip.
 */
export function parseRetrySelection(words: readonly string[], locale: Locale): RetrySelection {
  const t = messages(locale).actions;
  const [what, limitText] = words;
  if (what === undefined || what === '')
    throw new OpsError(ErrorCode.UsageError, { message: t.retryNeedsWhat, usage: t.retry.usage });
  if (what.toLowerCase() !== 'all') {
    if (limitText !== undefined)
      throw new OpsError(ErrorCode.UsageError, { message: t.retryLimitOnlyAll, usage: t.retry.usage });
    return { jobId: what };
  }
  if (limitText === undefined) return { all: true, limit: RETRY_MAX };
  const limit = /^\d{1,7}$/.test(limitText) ? Number(limitText) : Number.NaN;
  if (!(limit >= 1 && limit <= RETRY_MAX))
    throw new OpsError(ErrorCode.BadArgument, {
      message: t.retryLimit(limitText),
      valid: t.retryLimitValid(RETRY_MAX),
    });
  return { all: true, limit };
}

/**
 * `retry <system>/<queue> <job-id|all> [limit]`: failed jobs run again, newest failure first, at
 * most 1000 per request. Goes through the `retry` policy, approval and audit like pause; the
 * preview (how many, which errors) is read from the live queue when it is asked.
 */
export const retryCommand: CommandDefinition = {
  verb: 'retry',
  mutating: true,
  describe: (locale) => messages(locale).actions.retry,
  async run(ctx, args, request) {
    const t = messages(request.locale);
    const usage = t.actions.retry.usage;
    if (args.length < 2 || args.length > 3)
      throw new OpsError(ErrorCode.UsageError, {
        message:
          args.length > 3
            ? t.actions.tooMany
            : args.length === 0
              ? t.actions.needsTarget
              : t.actions.retryNeedsWhat,
        usage,
      });
    const target = parseTarget(args[0]!);
    if (target.queue === undefined)
      throw await queueMissing(ctx, target.system, t.actions.needsTarget, usage);
    const selection = parseRetrySelection(args.slice(1), request.locale);
    const approvals = requireApprovals(ctx);
    const { system, backend, queue } = await askSystem(ctx, target.system, resolveTarget(ctx, target));
    if (!backend.caps.retry || !backend.retry || !backend.previewRetry)
      throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'retry' });
    const preview = await askSystem(ctx, system, backend.previewRetry(queue!, selection));
    const name = `${system}/${queue}`;
    // More than one job: `policies.retry.bulkApprovals` (1 by default). A retry of `all` that finds
    // one failure runs under `approvals`, and is then held to that one job (failures that arrive
    // in between wait for a request that gets the bulk approvals).
    const policy = ctx.config.policies.retry;
    const bulk = 'all' in selection && selection.limit > 1 && preview.count > 1;
    const heldToOne = 'all' in selection && !bulk && policy.bulkApprovals > policy.approvals;
    const created = await approvals.submit({
      actor: actorOf(request),
      action: 'retry',
      target: name,
      // Ids only: the executor reads everything else from the live queue when it runs.
      params: {
        system,
        queue,
        ...('jobId' in selection ? { jobId: selection.jobId } : { limit: heldToOne ? 1 : selection.limit }),
      },
      ...(bulk ? { requiredApprovals: Math.max(policy.approvals, policy.bulkApprovals) } : {}),
      preview: t.approvals.previewRetry(
        name,
        preview.count,
        preview.failed,
        preview.topErrors.map((e) => ({ error: previewError(e.error), count: e.count })),
        'jobId' in selection ? selection.jobId : undefined,
      ),
    });
    return requestReply(created, request, ctx);
  },
  action: { name: 'retry', execute: executeRetry },
};

/**
 * Runs an approved retry. The selection is read back from the stored ids; the jobs themselves are
 * read when it runs.
 */
async function executeRetry(
  request: Parameters<Executor>[0],
  run: Parameters<Executor>[1],
  deps: ActionDeps,
): Promise<Record<string, unknown>> {
  const { system, backend } = backendOfRequest(deps, request);
  const queue = String(request.params.queue);
  if (!backend.retry)
    throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'retry' });
  const selection =
    typeof request.params.jobId === 'string'
      ? { jobId: request.params.jobId }
      : { all: true as const, limit: Number(request.params.limit) };
  // Batches reported done so far: a Redis lost midway leaves those retried and the rest failed,
  // and the approver is told how far it got rather than only that Redis went away. What those
  // batches did, and the batch on its way, go into the audit entry as a finished retry's result
  // does: a Celery retry's new task ids are recorded nowhere else.
  let reached = { done: 0, total: 0 };
  let sofar: RetrySoFar | undefined;
  try {
    const outcome = await backend.retry(queue, selection, (done, total, now) => {
      sofar = now;
      // Told again as each batch is sent, with the same count: nothing new to show.
      if (done === reached.done && total === reached.total) return;
      reached = { done, total };
      run.progress({ done, total, phase: 'retrying' });
    });
    return { ...outcome };
  } catch (error) {
    if (!isOpsError(error) || error.code !== ErrorCode.RedisUnavailable) throw error;
    const partial = sofar && (reached.done > 0 || sofar.unconfirmed) ? { ...sofar } : undefined;
    if (reached.done === 0) throw partial ? new OpsError(error.code, error.params, partial) : error;
    throw new OpsError(
      ErrorCode.RetryInterrupted,
      { system, target: `${system}/${queue}`, reason: error.params.reason, ...reached },
      partial,
    );
  }
}
