import { execWithScripts, luaScript } from '../lua.js';
import type {
  DelayedDue,
  QueueCounts,
  RedisMemory,
  StatusOptions,
  SystemStatus,
  SystemWarning,
} from '../queue-backend.js';
import { ensureConnected, parseMemoryInfo } from '../redis-client.js';
import type { CeleryContext } from './context.js';
import { type DelayedScan, readCeleryDelayed } from './delayed.js';
import { type Inspection, readInspection } from './inspection.js';
import { priorityKeys, unackedKey } from './keys.js';
import { parseRetryLoops, RETRY_LOOPS, RETRY_SAMPLE, RETRY_SAMPLE_BYTES } from './retry-loops.js';
import {
  type CeleryFinished,
  celeryThroughput,
  finishedFromIndex,
  readCeleryFinished,
} from './throughput.js';

/** Above this share of maxmemory, status carries a `MemoryHigh` warning. */
const MEMORY_HIGH_RATIO = 0.9;

/**
 * Next message of one queue: LLEN of every priority list (served-first first) and, for the
 * first non-empty one, the delivery tag and ETA of the message a worker would take next
 * (`LINDEX -1`), decoded on the server so the message body never crosses the network.
 */
const QUEUE_STATE = luaScript(`
local out = {}
local head = nil
for i, key in ipairs(KEYS) do
  local n = redis.call('LLEN', key)
  out[i] = n
  if n > 0 and head == nil then head = key end
end
local tag, eta = '', ''
if head then
  local ok, message = pcall(cjson.decode, redis.call('LINDEX', head, -1))
  if ok and type(message) == 'table' then
    if type(message.properties) == 'table' and type(message.properties.delivery_tag) == 'string' then
      tag = message.properties.delivery_tag
    end
    if type(message.headers) == 'table' and type(message.headers.eta) == 'string' then
      eta = message.headers.eta
    end
  end
end
out[#KEYS + 1] = tag
out[#KEYS + 2] = eta
return out`);

/** `status` of a Celery system: the broker's depths, the workers' inspection and the failure index, side by side. */
export function createCeleryStatus(
  ctx: CeleryContext,
): (only?: string[], options?: StatusOptions) => Promise<SystemStatus> {
  return (only, options) => celeryStatus(ctx, only, options);
}

/**
 * What the broker alone says of the head message's wait: the time since its ETA passed, when it
 * had one (a lower bound of its wait). Anything else is the monitor's stored sighting, which
 * `status` and the monitor read (`headId`): one source, kept across restarts, never this process's.
 */
function oldestWaiting(waiting: number, eta: string, at: number): number | null {
  if (waiting === 0) return null;
  const due = eta ? Date.parse(eta) : Number.NaN;
  return Number.isFinite(due) && due < at ? Math.floor((at - due) / 1000) : null;
}

/**
 * The finished tasks since `spanStart`, for the rates: from the failure index, which counts recent
 * successes too, so the rates of every status and monitor tick cost no read; a span it does not
 * reach back to takes a bounded SCAN. Beside the counts, never in their way: a result backend that
 * fails costs only the rates.
 */
function finishedRead(
  ctx: CeleryContext,
  index: Promise<boolean>,
  spanStart: number | undefined,
): Promise<CeleryFinished | undefined> {
  const { connectTimeoutMs, separateResults, resultClient, failures } = ctx;
  if (spanStart === undefined) return Promise.resolve(undefined);
  return index
    .then(async (indexed): Promise<CeleryFinished> => {
      const known = indexed ? failures().finishedSince(spanStart) : undefined;
      if (known) return finishedFromIndex(known);
      if (separateResults) await ensureConnected(resultClient, connectTimeoutMs);
      return await readCeleryFinished(resultClient, spanStart);
    })
    .catch(() => undefined);
}

