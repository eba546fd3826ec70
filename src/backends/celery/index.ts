import type { Redis } from 'ioredis';
import type { CelerySystemConfig } from '../../config/schema.js';
import { ErrorCode, isOpsError, OpsError } from '../../errors.js';
import { groupErrors } from '../error-groups.js';
import { isPartial } from '../job-filter.js';
import { execWithScripts, luaScript, runScript } from '../lua.js';
import { withUnavailable } from '../purger-errors.js';
import type {
  ActiveTask,
  DelayedDue,
  DlqOptions,
  DlqSample,
  JobLookup,
  QueueBackend,
  QueueCounts,
  QueuedJob,
  RedisMemory,
  StatusOptions,
  SystemStatus,
  SystemWarning,
  TaskLocation,
  WorkerInfo,
} from '../queue-backend.js';
import { createQueueNames } from '../queue-names.js';
import { ensureConnected, parseMemoryInfo, toRedisUnavailable, urlSecrets } from '../redis-client.js';
import {
  type KeySampleBudget,
  type NetworkReading,
  type RedisHealth,
  type RedisSignals,
  readNetwork,
  readPersistence,
  readRedisHealth,
  readRedisSignals,
} from '../redis-health.js';
import { celeryConnections } from './connections.js';
import { createCeleryControl } from './control.js';
import { type DelayedScan, readCeleryDelayed } from './delayed.js';
import {
  countResultsWithoutTtl,
  type ExpireResultsOutcome,
  type ExpireResultsPreview,
  type ExpireResultsProgress,
  expireResultsWithoutTtl,
} from './expire-results.js';
import { createFailureIndex, type FailureIndex } from './failures.js';
import {
  bindingScanPattern,
  dbFromUrl,
  exchangeOfBindingKey,
  isInternalExchange,
  isInternalQueue,
  type KombuLayout,
  pausedKey,
  priorityKeys,
  queueOfBindingMember,
  RESULT_KEY_PREFIX,
  unackedKey,
} from './keys.js';
import { locateTasks } from './locate.js';
import { createCeleryPause } from './pause.js';
import { type BroadcastResult, createPidboxClient, type PidboxClient } from './pidbox.js';
import { type ResultsBudget, type ResultsReading, readResults } from './results.js';
import { createCeleryRetry } from './retry.js';
import {
  parseRetryLoops,
  RETRY_LOOPS,
  RETRY_SAMPLE,
  RETRY_SAMPLE_BYTES,
  type RetryLoops,
} from './retry-loops.js';
import {
  type CeleryFinished,
  celeryThroughput,
  finishedFromIndex,
  readCeleryFinished,
} from './throughput.js';

/** The purger (and the archive's line format it writes), loaded when a purge or an undo runs. */
const loadPurger = () => import('./purge.js');

export { createPidboxClient, type PidboxClient } from './pidbox.js';

export interface CeleryBackendOptions {
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  now?: () => number;
  /** How long discovered queue names are reused. Default 30 s. */
  discoveryTtlMs?: number;
  /** How often the failure index is rebuilt from a full SCAN. Default 5 min. */
  rescanIntervalMs?: number;
}

/** Above this share of maxmemory, status carries a `MemoryHigh` warning. */
const MEMORY_HIGH_RATIO = 0.9;
/** Failures that `topErrors` is counted over, newest first. */
const GROUP_OVER = 1000;

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

/**
 * The messages a worker takes next from one queue, next first: from the end of each priority list
 * in the order they are served (`LRANGE -n -1`, read from its right end), at most ARGV[1]. Only
 * each message's task id and name leave Redis (`headers.id`/`task`, protocol 2; the body, with the
 * arguments, is never decoded). Returns id, name pairs.
 */
