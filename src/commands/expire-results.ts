import type { ExecutionContext } from '../approvals/service.js';
import { askSystem } from '../backends/timeout.js';
import { formatNumber } from '../blocks/format.js';
import { parseDuration, ttlText } from '../config/duration.js';
import { ErrorCode, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import { resolveSystem } from '../pipeline/parse.js';
import type { ActionDeps, CommandDefinition } from '../pipeline/types.js';
import type { ActionRequest } from '../store/store.js';
import { expireResultsOutcome, expireResultsTimeline } from '../verbs/expire-results.js';
import type { VerbFacts } from '../verbs.js';
import { actorOf, backendOfRequest, requestReply, requireApprovals } from './actions.js';

export const expireResultsFacts = {
  verb: 'expire-results',
  order: 280,
  mutating: true,
  describe: (locale) => messages(locale).results.expire,
  policy: 'expire-results',
  progress: (locale) => messages(locale).purge.expiringVerb,
  outcome: expireResultsOutcome,
  timelineOutcome: expireResultsTimeline,
} satisfies VerbFacts;

/** The runbook's `expire … 86400`: a day, unless the command says otherwise. */
export const DEFAULT_RESULT_TTL_SECONDS = 86_400;
const MIN_TTL_SECONDS = 60;
const MAX_TTL_SECONDS = 365 * 86_400;
/** The preview's count gets this much of the system's deadline; beyond it, it says "at least". */
const PREVIEW_BUDGET_MS = 3_000;

/**
 * A TTL as typed (`30m`, `12h`, `1d`) or as stored (seconds, a number), in seconds within
 * 1m..365d. The executor calls it again on the stored value: a request is data, not a promise.
 */
export function resultTtlSeconds(value: string | number | undefined, locale: Locale): number {
  if (value === undefined) return DEFAULT_RESULT_TTL_SECONDS;
  const ms = typeof value === 'number' ? value * 1000 : parseDuration(value);
  const seconds = ms === undefined ? Number.NaN : Math.floor(ms / 1000);
  if (!(Number.isInteger(seconds) && seconds >= MIN_TTL_SECONDS && seconds <= MAX_TTL_SECONDS)) {
    const t = messages(locale).results;
    throw new OpsError(ErrorCode.BadArgument, { message: t.badTtl(String(value)), valid: t.ttlValid });
  }
  return seconds;
}

/**
 * `expire-results <system> [ttl]`: the runbook's EXPIRE loop over `KEYS "celery-task-meta-*"`,
 * without KEYS. The preview counts the result keys without a TTL (exactly, within its time
 * budget); once approved under `policies.expire-results`, each SCAN batch of the result backend
 * is one script that sets the TTL only on keys that still have none.
 */
export const expireResultsCommand: CommandDefinition = {
  ...expireResultsFacts,
  async run(ctx, args, request) {
    const t = messages(request.locale);
    const usage = t.results.expire.usage;
    if (args.length < 1 || args.length > 2)
      throw new OpsError(ErrorCode.UsageError, {
        message: args.length ? t.actions.tooMany : t.commands.nameTarget,
        usage,
      });
    const ttlSeconds = resultTtlSeconds(args[1], request.locale);
    const approvals = requireApprovals(ctx);
    const { system, backend } = resolveSystem(ctx, args[0]!.split('/', 1)[0]!);
    if (!backend.previewExpireResults || !backend.expireResults)
      throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'expire-results' });
    const preview = await askSystem(
      ctx,
      system,
      backend.previewExpireResults({ maxMillis: PREVIEW_BUDGET_MS }),
    );
    if (preview.complete && preview.withoutTtl === 0)
      throw new OpsError(ErrorCode.AlreadyInState, {
        target: `${system} results`,
        state: t.results.nothingToExpire,
      });
    const ttl = ttlText(ttlSeconds);
    const created = await approvals.submit({
      actor: actorOf(request),
      action: 'expire-results',
      target: system,
      params: { system, ttlSeconds, withoutTtl: preview.withoutTtl },
      preview: t.results.expirePreview(
        system,
        formatNumber(preview.withoutTtl, request.locale),
        preview.complete,
        ttl,
        formatNumber(preview.results, request.locale),
      ),
    });
    return requestReply(created, request, ctx);
  },
  action: { name: 'expire-results', execute: executeExpireResults },
};

/** Runs an approved request: the TTL read back from the store and checked again. */
async function executeExpireResults(
  request: ActionRequest,
  run: ExecutionContext,
  deps: ActionDeps,
): Promise<Record<string, unknown>> {
  const { system, backend } = backendOfRequest(deps, request);
  if (!backend.expireResults)
    throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'expire-results' });
  const ttlSeconds = resultTtlSeconds(Number(request.params.ttlSeconds), deps.config.locale);
  const outcome = await backend.expireResults(ttlSeconds, (done, total) =>
    run.progress({ done, total, phase: 'expiring' }),
  );
  return { system, ...outcome };
}