async function celeryStatus(
  ctx: CeleryContext,
  only?: string[],
  options?: StatusOptions,
): Promise<SystemStatus> {
  const { system, now, connectTimeoutMs, layout, separateResults, client, queueNames, pauseMarks } = ctx;
  const { unavailable, failures } = ctx;
  const queues = only ? await queueNames.resolve(only) : await queueNames.list();
  try {
    await ensureConnected(client, connectTimeoutMs);
  } catch (error) {
    throw unavailable(error);
  }
  const warnings: SystemWarning[] = [];
  const methods = options?.workerStats ? ['active', 'active_queues', 'stats'] : ['active', 'active_queues'];
  const inspection = ctx.inspect(methods).then(readInspection, (error: unknown) => {
    warnings.push({
      code: 'WorkerInspectFailed',
      params: { reason: unavailable(error).params.reason as string },
    });
    return undefined;
  });
  const index = failures()
    .ready()
    .then(
      () => true,
      (error: unknown) => {
        if (!separateResults) throw unavailable(error);
        // A result backend of its own that is down costs the failure counts, not the status.
        warnings.push({
          code: 'ResultBackendMissing',
          params: { reason: unavailable(error).params.reason as string },
        });
        return false;
      },
    );
  const spanMs = options?.throughput?.spanMs;
  const spanStart = spanMs === undefined ? undefined : now() - spanMs;
  // The rates, beside the counts (see `finishedRead`).
  const finished = finishedRead(ctx, index, spanStart);
  const steps = priorityKeys(layout, 'q').length;
  const read = execWithScripts(client, [
    { command: (p) => p.info('memory') },
    ...queues.map((queue) => ({ script: QUEUE_STATE, keys: priorityKeys(layout, queue), args: [] })),
    { command: (p) => p.hlen(unackedKey(layout)) },
    // One small hash (a field per paused queue), read in the same round trip as the depths.
    { command: (p) => p.hgetall(pauseMarks) },
    // Tasks in a retry loop, from a bounded sample of the messages' headers.
    {
      script: RETRY_LOOPS,
      keys: [...queues.flatMap((queue) => priorityKeys(layout, queue)), unackedKey(layout)],
      args: [String(RETRY_SAMPLE), only?.length === 1 ? queues[0]! : '', String(RETRY_SAMPLE_BYTES)],
    },
  ]).then((results) => {
    for (const [error] of results) if (error) throw error;
    return results.map(([, value]) => value);
  });

  // ETA / countdown tasks by due time, from a bounded walk of `unacked` (asked for one queue):
  // beside the counts, and a walk that fails costs only the buckets.
  const delayedAt = now();
  const delayedRead: Promise<({ due: DelayedDue; scan: DelayedScan } | undefined)[] | undefined> =
    options?.delayedDue
      ? Promise.all(
          queues.map((queue) =>
            readCeleryDelayed(client, unackedKey(layout), queue, delayedAt).catch(() => undefined),
          ),
        )
      : Promise.resolve(undefined);

  let replies: unknown[];
  let indexed: boolean;
  let seen: Inspection | undefined;
  let done: CeleryFinished | undefined;
  let delayed: ({ due: DelayedDue; scan: DelayedScan } | undefined)[] | undefined;
  try {
    [replies, indexed, seen, done, delayed] = await Promise.all([
      read,
      index,
      inspection,
      finished,
      delayedRead,
    ]);
  } catch (error) {
    throw unavailable(error);
  }

  const redis = parseMemoryInfo(String(replies[0]));
  const memoryWarning = memoryHighWarning(redis);
  if (memoryWarning) warnings.push(memoryWarning);
  const failedCounts = indexed ? failures().counts() : new Map<string | null, number>();
  const failedSince =
    indexed && options?.failedSince !== undefined ? failures().countSince(options.failedSince) : undefined;
  const marks = replies[1 + queues.length + 1] as Record<string, string>;
  const counts: QueueCounts[] = queues.map((name, i) => {
    const state = replies[1 + i] as (number | string)[];
    const waiting = state.slice(0, steps).reduce<number>((sum, n) => sum + Number(n), 0);
    const headId = waiting > 0 ? String(state[steps] ?? '') : '';
    const eta = delayed?.[i];
    const oldest = oldestWaiting(waiting, String(state[steps + 1] ?? ''), now());
    return {
      ...(headId ? { headId } : {}),
      ...(eta ? { delayedDue: eta.due, delayedScan: eta.scan } : {}),
      name,
      waiting,
      active: seen?.activeByQueue.get(name) ?? 0,
      // Known only where the walk of `unacked` was asked for (one queue): the ETA tasks it found.
      delayed: eta ? eta.due.next5m + eta.due.nextHour + eta.due.nextDay + eta.due.later : 0,
      prioritized: 0,
      failed: failedCounts.get(name) ?? 0,
      ...(failedSince ? { failedSince: failedSince.get(name) ?? 0 } : {}),
      completed: 0,
      waitingChildren: 0,
      isPaused: Object.hasOwn(marks, name),
      oldestWaitingSeconds: oldest,
      ...(oldest === null ? {} : { oldestWaitingFrom: 'due' as const }),
    };
  });
  if (done && spanStart !== undefined) {
    // Per queue only when results name their queue (`result_extended=True`); else each says why not.
    for (const q of counts) q.throughput = celeryThroughput(done, q.name, Math.max(1, spanMs ?? 1));
    if (done.unattributed > 0)
      warnings.push({ code: 'ThroughputUnattributed', params: { results: done.unattributed } });
  }
  for (const queue of queues) {
    if (!Object.hasOwn(marks, queue) || !seen?.consumed?.has(queue)) continue;
    const consumers = [...seen.workers.values()].filter((w) => w.queues?.includes(queue)).length;
    warnings.push({ code: 'PausedButConsumed', params: { queue, consumers } });
  }
  return {
    name: system.name,
    type: 'celery',
    redis,
    queues: counts,
    workers: seen ? [...seen.workers.values()].sort((a, b) => a.name.localeCompare(b.name)) : [],
    unacked: Number(replies[1 + queues.length] ?? 0),
    retrying: parseRetryLoops(replies[1 + queues.length + 2]),
    warnings,
  };
}

/** `MemoryHigh` when a maxmemory is set and more than 90% of it is used. */
export function memoryHighWarning(memory: RedisMemory): SystemWarning | undefined {
  if (memory.maxMemoryBytes <= 0) return undefined;
  const ratio = memory.usedMemoryBytes / memory.maxMemoryBytes;
  if (ratio <= MEMORY_HIGH_RATIO) return undefined;
  return { code: 'MemoryHigh', params: { percent: Math.round(ratio * 100) } };
}
