import { isOpsError } from '../../errors.js';
import { groupErrors } from '../error-groups.js';
import { luaScript, runScript } from '../lua.js';
import type {
  DlqOptions,
  DlqSample,
  JobLookup,
  QueueBackend,
  QueuedJob,
  ResultsBudget,
  ResultsReading,
  RetryLoops,
  TaskLocation,
  WorkerInfo,
} from '../queue-backend.js';
import { ensureConnected, toRedisUnavailable } from '../redis-client.js';
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
import type { CeleryContext } from './context.js';
import { readInspection } from './inspection.js';
import { priorityKeys, RESULT_KEY_PREFIX, unackedKey } from './keys.js';
import { locateTasks } from './locate.js';
import { readResults } from './results.js';
import { parseRetryLoops, RETRY_LOOPS, RETRY_SAMPLE, RETRY_SAMPLE_BYTES } from './retry-loops.js';
import type { CeleryTaskView } from './task.js';

/** Failures that `topErrors` is counted over, newest first. */
const GROUP_OVER = 1000;

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

/**
 * The Celery backend's reads besides `status`: the broker's Redis, the result backend, a task by
 * id, the failures, the next messages and the workers. None of them changes anything.
 */
export function createCeleryReads(ctx: CeleryContext) {
  const located = createTaskReads(ctx);
  return {
    ...createRedisReads(ctx),
    ...createQueueReads(ctx),
    job: located.task,
    locateTasks: (ids: readonly string[]) => located.locate(ids),
  };
}

/** The broker's and the result backend's Redis, as `redis`, `why`, `results` and the monitor read them. */
function createRedisReads(ctx: CeleryContext) {
  const { connectTimeoutMs, layout, client, resultClient, queueNames, unavailable } = ctx;

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

  return { redisHealth, persistence, redisSignals, network, results: resultKeys };
}

/** A task by id, wherever it is (`job`, and `revoke`'s preview). */
function createTaskReads(ctx: CeleryContext) {
  const { system, connectTimeoutMs, layout, separateResults, client, resultClient, pidbox, queueNames } = ctx;
  const { unavailable } = ctx;

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
    const view: CeleryTaskView = {
      id,
      state,
      name: where.worker?.task ?? where.task ?? result?.name ?? null,
      where: where.place && where.queue ? { queue: where.queue, ...where.place } : null,
      worker: where.worker?.name ?? null,
      result: result ? withoutName(result) : null,
    };
    return { found: true, kind: 'celery', job: view };
  }

  return { locate, task };
}

/** A queue's failures and next messages, and the workers. */
function createQueueReads(ctx: CeleryContext) {
  const { system, connectTimeoutMs, layout, client, secrets, queueNames, unavailable, failures, inspect } =
    ctx;

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

  return {
    listQueues: ((lookingFor) =>
      lookingFor ? queueNames.lookFor(lookingFor) : queueNames.list()) as QueueBackend['listQueues'],
    dlq,
    nextJobs,
    workers,
  };
}
