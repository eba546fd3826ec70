import type { Redis } from 'ioredis';
import { ErrorCode, OpsError } from '../../errors.js';
import { groupErrors } from '../error-groups.js';
import { hasFilter, type JobFilter, jobMatches, nothingMatchesError } from '../job-filter.js';
import { execWithScripts, luaScript, type PipelineStep } from '../lua.js';
import {
  outcomeSoFar,
  RETRY_MAX,
  type RetryOutcome,
  type RetryPreview,
  type RetryProgress,
  type RetrySelection,
} from '../queue-backend.js';
import { ensureConnected } from '../redis-client.js';
import { storedTask, taskEnvelope } from './envelope.js';
import { type FailureIndex, parseFailure } from './failures.js';
import { type KombuLayout, priorityListFor, RESULT_KEY_PREFIX, RETRIED_AS_FIELD } from './keys.js';

export interface CeleryRetryDeps {
  system: string;
  layout: KombuLayout;
  /** The broker, where messages are published. */
  client: Redis;
  /** The result backend (may be the broker's client). */
  resultClient: Redis;
  failures(): FailureIndex;
  resolveQueue(queue: string): Promise<void>;
  /** Turns a connection failure into `RedisUnavailable` for this system. */
  unavailable(error: unknown): OpsError;
  connectTimeoutMs: number;
}

/** Tasks per batch: one MGET of their stored results, then one pipeline of LPUSHes and marks. */
export const CELERY_RETRY_BATCH = 250;
/** `origin` of the messages queue-ops publishes, as Celery's `<pid>@<host>` names a producer. */
const ORIGIN = 'queue-ops';
/** Failures a "nothing matches" answer groups, to name the groups that are there. */
const GROUPS_OVER = 1000;

/**
 * Marks each stored FAILURE as retried, naming the new task id, unless it already is. The member
 * is appended to the JSON text (never re-encoded: cjson would rewrite the stored arguments), and
 * the key keeps its expiry. Plain EVAL, no shebang: it must run like Celery's own writes do.
 *
 * KEYS: result keys; ARGV: the new task id of each. Returns 1 per key marked, 0 if it was not.
 */
const MARK_RETRIED = luaScript(`
local out = {}
for i, key in ipairs(KEYS) do
  local value = redis.call('GET', key)
  out[i] = 0
  if type(value) == 'string' and string.sub(value, -1) == '}'
    and not string.find(value, '"${RETRIED_AS_FIELD}"', 1, true) then
    local marked = string.sub(value, 1, -2) .. ', "${RETRIED_AS_FIELD}": "' .. ARGV[i] .. '"}'
    local ttl = redis.call('PTTL', key)
    if ttl > 0 then
      redis.call('SET', key, marked, 'PX', ttl)
    else
      redis.call('SET', key, marked)
    end
    out[i] = 1
  end
end
return out`);

function checkSelection(selection: RetrySelection): void {
  if (
    'all' in selection &&
    !(Number.isInteger(selection.limit) && selection.limit >= 1 && selection.limit <= RETRY_MAX)
  )
    throw new OpsError(ErrorCode.BadArgument, { value: String(selection.limit), valid: `1..${RETRY_MAX}` });
}

async function indexReady(deps: CeleryRetryDeps): Promise<FailureIndex> {
  const index = deps.failures();
  try {
    await index.ready();
  } catch (error) {
    throw deps.unavailable(error);
  }
  return index;
}

/** Stored results, from the result backend. */
async function read(deps: CeleryRetryDeps, keys: string[]): Promise<(string | null)[]> {
  try {
    return await deps.resultClient.mget(...keys);
  } catch (error) {
    throw deps.unavailable(error);
  }
}

/**
 * Sends one batch and adds what it did to `outcome` once Redis confirmed it; `sending` is told
 * the old → new ids first, so a batch cut short by Redis is not lost track of.
 */
