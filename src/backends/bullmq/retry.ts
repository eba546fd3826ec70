import type { ChainableCommander, Redis } from 'ioredis';
import { ErrorCode, OpsError } from '../../errors.js';
import { groupErrors } from '../error-groups.js';
import { hasFilter, type JobFilter, jobMatches, nothingMatchesError } from '../job-filter.js';
import { execWithScripts } from '../lua.js';
import {
  outcomeSoFar,
  RETRY_MAX,
  type RetryOutcome,
  type RetryPreview,
  type RetryProgress,
  type RetrySelection,
} from '../queue-backend.js';
import { filterArgs, SELECT_MATCHING, walkMatching } from './filter-script.js';
import { majorOfVersion } from './pause.js';
import { RETRY_FAILED_BATCH, retryBatchKeys } from './retry-script.js';

/** What the retry needs from the backend that owns the connection. */
export interface BullmqRetryDeps {
  system: string;
  prefix: string;
  client: Redis;
  /** Sends a pipeline (one round trip, counted) and returns its replies. */
  exec(pipeline: ChainableCommander): Promise<[Error | null, unknown][]>;
  /**
   * Runs work against a connected client within the backend's deadline; `expired` is aborted
   * when the deadline answered the caller first (the work must not send anything more).
   */
  withRedis<T>(work: (expired: AbortSignal) => Promise<T>): Promise<T>;
  /** Throws `UnknownQueue` for a queue the system does not have. */
  resolveQueue(queue: string): Promise<void>;
  now?: () => number;
}

/**
 * Jobs per script call (retry-script.ts). One call holds Redis for the whole batch, about three
 * commands a job: 250 keep it well under a purge chunk's longest call (`npm run bench` prints both),
 * and 1,000 retries are four calls, with progress between them.
 */
export const RETRY_BATCH = 250;

/**
 * Batches sent before the oldest one's answer is back: the next is on its way while Redis runs
 * the one before, so Redis does not sit idle for a round trip between two batches. Each is still
 * its own script call, bounded as above, though the first two usually reach Redis in one read and
 * run back to back (another client waits for both: docs/benchmarks.md). More in flight would only
 * be more left unconfirmed when Redis goes away.
 */
export const RETRY_BATCHES_IN_FLIGHT = 2;

/** A batch sent to Redis and its answer to come. */
interface SentBatch {
  batch: string[];
  reply: Promise<[Error | null, unknown][]>;
}

/** The ids of the batches on their way (old id → id it runs under: the same for BullMQ). */
function unconfirmedOf(batches: readonly (readonly string[])[]): Record<string, string> | undefined {
  if (batches.length === 0) return undefined;
  const ids: Record<string, string> = {};
  for (const batch of batches) for (const id of batch) ids[id] = id;
  return ids;
}

/** Counts each batch that answers without an error; returns those that did not. */
async function tallyAnswered(sent: readonly SentBatch[], outcome: RetryOutcome): Promise<SentBatch[]> {
  const unanswered: SentBatch[] = [];
  for (const one of sent) {
    const [[error, reply]] = (await one.reply.catch(() => [[new Error('no answer'), null]])) as [
      [Error | null, unknown],
    ];
    if (error) unanswered.push(one);
    else tally(outcome, one.batch, reply as number[]);
  }
  return unanswered;
}

/** Counts a batch's answer (the 1-based positions of the ids the script left alone) into `outcome`. */
function tally(outcome: RetryOutcome, batch: readonly string[], left: readonly (number | string)[]): void {
  const leftAlone = new Set(left.map((position) => Number(position) - 1));
  batch.forEach((id, i) => {
    if (leftAlone.has(i)) {
      outcome.skipped++;
    } else {
      outcome.retried++;
      outcome.ids[id] = id;
    }
  });
}

function checkSelection(selection: RetrySelection): void {
  if (
    'all' in selection &&
    !(Number.isInteger(selection.limit) && selection.limit >= 1 && selection.limit <= RETRY_MAX)
  )
    throw new OpsError(ErrorCode.BadArgument, { value: String(selection.limit), valid: `1..${RETRY_MAX}` });
}

