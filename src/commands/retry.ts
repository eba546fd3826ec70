import type { Executor } from '../approvals/service.js';
import { errorGroupKey, normalizeError } from '../backends/error-groups.js';
import { filterFromParams, filterWords } from '../backends/job-filter.js';
import {
  type QueueBackend,
  RETRY_MAX,
  type RetryPinned,
  type RetrySelection,
  type RetrySoFar,
} from '../backends/queue-backend.js';
import { askSystem } from '../backends/timeout.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import { scrubSecrets } from '../lib/scrub.js';
import { parseTarget, queueMissing, resolveTarget } from '../pipeline/parse.js';
import type { ActionDeps, CommandContext, CommandDefinition } from '../pipeline/types.js';
import { retryOutcome, retryTimeline } from '../verbs/retry.js';
import type { VerbFacts } from '../verbs.js';
import { actorOf, backendOfRequest, requestReply, requireApprovals } from './actions.js';
import { parseFilterFlags } from './filters.js';

export const retryFacts = {
  verb: 'retry',
  order: 90,
  mutating: true,
  describe: (locale) => messages(locale).actions.retry,
  policy: 'retry',
  outcome: retryOutcome,
  timelineOutcome: retryTimeline,
} satisfies VerbFacts;

/**
 * The error group `--group` names: a key `dlq`'s button sent (found again among the queue's
 * current groups; a group that is gone says so), or the group's text as `dlq` shows it.
 */
async function groupOf(
  ctx: CommandContext,
  system: string,
  backend: QueueBackend,
  queue: string,
  asked: string,
  gone: string,
): Promise<string> {
  if (!GROUP_KEY.test(asked)) return normalizeError(asked);
  const sample = await askSystem(ctx, system, backend.dlq(queue, 1));
  const group = sample.topErrors.find((e) => errorGroupKey(e.error) === asked);
  if (!group || group.error === '') throw new OpsError(ErrorCode.BadArgument, { message: gone });
  return group.error;
}

/** What dlq's "Retry this group" button sends: a short hash of the group, never its text. */
const GROUP_KEY = /^[0-9a-f]{12}$/;

/** The previewed ids back from a stored request, checked as data; undefined for a request stored before they were kept. */
function pinnedFromParams(params: Record<string, unknown>): RetryPinned | undefined {
  const { jobIds, previewedAt } = params;
  if (jobIds === undefined) return undefined;
  if (
    !Array.isArray(jobIds) ||
    jobIds.length > RETRY_MAX ||
    !jobIds.every((id) => typeof id === 'string' && id !== '' && id.length <= 256) ||
    typeof previewedAt !== 'number' ||
    !Number.isFinite(previewedAt)
  )
    throw new Error('retry: bad previewed ids');
  return { ids: jobIds as string[], since: previewedAt };
}

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
  ...retryFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale);
    const usage = t.actions.retry.usage;
    // Flags first (they need no Redis); the words left are `<target> <id|all> [limit]`.
    const flags = parseFilterFlags(args.slice(1), request.locale, { group: true });
    const words = args.length > 0 ? [args[0]!, ...flags.words] : [];
    if (words.length < 2 || words.length > 3)
      throw new OpsError(ErrorCode.UsageError, {
        message:
          words.length > 3
            ? t.actions.tooMany
            : words.length === 0
              ? t.actions.needsTarget
              : t.actions.retryNeedsWhat,
        usage,
      });
    const target = parseTarget(words[0]!);
    if (target.queue === undefined)
      throw await queueMissing(ctx, target.system, t.actions.needsTarget, usage);
    const selection = parseRetrySelection(words.slice(1), request.locale);
    if ((flags.filter || flags.group) && 'jobId' in selection)
      throw new OpsError(ErrorCode.BadArgument, { message: t.filters.onlyAll, usage });
    if (flags.group && flags.filter?.error !== undefined)
      throw new OpsError(ErrorCode.BadArgument, { message: t.filters.groupAndError, usage });
    const approvals = requireApprovals(ctx);
    const { system, backend, queue } = await askSystem(ctx, target.system, resolveTarget(ctx, target));
    if (!backend.retry || !backend.previewRetry)
      throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'retry' });
    const name = `${system}/${queue}`;
    let filter = flags.filter;
    if (flags.group) {
      const group = await groupOf(ctx, system, backend, queue!, flags.group, t.filters.groupGone(name));
      if (group === '') throw new OpsError(ErrorCode.BadArgument, { message: t.filters.badGroup, usage });
      filter = { ...filter, group };
    }
    if (filter && 'all' in selection) selection.filter = filter;
    const preview = await askSystem(ctx, system, backend.previewRetry(queue!, selection));
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
      // Ids only. An `all` keeps the ids its preview showed: what is approved is what runs, at most
      // those, and only those still failed then. The filter says what it was about, and counts
      // the matching failures that arrive after this preview (left for a request of their own).
      params: {
        system,
        queue,
        ...('jobId' in selection
          ? { jobId: selection.jobId }
          : {
              limit: heldToOne ? 1 : selection.limit,
              ...(preview.ids
                ? {
                    jobIds: preview.ids.slice(0, heldToOne ? 1 : selection.limit),
                    previewedAt: preview.newestAt ?? 0,
                  }
                : {}),
            }),
        ...(filter ? { filter } : {}),
      },
      ...(bulk ? { requiredApprovals: Math.max(policy.approvals, policy.bulkApprovals) } : {}),
      preview:
        t.approvals.previewRetry(
          name,
          preview.count,
          preview.failed,
          preview.topErrors.map((e) => ({
            error: previewError(e.error),
            count: e.count,
            ...(e.example !== undefined ? { example: previewError(e.example) } : {}),
          })),
          'jobId' in selection ? selection.jobId : undefined,
        ) +
        (filter
          ? t.filters.retryMatched(
              previewError(filterWords(filter)),
              preview.matched ?? preview.count,
              preview.count,
              preview.failed,
            )
          : '') +
        ('all' in selection ? t.approvals.previewExactly(heldToOne ? 1 : preview.count) : ''),
    });
    return requestReply(created, request, ctx);
  },
  action: { name: 'retry', execute: executeRetry },
};

/**
 * Runs an approved retry: the previewed ids read back from the store, those still failed; the
 * filter only counts what arrived after the preview. (A request stored before ids were kept
 * selects from the live queue, as it did then.)
 */
function pinnedOf(params: Record<string, unknown>): { pinned?: RetryPinned } {
  const pinned = pinnedFromParams(params);
  return pinned ? { pinned } : {};
}

async function executeRetry(
  request: Parameters<Executor>[0],
  run: Parameters<Executor>[1],
  deps: ActionDeps,
): Promise<Record<string, unknown>> {
  const { system, backend } = backendOfRequest(deps, request);
  const queue = String(request.params.queue);
  if (!backend.retry)
    throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'retry' });
  // The filter is data: checked again, and applied to the queue as it is now.
  const filter = filterFromParams(request.params.filter);
  const selection =
    typeof request.params.jobId === 'string'
      ? { jobId: request.params.jobId }
      : {
          all: true as const,
          limit: Number(request.params.limit),
          ...(filter ? { filter } : {}),
          ...pinnedOf(request.params),
        };
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