async function publishBatch(
  deps: CeleryRetryDeps,
  queue: string,
  ids: string[],
  outcome: RetryOutcome,
  sending: (ids: Record<string, string>) => void,
): Promise<void> {
  const raws = await read(
    deps,
    ids.map((id) => RESULT_KEY_PREFIX + id),
  );
  const sends: { oldId: string; newId: string; list: string; message: string }[] = [];
  let skipped = 0;
  raws.forEach((raw, i) => {
    const oldId = ids[i]!;
    const task = raw && parseFailure(oldId, raw, null) ? storedTask(raw) : undefined;
    // Gone (expired, deleted), retried meanwhile, or not this queue's: not ours to send.
    if (!task || task.queue !== queue) {
      skipped++;
      return;
    }
    const priority = task.priority ?? 0;
    const { id, message } = taskEnvelope(task, { origin: ORIGIN, priority });
    sends.push({ oldId, newId: id, list: priorityListFor(deps.layout, queue, priority), message });
  });
  if (sends.length === 0) {
    outcome.skipped += skipped;
    return;
  }
  sending(Object.fromEntries(sends.map((s) => [s.oldId, s.newId])));
  const mark = {
    script: MARK_RETRIED,
    keys: sends.map((s) => RESULT_KEY_PREFIX + s.oldId),
    args: sends.map((s) => s.newId),
  };
  await sendAndMark(deps, sends, mark);
  outcome.skipped += skipped;
  for (const send of sends) {
    outcome.ids[send.oldId] = send.newId;
    outcome.retried++;
  }
  deps.failures().forget(sends.map((s) => s.oldId));
}

/**
 * Publishes a batch's messages and marks their stored failures retried: one transaction on one
 * Redis, published first and marked after on two.
 */
async function sendAndMark(
  deps: CeleryRetryDeps,
  sends: readonly { list: string; message: string }[],
  mark: Extract<PipelineStep, { script: unknown }>,
): Promise<void> {
  const { client, resultClient } = deps;
  try {
    if (client === resultClient) {
      // One MULTI/EXEC: the messages and their marks are applied (and written to the AOF)
      // together or not at all. As a plain pipeline, a Redis killed between the LPUSHes and the
      // mark kept tasks sent but unmarked, and the next retry sent them a second time. The mark
      // goes by body: an EVALSHA answered NOSCRIPT inside the transaction would leave it out.
      const tx = client.multi();
      // LPUSH, as kombu's `_put`: the new message joins the back of the queue.
      for (const send of sends) tx.lpush(send.list, send.message);
      tx.eval(MARK_RETRIED.lua, mark.keys.length, ...mark.keys, ...mark.args);
      const results = await tx.exec();
      if (!results) throw new Error('Connection is closed.');
      for (const [error] of results) if (error) throw error;
    } else {
      // Two servers share no transaction: published first, marked after, so a crash in between
      // can at worst send a task again on a later retry, never lose it.
      const publish: PipelineStep[] = sends.map((send) => ({
        command: (p) => p.lpush(send.list, send.message),
      }));
      for (const [error] of await execWithScripts(client, publish)) if (error) throw error;
      const [[error]] = (await execWithScripts(resultClient, [mark])) as [[Error | null, unknown]];
      if (error) throw error;
    }
  } catch (error) {
    throw deps.unavailable(error);
  }
}

/**
 * Retry for Celery: Celery has no "retry from the result backend", so each failed task is
 * published again as a new task (protocol 2, json, a new id) with the name, arguments and queue
 * the result backend stored, which it does only with `result_extended=True`. The stored failure
 * is then marked with the new id (`RETRIED_AS_FIELD`), so it leaves the dead letters and a second
 * retry does not send it twice. On one Redis a batch's messages and marks are one transaction; with
 * a separate result backend publishing comes before marking: a crash in between can at worst send
 * a task again on a later retry, never lose it.
 */