/** Jobs whose fields one pipeline reads when a filter is matched in the bot (`--group`, new failures). */
const MATCH_BATCH = 500;
/** Failures a "nothing matches" answer groups, to name the groups that are there. */
const GROUPS_OVER = 1000;

/** The reads of a retry: which failed jobs, their failure reasons, what failed since a preview. */
function createRetryReads(deps: BullmqRetryDeps) {
  const { client, prefix, exec } = deps;
  const keyOf = (queue: string, suffix: string) => `${prefix}:${queue}:${suffix}`;

  /**
   * The selected ids, newest failure first, the failed set's size and newest failure's time, and,
   * with a filter, how many failures it matches in all (a walk of the whole set, window by window,
   * in Redis: only matching ids come back, at most the limit). A `--group` is matched in the bot
   * (one normalizing function, error-groups.ts): the walk in Redis narrows by name and time, and
   * the failure reasons of what it found are read in pipelined batches.
   */
  async function select(
    queue: string,
    selection: RetrySelection,
  ): Promise<{ ids: string[]; failed: number; matched?: number; newestAt: number }> {
    const failedKey = keyOf(queue, 'failed');
    const filter = 'all' in selection && hasFilter(selection.filter) ? selection.filter : undefined;
    const head = client.pipeline();
    if ('jobId' in selection) head.zscore(failedKey, selection.jobId);
    else if (!filter) head.zrevrange(failedKey, 0, selection.limit - 1);
    else head.zcard(failedKey);
    head.zcard(failedKey);
    head.zrevrange(failedKey, 0, 0, 'WITHSCORES');
    const replies = await exec(head);
    for (const [error] of replies) if (error) throw error;
    const failed = Number(replies[1]![1]);
    const newestAt = Number((replies[2]![1] as string[])[1] ?? 0);
    const target = `${deps.system}/${queue}`;
    let ids: string[];
    let matched: number | undefined;
    if ('jobId' in selection) {
      if (replies[0]![1] === null) throw new OpsError(ErrorCode.UnknownJob, { target, id: selection.jobId });
      ids = [selection.jobId];
    } else if (filter) {
      const walked = await matching(queue, filter, selection.limit);
      ids = walked.ids;
      matched = walked.matched;
      if (ids.length === 0) throw await nothingMatches(queue, filter, failed);
    } else {
      ids = replies[0]![1] as string[];
      if (ids.length === 0) throw new OpsError(ErrorCode.NothingToRetry, { target });
    }
    return { ids, failed, newestAt, ...(matched !== undefined ? { matched } : {}) };
  }

  /** Runs one window of SELECT_MATCHING; each through `exec`, so a long walk keeps its deadline. */
  const runSelect = async (keys: string[], args: (string | number)[]) => {
    const [[error, reply]] = (await execWithScripts(
      client,
      [{ script: SELECT_MATCHING, keys, args }],
      exec,
    )) as [[Error | null, unknown]];
    if (error) throw error;
    return reply;
  };

  /** Every failure the filter matches, counted, and the newest `limit` of their ids. */
  async function matching(
    queue: string,
    filter: JobFilter,
    limit: number,
  ): Promise<{ ids: string[]; matched: number }> {
    const now = (deps.now ?? Date.now)();
    const { group, ...inRedis } = filter;
    const want = group === undefined ? limit : Number.MAX_SAFE_INTEGER;
    const walked = await walkMatching(
      runSelect,
      keyOf(queue, 'failed'),
      'zrev',
      keyOf(queue, ''),
      filterArgs(inRedis, now, 'finishedOn'),
      want,
    );
    if (group === undefined) return walked;
    const ids: string[] = [];
    let matched = 0;
    for (let start = 0; start < walked.ids.length; start += MATCH_BATCH) {
      const batch = walked.ids.slice(start, start + MATCH_BATCH);
      const reasons = await fieldOf(queue, batch, 'failedReason');
      batch.forEach((id, i) => {
        if (!jobMatches({ name: '', error: reasons[i] ?? '', at: null }, { group }, now)) return;
        matched++;
        if (ids.length < limit) ids.push(id);
      });
    }
    return { ids, matched };
  }

  /**
   * Failures that arrived after `since` (failed later than the preview's newest failure), match
   * the filter, and are not among `pinned`: what an approved retry left for another request.
   * Read in pages of the failed set's newest end, then their fields in pipelined batches.
   */
  async function newSince(queue: string, since: number, pinned: ReadonlySet<string>, filter?: JobFilter) {
    const failedKey = keyOf(queue, 'failed');
    const now = (deps.now ?? Date.now)();
    let count = 0;
    for (let offset = 0; ; offset += MATCH_BATCH) {
      const page = client.pipeline();
      page.zrevrangebyscore(failedKey, '+inf', `(${since}`, 'LIMIT', offset, MATCH_BATCH);
      const [[error, reply]] = (await exec(page)) as [[Error | null, unknown]];
      if (error) throw error;
      const ids = (reply as string[]).filter((id) => !pinned.has(id));
      if (ids.length > 0 && filter) {
        const fields = client.pipeline();
        for (const id of ids) fields.hmget(keyOf(queue, id), 'name', 'failedReason', 'finishedOn');
        const rows = await exec(fields);
        for (const [rowError, row] of rows) {
          if (rowError) throw rowError;
          const [name, reason, finishedOn] = row as (string | null)[];
          const at = finishedOn === null ? null : Number(finishedOn);
          if (jobMatches({ name: name ?? '', error: reason ?? '', at }, filter, now)) count++;
        }
      } else count += ids.length;
      if ((reply as string[]).length < MATCH_BATCH) return count;
    }
  }

  /**
   * `NothingMatches`: the queue has failures, none of which the filter matches. Names the error
   * groups that are there (over the newest failures), so the next try can pick one.
   */
  async function nothingMatches(queue: string, filter: JobFilter, failed: number): Promise<OpsError> {
    const target = `${deps.system}/${queue}`;
    if (failed === 0) return new OpsError(ErrorCode.NothingToRetry, { target });
    const [[error, reply]] = (await exec(
      client.pipeline().zrevrange(keyOf(queue, 'failed'), 0, GROUPS_OVER - 1),
    )) as [[Error | null, unknown]];
    if (error) throw error;
    const newest = reply as string[];
    const reasons = newest.length > 0 ? await fieldOf(queue, newest, 'failedReason') : [];
    return nothingMatchesError(target, filter, failed, groupErrors(reasons));
  }

  /** One field of each job hash, pipelined in one round trip. */
  async function fieldOf(queue: string, ids: string[], field: string): Promise<(string | null)[]> {
    const pipeline = client.pipeline();
    for (const id of ids) pipeline.hget(keyOf(queue, id), field);
    return (await exec(pipeline)).map(([error, value]) => {
      if (error) throw error;
      return value as string | null;
    });
  }

  return { select, newSince, fieldOf };
}

