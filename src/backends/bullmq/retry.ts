import type { ChainableCommander, Redis } from 'ioredis';
import { ErrorCode, OpsError } from '../../errors.js';
import { hasFilter } from '../job-filter.js';
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

function firstLine(text: string | null | undefined): string {
  const line = (text ?? '').split(/\r?\n/, 1)[0]!.trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function checkSelection(selection: RetrySelection): void {
  if (
    'all' in selection &&
    !(Number.isInteger(selection.limit) && selection.limit >= 1 && selection.limit <= RETRY_MAX)
  )
    throw new OpsError(ErrorCode.BadArgument, { value: String(selection.limit), valid: `1..${RETRY_MAX}` });
}

/** Errors grouped by first line, most frequent first, at most 5. */
export function groupErrors(reasons: Iterable<string>): { error: string; count: number }[] {
  const groups = new Map<string, number>();
  for (const reason of reasons) {
    const key = firstLine(reason);
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return [...groups]
    .map(([error, count]) => ({ error, count }))
    .sort((a, b) => b.count - a.count || a.error.localeCompare(b.error))
    .slice(0, 5);
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
  const { client, prefix, exec } = deps;
  const keyOf = (queue: string, suffix: string) => `${prefix}:${queue}:${suffix}`;

  /**
   * The selected ids, newest failure first, and (when `counted`) the failed set's size and, with a
   * filter, how many failures it matches in all (a walk of the whole set, window by window, in
   * Redis: only matching ids come back, at most the limit).
   */
  async function select(
    queue: string,
    selection: RetrySelection,
    counted = true,
  ): Promise<{ ids: string[]; failed: number; matched?: number; version: string | null }> {
    const failedKey = keyOf(queue, 'failed');
    const filter = 'all' in selection && hasFilter(selection.filter) ? selection.filter : undefined;
    const head = client.pipeline();
    head.hget(keyOf(queue, 'meta'), 'version');
    if ('jobId' in selection) head.zscore(failedKey, selection.jobId);
    else if (!filter) head.zrevrange(failedKey, 0, selection.limit - 1);
    else head.zcard(failedKey);
    // The failed set's size is for the preview only.
    if (counted) head.zcard(failedKey);
    const replies = await exec(head);
    for (const [error] of replies) if (error) throw error;
    const version = (replies[0]![1] as string | null) ?? null;
    const failed = counted ? Number(replies[2]![1]) : Number.NaN;
    const target = `${deps.system}/${queue}`;
    let ids: string[];
    let matched: number | undefined;
    if ('jobId' in selection) {
      if (replies[1]![1] === null) throw new OpsError(ErrorCode.UnknownJob, { target, id: selection.jobId });
      ids = [selection.jobId];
    } else if (filter) {
      // The preview counts every match; the retry itself stops once it has its limit.
      // Each window through `exec`: a reply proves Redis alive, so a long walk keeps its deadline.
      const runSelect = async (keys: string[], args: (string | number)[]) => {
        const [[error, reply]] = (await execWithScripts(
          client,
          [{ script: SELECT_MATCHING, keys, args }],
          exec,
        )) as [[Error | null, unknown]];
        if (error) throw error;
        return reply;
      };
      const walked = await walkMatching(
        runSelect,
        failedKey,
        'zrev',
        keyOf(queue, ''),
        filterArgs(filter, (deps.now ?? Date.now)(), 'finishedOn'),
        selection.limit,
        { stopAtWant: !counted },
      );
      ids = walked.ids;
      matched = walked.matched;
      if (ids.length === 0) throw new OpsError(ErrorCode.NothingToRetry, { target });
    } else {
      ids = replies[1]![1] as string[];
      if (ids.length === 0) throw new OpsError(ErrorCode.NothingToRetry, { target });
    }
    return { ids, failed, version, ...(matched !== undefined && counted ? { matched } : {}) };
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

  return {
    async previewRetry(queue: string, selection: RetrySelection): Promise<RetryPreview> {
      checkSelection(selection);
      return await deps.withRedis(async () => {
        await deps.resolveQueue(queue);
        const { ids, failed, matched } = await select(queue, selection);
        // Only the failure reason of each: never data, options or stack traces.
        const reasons = await fieldOf(queue, ids, 'failedReason');
        return {
          queue,
          count: ids.length,
          failed,
          ...(matched !== undefined ? { matched } : {}),
          topErrors: groupErrors(reasons.map((r) => r ?? '')),
        };
      });
    },

    async retry(queue: string, selection: RetrySelection, progress?: RetryProgress): Promise<RetryOutcome> {
      checkSelection(selection);
      return await deps.withRedis(async (expired) => {
        await deps.resolveQueue(queue);
        const { ids, version } = await select(queue, selection, false);
        const major = String(majorOfVersion(version));
        const keys = retryBatchKeys(deps.prefix, queue);
        const base = keyOf(queue, '');
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
      });
    },
  };
}