export function createCeleryRetry(deps: CeleryRetryDeps) {
  const { client } = deps;

  const target = (queue: string) => `${deps.system}/${queue}`;

  /** One stored failure, checked: a FAILURE of this queue with everything needed to send it again. */
  async function one(queue: string, id: string): Promise<{ error: string }> {
    const [raw] = await read(deps, [RESULT_KEY_PREFIX + id]);
    const failure = raw ? parseFailure(id, raw, null) : undefined;
    if (!raw || !failure) throw new OpsError(ErrorCode.UnknownJob, { target: target(queue), id });
    const task = storedTask(raw);
    if (!task) throw new OpsError(ErrorCode.NeedsResultExtended, { target: target(queue), id });
    if (task.queue !== queue) throw new OpsError(ErrorCode.UnknownJob, { target: target(queue), id });
    return { error: failure.error };
  }

  /** The ids a selection takes, newest failure first, with their errors and the queue's total. */
  async function select(
    queue: string,
    selection: RetrySelection,
  ): Promise<{ ids: string[]; errors: string[]; failed: number; matched?: number; newestAt: number }> {
    const index = await indexReady(deps);
    const counts = index.counts();
    const failed = counts.get(queue) ?? 0;
    const newestAt = index.newest(queue, 1)[0]?.failedAt ?? 0;
    if ('jobId' in selection) {
      const { error } = await one(queue, selection.jobId);
      return { ids: [selection.jobId], errors: [error], failed: Math.max(failed, 1), newestAt };
    }
    const filter = hasFilter(selection.filter) ? selection.filter : undefined;
    // The index holds the failures in memory already (bounded by its maxRecords): a filter is
    // applied there, to name, error and `date_done`, and the limit to what it matches.
    const matching = filter
      ? index
          .newest(queue, failed)
          .filter((f) => jobMatches({ name: f.name, error: f.error, at: f.failedAt }, filter, Date.now()))
      : undefined;
    const newest = matching ? matching.slice(0, selection.limit) : index.newest(queue, selection.limit);
    if (filter && newest.length === 0 && failed > 0)
      throw nothingMatchesError(
        target(queue),
        filter,
        failed,
        groupErrors(index.newest(queue, GROUPS_OVER).map((f) => f.error)),
      );
    if (matching && newest.length === 0)
      throw new OpsError(ErrorCode.NothingToRetry, { target: target(queue) });
    if (newest.length === 0) {
      const unnamed = counts.get(null) ?? 0;
      if (unnamed > 0)
        throw new OpsError(ErrorCode.NeedsResultExtended, {
          target: target(queue),
          system: deps.system,
          unnamed,
        });
      throw new OpsError(ErrorCode.NothingToRetry, { target: target(queue) });
    }
    return {
      ids: newest.map((f) => f.id),
      errors: newest.map((f) => f.error),
      failed,
      newestAt,
      ...(matching ? { matched: matching.length } : {}),
    };
  }

  /**
   * Failures of the queue stored after `since` (the preview's newest), matching the filter, not
   * among the previewed ids: what an approved retry left for a request of its own. From the
   * index, in memory.
   */
  function newSince(queue: string, since: number, pinned: ReadonlySet<string>, filter?: JobFilter): number {
    const index = deps.failures();
    const now = Date.now();
    let count = 0;
    for (const f of index.newest(queue, index.counts().get(queue) ?? 0)) {
      if (f.failedAt === null || f.failedAt <= since) break;
      if (pinned.has(f.id)) continue;
      if (!filter || jobMatches({ name: f.name, error: f.error, at: f.failedAt }, filter, now)) count++;
    }
    return count;
  }

  return {
    async previewRetry(queue: string, selection: RetrySelection): Promise<RetryPreview> {
      checkSelection(selection);
      await deps.resolveQueue(queue);
      const { ids, errors, failed, matched, newestAt } = await select(queue, selection);
      return {
        queue,
        count: ids.length,
        failed,
        ...(matched !== undefined ? { matched } : {}),
        ids,
        newestAt,
        topErrors: groupErrors(errors),
      };
    },

    async retry(queue: string, selection: RetrySelection, progress?: RetryProgress): Promise<RetryOutcome> {
      checkSelection(selection);
      await deps.resolveQueue(queue);
      // An approved `all` runs the ids its preview showed (each sent only if still a failure not
      // yet retried); a request stored before ids were kept selects again, as it always did.
      const pinned = 'all' in selection ? selection.pinned : undefined;
      const ids = pinned ? pinned.ids : (await select(queue, selection)).ids;
      if (pinned) await indexReady(deps);
      try {
        await ensureConnected(client, deps.connectTimeoutMs);
      } catch (error) {
        throw deps.unavailable(error);
      }
      const outcome: RetryOutcome = { queue, retried: 0, ids: {}, skipped: 0 };
      progress?.(0, ids.length, outcomeSoFar(outcome));
      for (let start = 0; start < ids.length; start += CELERY_RETRY_BATCH) {
        const batch = ids.slice(start, start + CELERY_RETRY_BATCH);
        await publishBatch(deps, queue, batch, outcome, (sending) =>
          progress?.(start, ids.length, outcomeSoFar(outcome, sending)),
        );
        progress?.(start + batch.length, ids.length, outcomeSoFar(outcome));
      }
      if (pinned && 'all' in selection) {
        const filter = hasFilter(selection.filter) ? selection.filter : undefined;
        // Neither the previewed failures nor the new tasks they became (failing again already) are new.
        const ours = new Set([...pinned.ids, ...Object.values(outcome.ids)]);
        outcome.newSincePreview = newSince(queue, pinned.since, ours, filter);
      }
      return outcome;
    },
  };
}