/**
 * Sends the ids to the batch script, RETRY_BATCHES_IN_FLIGHT batches on their way at a time,
 * counting each answer in order, and reports progress as it goes: what is on its way is reported
 * before it is on the wire.
 */
async function sendRetryBatches(
  deps: BullmqRetryDeps,
  queue: string,
  ids: readonly string[],
  major: string,
  expired: AbortSignal,
  progress: RetryProgress | undefined,
): Promise<RetryOutcome> {
  const { client, exec } = deps;
  const keys = retryBatchKeys(deps.prefix, queue);
  const base = `${deps.prefix}:${queue}:`;
  const outcome: RetryOutcome = { queue, retried: 0, ids: {}, skipped: 0 };
  const onTheirWay: SentBatch[] = [];
  const report = (sending: readonly string[][] = []) =>
    progress?.(
      outcome.retried + outcome.skipped,
      ids.length,
      outcomeSoFar(outcome, unconfirmedOf([...onTheirWay.map((sent) => sent.batch), ...sending])),
    );
  progress?.(0, ids.length, outcomeSoFar(outcome));
  let next = 0;
  const send = () => {
    // The user was told the retry stopped here: nothing more may be retried behind that.
    expired.throwIfAborted();
    const batch = ids.slice(next, next + RETRY_BATCH);
    next += batch.length;
    // Told before it is on the wire: a Redis lost from now on may have run it.
    report([batch]);
    const reply = execWithScripts(
      client,
      [{ script: RETRY_FAILED_BATCH, keys, args: [base, major, ...batch] }],
      exec,
    );
    // Awaited in order below; one failing meanwhile must not count as unhandled.
    reply.catch(() => undefined);
    onTheirWay.push({ batch, reply });
  };
  /** The oldest batch's answer counted, or the error it got instead. */
  const settleOldest = async () => {
    const [[error, reply]] = (await onTheirWay[0]!.reply) as [[Error | null, unknown]];
    if (error) throw error;
    tally(outcome, onTheirWay.shift()!.batch, reply as number[]);
  };
  try {
    while (next < ids.length && onTheirWay.length < RETRY_BATCHES_IN_FLIGHT) send();
    while (onTheirWay.length > 0) {
      await settleOldest();
      report();
      if (next < ids.length) send();
    }
  } catch (error) {
    // A batch sent behind the one that failed may have run all the same: what answers is
    // counted, what does not stays on its way, and the last report says so.
    const unanswered = await tallyAnswered(onTheirWay, outcome);
    onTheirWay.splice(0, onTheirWay.length, ...unanswered);
    report();
    throw error;
  }
  return outcome;
}