const NEXT_TASKS = luaScript(`
local n = tonumber(ARGV[1])
local out = {}
local found = 0
for _, key in ipairs(KEYS) do
  if found >= n then break end
  local tail = redis.call('LRANGE', key, -(n - found), -1)
  for i = #tail, 1, -1 do
    local ok, message = pcall(cjson.decode, tail[i])
    local id, name = '', ''
    if ok and type(message) == 'table' and type(message.headers) == 'table' then
      if type(message.headers.id) == 'string' then id = message.headers.id end
      if type(message.headers.task) == 'string' then name = message.headers.task end
    end
    if id == '' and ok and type(message) == 'table' and type(message.properties) == 'table'
      and type(message.properties.correlation_id) == 'string' then
      id = message.properties.correlation_id
    end
    if id ~= '' then
      out[#out + 1] = id
      out[#out + 1] = name
      found = found + 1
    end
  end
end
return out`);

/** What the workers said in one round of inspection, reduced to what may be shown. */
interface Inspection {
  workers: Map<string, WorkerInfo>;
  /** Running tasks per queue (the routing key of their delivery). */
  activeByQueue: Map<string, number>;
  /** Queues consumed by at least one worker; undefined when no worker answered `active_queues`. */
  consumed: Set<string> | undefined;
}

/**
 * The `QueueBackend` for Celery on Redis (kombu's transport, Celery 5). Reads go straight to the
 * broker's keys; workers are asked through Celery's own remote control (pidbox); failures come
 * from an in-memory index of the result backend.
 *
 * Choices worth knowing (Celery has no field for them, so these are estimates or conventions):
 * - `oldestWaitingSeconds`: messages carry no enqueue time. The backend reports only what the
 *   broker says (the time since a past `headers.eta`, else `null`) and the delivery tag at the
 *   head (`headId`, `LINDEX -1` of the first non-empty priority list); how long that tag has been
 *   at the head is the monitor's stored sighting, which `status` reads (`oldestWaitingFrom`).
 * - `waiting` is Σ LLEN over the priority lists; `prioritized`, `delayed`, `completed` and
 *   `waitingChildren` are 0 (ETA tasks sit in the workers and in `unacked`, see `unacked`).
 * - `active` is the number of running tasks whose delivery routing key is the queue, from the
 *   workers' `active` inspection; 0 when inspection failed (a `WorkerInspectFailed` warning).
 * - `isPaused`: Celery has no pause flag, so `pause` records one of its own in the broker, in the
 *   hash `pausedKey` (`{globalKeyprefix}queue-ops:paused`), and `resume` removes it; a queue is
 *   paused while its field exists. A queue that no worker consumes but nobody paused is not paused
 *   (status flags it "no workers" when messages wait). When a paused queue is consumed again (a
 *   worker restarted with its `-Q`), it still reads as paused, with a `PausedButConsumed` warning.
 * - `failed` counts FAILURE results whose `queue` field names the queue; the field only exists with
 *   `result_extended=True`. Failures without it are counted nowhere (not guessed into `celery`).
 * - `resume` addresses the workers the pause record names (those that consumed the queue when it
 *   was paused), whichever replica or CLI paused it. Without a record, or when none of those
 *   workers answers any more, it addresses every worker, which then all consume the queue.
 */
/** Reserved tasks kept per worker for `workers` (the count is whole). */
const RESERVED_KEPT = 10;

export function createCeleryBackend(
  system: CelerySystemConfig,
  options: CeleryBackendOptions = {},
): QueueBackend &
  Required<
    Pick<
      QueueBackend,
      | 'pause'
      | 'resume'
      | 'running'
      | 'pool'
      | 'resizePool'
      | 'revoke'
      | 'previewRetry'
      | 'retry'
      | 'purger'
      | 'liveWorkers'
      | 'poolRestartsEnabled'
      | 'restartWorkers'
    >
  > {
  const now = options.now ?? Date.now;
  const connectTimeoutMs = options.connectTimeoutMs ?? 2000;
  const commandTimeoutMs = options.commandTimeoutMs ?? 3000;
  const discoveryTtlMs = options.discoveryTtlMs ?? 5 * 60_000;
  const resultUrl = system.resultBackend ?? system.redis;
  const secrets = [...urlSecrets(system.redis), ...urlSecrets(resultUrl)];
  const layout: KombuLayout = {
    globalKeyprefix: system.globalKeyprefix,
    prioritySteps: system.prioritySteps,
    separator: system.separator,
    fanoutPrefix: system.fanoutPrefix,
    db: dbFromUrl(system.redis),
  };
  const connections = celeryConnections(system, { connectTimeoutMs, commandTimeoutMs });
  const separateResults = connections.separateResults;
  const client = connections.broker({ connectionName: 'queue-ops' });
  const resultClient = separateResults ? connections.results({ connectionName: 'queue-ops' }) : client;
  let subscriber: Redis | undefined;
  let failureIndex: FailureIndex | undefined;
  const pidbox: PidboxClient = createPidboxClient({
    client,
    layout,
    // Deadlines run on the real clock: an injected `now` is for ages and dates only.
    connectTimeoutMs,
    createBlockingClient: () =>
      connections.broker({
        // A BRPOP here waits up to 1 s by design; the timeout is for a Redis that hangs.
        commandTimeoutMs: commandTimeoutMs + 1500,
        connectionName: 'queue-ops:pidbox',
      }),
  });

  const pauseMarks = pausedKey(layout);

  const unavailable = (error: unknown) => toRedisUnavailable(system.name, error, secrets);

  function failures(): FailureIndex {
    if (!failureIndex) {
      subscriber = connections.results({ connectionName: 'queue-ops:results' });
      failureIndex = createFailureIndex({
        client: resultClient,
        subscriber,
        now,
        rescanIntervalMs: options.rescanIntervalMs,
        connectTimeoutMs,
      });
    }
    return failureIndex;
  }

  async function discover(): Promise<string[]> {
    await ensureConnected(client, connectTimeoutMs);
    const bindingKeys = new Set<string>();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', bindingScanPattern(layout), 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const exchange = exchangeOfBindingKey(layout, key);
        if (exchange !== undefined && !isInternalExchange(exchange)) bindingKeys.add(key);
      }
    } while (cursor !== '0');
    const queues = new Set<string>();
    if (bindingKeys.size > 0) {
      const pipeline = client.pipeline();
      // Binding sets hold one member per queue bound to an exchange: small by construction.
      for (const key of bindingKeys) pipeline.smembers(key);
      for (const [error, members] of (await pipeline.exec()) ?? []) {
        if (error) continue; // a key of another type that happens to match the pattern
        for (const member of members as string[]) {
          const queue = queueOfBindingMember(layout, member);
          if (queue && !isInternalQueue(queue)) queues.add(queue);
        }
      }
    }
    return [...queues].sort();
  }

  const queueNames = createQueueNames({
    system: system.name,
    configured: system.queues,
    patterns: system.queuePatterns,
    discover: async () => {
      try {
        return await discover();
      } catch (error) {
        throw unavailable(error);
      }
    },
    now,
    ttlMs: discoveryTtlMs,
  });

  async function inspect(methods: readonly string[], timeoutMs = system.inspectTimeoutMs) {
    const results = await Promise.all(methods.map((method) => pidbox.broadcast(method, {}, { timeoutMs })));
    return new Map(methods.map((method, i) => [method, results[i]!] as const));
  }

  function readInspection(results: Map<string, BroadcastResult>): Inspection {
    const workers = new Map<string, WorkerInfo>();
    const worker = (name: string) => {
      let info = workers.get(name);
      if (!info) {
        info = { name };
        workers.set(name, info);
      }
      return info;
    };
    const activeByQueue = new Map<string, number>();
    for (const { worker: name, reply } of results.get('active')?.replies ?? []) {
      if (!Array.isArray(reply)) continue;
      const tasks: ActiveTask[] = [];
      for (const request of reply as Record<string, unknown>[]) {
        // Only these fields: `active` replies also carry the task's args and kwargs.
        const task: ActiveTask = { id: String(request?.id ?? ''), name: String(request?.name ?? '') };
        const started = Number(request?.time_start);
        if (Number.isFinite(started) && started > 0) task.startedAt = Math.round(started * 1000);
        tasks.push(task);
        const routingKey = (request?.delivery_info as { routing_key?: unknown } | undefined)?.routing_key;
        if (typeof routingKey === 'string')
          activeByQueue.set(routingKey, (activeByQueue.get(routingKey) ?? 0) + 1);
      }
      const info = worker(name);
      info.active = tasks.length;
      info.activeTasks = tasks;
    }
    for (const { worker: name, reply } of results.get('reserved')?.replies ?? []) {
      if (!Array.isArray(reply)) continue;
      // Ids and names only: a reserved request carries the task's args and kwargs too.
      const tasks = (reply as Record<string, unknown>[]).map((request) => ({
        id: String(request?.id ?? ''),
        name: String(request?.name ?? ''),
      }));
      const info = worker(name);
      info.reserved = tasks.length;
      info.reservedTasks = tasks.slice(0, RESERVED_KEPT);
    }
    let consumed: Set<string> | undefined;
    for (const { worker: name, reply } of results.get('active_queues')?.replies ?? []) {
      if (!Array.isArray(reply)) continue;
      consumed ??= new Set();
      const queues = (reply as { name?: unknown }[])
        .map((q) => q?.name)
        .filter((q): q is string => typeof q === 'string')
        .sort();
      for (const queue of queues) consumed.add(queue);
      worker(name).queues = queues;
    }
    for (const { worker: name, reply } of results.get('stats')?.replies ?? []) {
      if (!reply || typeof reply !== 'object' || Array.isArray(reply)) continue;
      worker(name).details = statsDetails(reply as Record<string, unknown>);
    }
    for (const { worker: name } of results.get('ping')?.replies ?? []) worker(name);
    return { workers, activeByQueue, consumed };
  }

  /**
   * What the broker alone says of the head message's wait: the time since its ETA passed, when it
   * had one (a lower bound of its wait). Anything else is the monitor's stored sighting, which
   * `status` and the monitor read (`headId`): one source, kept across restarts, never this process's.
   */
  function oldestWaiting(waiting: number, eta: string): number | null {
    if (waiting === 0) return null;
    const at = now();
    const due = eta ? Date.parse(eta) : Number.NaN;
    return Number.isFinite(due) && due < at ? Math.floor((at - due) / 1000) : null;
  }

  async function status(only?: string[], options?: StatusOptions): Promise<SystemStatus> {
    const queues = only ? await queueNames.resolve(only) : await queueNames.list();
    try {
      await ensureConnected(client, connectTimeoutMs);
    } catch (error) {
      throw unavailable(error);
    }
    const warnings: SystemWarning[] = [];
    const methods = options?.workerStats ? ['active', 'active_queues', 'stats'] : ['active', 'active_queues'];
    const inspection = inspect(methods).then(readInspection, (error: unknown) => {
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
    // From the failure index, which counts recent successes too, so the rates of every status
    // and monitor tick cost no read; a span it does not reach back to takes a bounded SCAN.
    // Beside the counts, never in their way: a result backend that fails costs only the rates.
    const finished =
      spanStart === undefined
        ? Promise.resolve(undefined)
        : index
            .then(async (indexed): Promise<CeleryFinished> => {
              const known = indexed ? failures().finishedSince(spanStart) : undefined;
              if (known) return finishedFromIndex(known);
              if (separateResults) await ensureConnected(resultClient, connectTimeoutMs);
              return await readCeleryFinished(resultClient, spanStart);
            })
            .catch(() => undefined);
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
      const oldest = oldestWaiting(waiting, String(state[steps + 1] ?? ''));
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

  /** The broker's Redis: where the queues, the unacked hash and the pidbox live. */
  async function redisHealth(budget?: KeySampleBudget): Promise<RedisHealth> {
    try {
      await ensureConnected(client, connectTimeoutMs);
      // Every queue's lists (its priority sub-lists too), measured beside the sample.
      const queues = await queueNames.list();
      return await readRedisHealth(
        client,
        budget,
        Date.now,
        queues.map((queue) => ({ queue, keys: priorityKeys(layout, queue) })),
      );
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** The broker's persistence: where a lost save would lose queued messages. */
  async function persistence(): Promise<RedisHealth['persistence']> {
    try {
      await ensureConnected(client, connectTimeoutMs);
      return await readPersistence(client);
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** One whole `INFO` of the broker, for `why`. */
  async function redisSignals(): Promise<RedisSignals> {
    try {
      await ensureConnected(client, connectTimeoutMs);
      return await readRedisSignals(client);
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** The broker's network reading (the monitor's `redis-network`): see `readNetwork`. */
  async function network(during?: Promise<unknown>): Promise<NetworkReading> {
    try {
      await ensureConnected(client, connectTimeoutMs);
      return await readNetwork(client, during);
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** The result backend (`resultBackend:`, else the broker). */
  async function resultKeys(budget?: ResultsBudget): Promise<ResultsReading> {
    try {
      await ensureConnected(resultClient, connectTimeoutMs);
      return await readResults(resultClient, budget);
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** `expire-results`' preview, on the result backend: the keys without a TTL, counted exactly. */
  async function previewExpireResults(budget?: { maxMillis?: number }): Promise<ExpireResultsPreview> {
    try {
      await ensureConnected(resultClient, connectTimeoutMs);
      return await countResultsWithoutTtl(resultClient, budget);
    } catch (error) {
      throw unavailable(error);
    }
  }

  async function expireResults(
    ttlSeconds: number,
    progress?: ExpireResultsProgress,
  ): Promise<ExpireResultsOutcome> {
    try {
      await ensureConnected(resultClient, connectTimeoutMs);
      return await expireResultsWithoutTtl(resultClient, ttlSeconds, progress);
    } catch (error) {
      throw unavailable(error);
    }
  }

  const withoutName = ({ name: _name, ...rest }: NonNullable<TaskLocation['stored']>) => rest;

  /** Where tasks are, as `revoke` previews and `job` shows them (see `locateTasks`). */
  async function locate(ids: readonly string[], queues?: readonly string[]): Promise<TaskLocation[]> {
    try {
      await ensureConnected(client, connectTimeoutMs);
      if (separateResults) await ensureConnected(resultClient, connectTimeoutMs);
      return await locateTasks(
        {
          client,
          resultClient,
          layout,
          queues: async () => (queues ? [...queues] : await queueNames.list()),
          queryTask: (asked) =>
            pidbox.broadcast('query_task', { ids: [...asked] }, { timeoutMs: system.inspectTimeoutMs }),
        },
        ids,
      );
    } catch (error) {
      if (isOpsError(error)) throw error;
      throw unavailable(error);
    }
  }

  /**
   * A task by id, wherever it is: a worker's own word (`query_task`), its message in the queues'
   * lists or in `unacked`, and its stored result. Never its arguments or its return value.
   */
  async function task(queue: string | undefined, id: string): Promise<JobLookup> {
    const queues = queue === undefined ? await queueNames.list() : await queueNames.resolve([queue]);
    const [where] = await locate([id], queues);
    const result = where?.stored;
    const state =
      where?.worker?.state ??
      (where?.queue === 'unacked' ? 'unacked' : where?.queue ? 'queued' : (where?.result ?? null));
    if (!where || state === null) {
      return {
        found: false,
        looked: [
          queues.length === 1 ? `\`${queues[0]}\`` : `the lists of ${queues.length} queues`,
          '`unacked`',
          `\`${RESULT_KEY_PREFIX}${id}\``,
          'the workers (query_task)',
        ],
      };
    }
    return {
      found: true,
      kind: 'celery',
      task: {
        id,
        state,
        name: where.worker?.task ?? where.task ?? result?.name ?? null,
        where: where.place && where.queue ? { queue: where.queue, ...where.place } : null,
        worker: where.worker?.name ?? null,
        result: result ? withoutName(result) : null,
      },
    };
  }

  async function dlq(queue: string, limit: number, options?: DlqOptions): Promise<DlqSample> {
    await queueNames.resolve([queue]);
    const index = failures();
    let retrying: RetryLoops | undefined;
    try {
      [retrying] = await Promise.all([
        // The newest failures alone are in memory; the retry loops are a read of the queue's messages.
        options?.newestOnly
          ? undefined
          : ensureConnected(client, connectTimeoutMs)
              .then(() =>
                runScript(
                  client,
                  RETRY_LOOPS,
                  [...priorityKeys(layout, queue), unackedKey(layout)],
                  [String(RETRY_SAMPLE), queue, String(RETRY_SAMPLE_BYTES)],
                ),
              )
              .then(parseRetryLoops),
        index.ready(),
      ]);
    } catch (error) {
      throw toRedisUnavailable(system.name, error, secrets);
    }
    const total = index.counts().get(queue) ?? 0;
    const bounded = Math.min(100, Math.max(1, Math.floor(limit) || 1));
    const newest = index.newest(queue, options?.newestOnly ? bounded : Math.max(bounded, GROUP_OVER));
    const topErrors = groupErrors(newest.slice(0, GROUP_OVER).map((failure) => failure.error));
    return {
      queue,
      total,
      jobs: newest.slice(0, bounded).map((f) => ({
        id: f.id,
        name: f.name,
        error: f.error,
        attempts: f.attempts,
        failedAt: f.failedAt,
      })),
      topErrors,
      groupedOver: Math.min(newest.length, GROUP_OVER),
      ...(retrying ? { retrying } : {}),
    };
  }

  /** The tasks a worker takes next from `queue` (NEXT_TASKS): ids and names only. */
  async function nextJobs(queue: string, limit: number): Promise<QueuedJob[]> {
    await queueNames.resolve([queue]);
    const n = Math.min(10, Math.max(1, Math.floor(limit)));
    let flat: string[];
    try {
      await ensureConnected(client, connectTimeoutMs);
      flat = (await runScript(client, NEXT_TASKS, priorityKeys(layout, queue), [n])) as string[];
    } catch (error) {
      throw unavailable(error);
    }
    const jobs: QueuedJob[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) jobs.push({ id: flat[i]!, name: flat[i + 1]! });
    return jobs;
  }

  async function workers(): Promise<WorkerInfo[]> {
    try {
      const seen = readInspection(await inspect(['ping', 'active', 'reserved', 'active_queues', 'stats']));
      return [...seen.workers.values()].sort((a, b) => a.name.localeCompare(b.name));
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** Refuses a queue this system does not have (pause and retry name it before anything runs). */
  const resolveQueue = async (queue: string) => {
    await queueNames.resolve([queue]);
  };

  const pausing = createCeleryPause({
    system,
    client,
    pidbox,
    pauseMarks,
    resolveQueue,
    unavailable,
    connectTimeoutMs,
    now,
  });

  const retries = createCeleryRetry({
    system: system.name,
    layout,
    client,
    resultClient,
    failures,
    resolveQueue,
    unavailable,
    connectTimeoutMs,
  });

  const control = createCeleryControl({
    pidbox,
    listQueues: (fresh?: boolean) => queueNames.list(fresh),
    timeoutMs: system.inspectTimeoutMs,
    unavailable,
  });

  return {
    name: system.name,
    type: 'celery',
    previewRetry: retries.previewRetry,
    retry: retries.retry,
    listQueues: (lookingFor) => (lookingFor ? queueNames.lookFor(lookingFor) : queueNames.list()),
    status,
    dlq,
    nextJobs,
    workers,
    redisHealth,
    persistence,
    redisSignals,
    network,
    results: resultKeys,
    previewExpireResults,
    expireResults,
    job: task,
    running: control.running,
    pool: control.pool,
    resizePool: control.resizePool,
    revoke: control.revoke,
    liveWorkers: control.liveWorkers,
    poolRestartsEnabled: control.poolRestartsEnabled,
    restartWorkers: control.restartWorkers,
    taskRateLimits: control.taskRateLimits,
    setTaskRateLimit: control.setTaskRateLimit,
    locateTasks: (ids) => locate(ids),
    pause: pausing.pause,
    resume: pausing.resume,
    async purger(queue, selection) {
      // A purge here takes whole states: a selection must never purge more than it names.
      if (isPartial(selection))
        throw new OpsError(ErrorCode.NotSupported, {
          system: system.name,
          type: 'celery',
          what: 'purgePart',
        });
      await queueNames.resolve([queue]);
      const { createCeleryPurger } = await loadPurger();
      // Connections of its own: thousands of pipelined calls must not queue behind status reads.
      const connect = async (open: typeof connections.broker) => {
        const connection = open({ connectionName: 'queue-ops:purge', commandTimeoutMs: 30_000 });
        try {
          await ensureConnected(connection, connectTimeoutMs);
        } catch (error) {
          connection.disconnect();
          throw unavailable(error);
        }
        return connection;
      };
      const broker = await connect(connections.broker);
      const results = separateResults ? await connect(connections.results) : broker;
      const purger = createCeleryPurger({
        broker,
        results,
        queue,
        lists: priorityKeys(layout, queue),
        unacked: unackedKey(layout),
        failureIds: async () => {
          const index = failures();
          try {
            await index.ready();
          } catch (error) {
            throw unavailable(error);
          }
          return index.newest(queue, Number.MAX_SAFE_INTEGER).map((f) => f.id);
        },
        onResultsChanged: (purged, restored) => {
          failureIndex?.forget(purged);
          if (restored) void failureIndex?.rescan().catch(() => undefined);
        },
        now,
      });
      return withUnavailable(purger, unavailable);
    },
    async close() {
      await failureIndex?.close();
      await pidbox.close();
      subscriber?.disconnect();
      client.disconnect();
      if (separateResults) resultClient.disconnect();
    },
  };
}

/** `MemoryHigh` when a maxmemory is set and more than 90% of it is used. */
export function memoryHighWarning(memory: RedisMemory): SystemWarning | undefined {
  if (memory.maxMemoryBytes <= 0) return undefined;
  const ratio = memory.usedMemoryBytes / memory.maxMemoryBytes;
  if (ratio <= MEMORY_HIGH_RATIO) return undefined;
  return { code: 'MemoryHigh', params: { percent: Math.round(ratio * 100) } };
}

/** The safe, one-line facts of a `stats` reply; its `broker` part is never read. */
function statsDetails(stats: Record<string, unknown>): Record<string, string | number> {
  const details: Record<string, string | number> = {};
  const pool = stats.pool as Record<string, unknown> | undefined;
  const concurrency = Number(pool?.['max-concurrency']);
  if (Number.isFinite(concurrency)) details.concurrency = concurrency;
  if (Array.isArray(pool?.processes)) details.processes = pool.processes.length;
  const pid = Number(stats.pid);
  if (Number.isFinite(pid)) details.pid = pid;
  const uptime = Number(stats.uptime);
  if (Number.isFinite(uptime)) details.uptimeSeconds = uptime;
  const prefetch = Number(stats.prefetch_count);
  if (Number.isFinite(prefetch)) details.prefetch = prefetch;
  return details;
}