/**
 * Retry for BullMQ: which failed jobs (ZREVRANGE of the failed set bounded by the limit, newest
 * first, or one id checked with ZSCORE), then one script call per batch of them (retry-script.ts)
 * that does what BullMQ's own `reprocessJob` of the queue's major does id by id, in that order:
 * `Job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true })`. The job keeps
 * its id, data and options, leaves the failed set, and goes back to `wait` (or `prioritized` / the
 * 5.x `paused` list, as BullMQ decides) with `atm`/`ats` cleared, so it gets all its attempts
 * again. `Queue.retryJobs()` is not used: it takes the oldest first, keeps attempts, and ignores
 * priorities; its one-script-per-batch shape is what the batch script borrows.
 */
export function createBullmqRetry(deps: BullmqRetryDeps) {
  const { client, exec } = deps;
  const keyOf = (queue: string, suffix: string) => `${deps.prefix}:${queue}:${suffix}`;
  const { select, newSince, fieldOf } = createRetryReads(deps);

  return {
    async previewRetry(queue: string, selection: RetrySelection): Promise<RetryPreview> {
      checkSelection(selection);
      return await deps.withRedis(async () => {
        await deps.resolveQueue(queue);
        const { ids, failed, matched, newestAt } = await select(queue, selection);
        // Only the failure reason of each: never data, options or stack traces.
        const reasons = await fieldOf(queue, ids, 'failedReason');
        return {
          queue,
          count: ids.length,
          failed,
          ...(matched !== undefined ? { matched } : {}),
          ids,
          newestAt,
          topErrors: groupErrors(reasons),
        };
      });
    },

    async retry(queue: string, selection: RetrySelection, progress?: RetryProgress): Promise<RetryOutcome> {
      checkSelection(selection);
      return await deps.withRedis(async (expired) => {
        await deps.resolveQueue(queue);
        // An approved `all` runs the ids its preview showed, those still failed; a request stored
        // before ids were kept selects again, as it always did.
        const pinned = 'all' in selection ? selection.pinned : undefined;
        const ids = pinned ? pinned.ids : (await select(queue, selection)).ids;
        const [[versionError, version]] = (await exec(
          client.pipeline().hget(keyOf(queue, 'meta'), 'version'),
        )) as [[Error | null, unknown]];
        if (versionError) throw versionError;
        const major = String(majorOfVersion(version as string | null));
        const outcome = await sendRetryBatches(deps, queue, ids, major, expired, progress);
        if (pinned && 'all' in selection) {
          const filter = hasFilter(selection.filter) ? selection.filter : undefined;
          outcome.newSincePreview = await newSince(queue, pinned.since, new Set(pinned.ids), filter);
        }
        return outcome;
      });
    },
  };
}
