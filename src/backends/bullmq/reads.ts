import { ErrorCode, OpsError } from '../../errors.js';
import { groupErrors } from '../error-groups.js';
import type {
  DlqOptions,
  DlqSample,
  FailedJob,
  JobLookup,
  QueuedJob,
  QueueLimits,
  RunningWork,
  WorkerInfo,
} from '../queue-backend.js';
import { isPlainReply } from '../redis-errors.js';
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
import { workersFromClientList } from './client-list.js';
import type { BullmqContext } from './context.js';
import { readBullmqJob } from './job.js';
import { queueLimitsOf } from './limits.js';
import { readNextJobs } from './next-jobs.js';
import { readRunning } from './running.js';

const MAX_LIMIT = 100;
/** `topErrors` never reads more than this many failures. */
export const GROUP_ERRORS_OVER = 500;
const GROUP_BATCH = 100;
/**
 * The keys BullMQ keeps per queue beside its jobs' hashes (`<prefix>:<queue>:<suffix>`): the state
 * lists and sorted sets, the event stream, and the small bookkeeping keys. What `redis <system>`
 * measures for every queue.
 */
const BULLMQ_QUEUE_KEYS = [
  'wait',
  'paused',
  'active',
  'prioritized',
  'delayed',
  'failed',
  'completed',
  'waiting-children',
  'events',
  'stalled',
  'stalled-check',
  'meta',
  'id',
  'marker',
  'pc',
  'limiter',
  'repeat',
  'de',
  'metrics:completed',
  'metrics:failed',
] as const;

export function firstLine(text: string | null | undefined): string {
  return (text ?? '').split(/\r?\n/, 1)[0]!.trim();
}

function toNumber(value: unknown): number {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

/**
 * The BullMQ backend's reads besides `status`: the queues, the Redis behind them, a job, the
 * failures, the workers, the running and next jobs, and the limits. None of them changes anything.
 */
export function createBullmqReads(ctx: BullmqContext) {
  return { ...createRedisReads(ctx), ...createQueueReads(ctx) };
}

/** The Redis that holds the prefix (on a cluster, the master of its slot). */
function createRedisReads(ctx: BullmqContext) {
  const { prefix, withRedis, queueNames, prefixNode } = ctx;

  async function redisHealth(budget?: KeySampleBudget): Promise<RedisHealth> {
    return await withRedis(async () => {
      const queues = await queueNames.list();
      // Every queue's own lists, sets and stream, measured beside the sample (its jobs' hashes
      // are one key each: the sample finds the big ones).
      const known = queues.map((queue) => ({
        queue,
        keys: BULLMQ_QUEUE_KEYS.map((suffix) => `${prefix}:${queue}:${suffix}`),
      }));
      return readRedisHealth(await prefixNode(), budget, Date.now, known);
    });
  }

  async function persistence(): Promise<RedisHealth['persistence']> {
    return await withRedis(async () => readPersistence(await prefixNode()));
  }

  async function redisSignals(): Promise<RedisSignals> {
    return await withRedis(async () => readRedisSignals(await prefixNode()));
  }

  async function network(during?: Promise<unknown>): Promise<NetworkReading> {
    return await withRedis(async () => readNetwork(await prefixNode(), during));
  }

  return { redisHealth, persistence, redisSignals, network };
}

/** The queues, their jobs and limits, and the workers. */
function createQueueReads(ctx: BullmqContext) {
  const { system, prefix, client, queueNames, withRedis, single } = ctx;

  async function listQueues(lookingFor?: readonly string[]): Promise<string[]> {
    const names = () => (lookingFor ? queueNames.lookFor(lookingFor) : queueNames.list());
    // Only configured names need no Redis; patterns are matched against a discovery.
    if (system.queues && !system.queuePatterns) return names();
    return await withRedis(names);
  }

  async function job(queue: string | undefined, id: string): Promise<JobLookup> {
    if (queue === undefined) throw new Error('a BullMQ job is looked up in its queue');
    return await withRedis(async () => {
      await queueNames.resolve([queue]);
      const job = await readBullmqJob(client, prefix, queue, id);
      if (job) return { found: true, kind: 'bullmq', job };
      return { found: false, looked: [`${prefix}:${queue}:${id}`] };
    });
  }

  async function workers(): Promise<WorkerInfo[]> {
    return await withRedis(async () => {
      const names = await queueNames.list();
      const list = await single((r) => r.client('LIST') as Promise<string>).catch((error: unknown) => {
        // Managed Redis services may refuse CLIENT LIST; that is a limit, not a fault.
        if (isPlainReply(error)) {
          throw new OpsError(ErrorCode.NotSupported, {
            system: system.name,
            type: 'bullmq',
            what: 'listWorkers',
          });
        }
        throw error;
      });
      return workersFromClientList(String(list), prefix, names);
    });
  }

  async function running(queues?: readonly string[]): Promise<RunningWork[]> {
    return await withRedis(async () =>
      readRunning(client, prefix, queues ? await queueNames.resolve([...queues]) : await queueNames.list()),
    );
  }

  async function nextJobs(queue: string, limit: number): Promise<QueuedJob[]> {
    return await withRedis(async () => {
      await queueNames.resolve([queue]);
      ctx.counters.commands += 1;
      ctx.counters.roundTrips += 1;
      return await readNextJobs(client, prefix, queue, limit);
    });
  }

  async function queueLimits(queue: string): Promise<QueueLimits> {
    return await withRedis(async () => {
      await queueNames.resolve([queue]);
      return await readLimits(ctx, queue);
    });
  }

  return {
    listQueues,
    job,
    dlq: (queue: string, limit: number, options?: DlqOptions) => readDlq(ctx, queue, limit, options),
    workers,
    running,
    nextJobs,
    queueLimits,
  };
}

async function readDlq(
  ctx: BullmqContext,
  queue: string,
  limit: number,
  options?: DlqOptions,
): Promise<DlqSample> {
  const { prefix, client, queueNames, withRedis, exec } = ctx;
  const take = Math.min(MAX_LIMIT, Math.max(1, Math.floor(Number.isFinite(limit) ? limit : 10)));
  // Grouping reads the newest GROUP_ERRORS_OVER; the newest alone read only what is shown.
  const over = options?.newestOnly ? take : GROUP_ERRORS_OVER;
  return await withRedis(async () => {
    await queueNames.resolve([queue]);
    const failedKey = `${prefix}:${queue}:failed`;
    const head = client.pipeline();
    head.zcard(failedKey);
    head.zrevrange(failedKey, 0, over - 1, 'WITHSCORES');
    const [[totalError, total], [rangeError, range]] = (await exec(head)) as [
      [Error | null, unknown],
      [Error | null, unknown],
    ];
    if (totalError) throw totalError;
    if (rangeError) throw rangeError;
    const flat = range as string[];
    const ids: string[] = [];
    const scores: number[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      ids.push(flat[i]!);
      scores.push(Number(flat[i + 1]));
    }

    // The sample: a handful of fields per job, never `data`, `opts` or the stacktrace.
    const sampleIds = ids.slice(0, take);
    const reasons = new Map<number, string | null>();
    const jobs: FailedJob[] = [];
    if (sampleIds.length > 0) {
      const sample = client.pipeline();
      for (const id of sampleIds) {
        sample.hmget(`${prefix}:${queue}:${id}`, 'name', 'failedReason', 'atm', 'attemptsMade', 'finishedOn');
      }
      const replies = await exec(sample);
      replies.forEach(([error, reply], index) => {
        if (error) throw error;
        const [name, failedReason, atm, attemptsMade, finishedOn] = reply as (string | null)[];
        // Removed between the two reads (removeOnFail, clean): not a dead letter any more.
        if (name === null && failedReason === null && finishedOn === null) return;
        reasons.set(index, failedReason ?? '');
        const failedAt = finishedOn !== null ? Number(finishedOn) : scores[index]!;
        jobs.push({
          id: sampleIds[index]!,
          name: name ?? '',
          error: firstLine(failedReason),
          attempts: toNumber(atm ?? attemptsMade),
          failedAt: Number.isFinite(failedAt) ? failedAt : null,
        });
      });
    }

    // Grouping reads only failedReason, in bounded batches, over the newest GROUP_ERRORS_OVER.
    for (let start = sampleIds.length; start < ids.length; start += GROUP_BATCH) {
      const batch = client.pipeline();
      const end = Math.min(ids.length, start + GROUP_BATCH);
      for (let i = start; i < end; i++) batch.hget(`${prefix}:${queue}:${ids[i]}`, 'failedReason');
      const replies = await exec(batch);
      replies.forEach(([error, reply], offset) => {
        if (error) throw error;
        if (reply !== null) reasons.set(start + offset, String(reply));
      });
    }
    // Newest first, so each group's example is its newest failure.
    const topErrors = groupErrors([...reasons.entries()].sort((a, b) => a[0] - b[0]).map(([, r]) => r));
    return { queue, total: toNumber(total), jobs, topErrors, groupedOver: reasons.size };
  });
}

/** A queue's concurrency and rate limit, from its `meta` (with the BullMQ version that reads them). */
export async function readLimits(ctx: BullmqContext, queue: string): Promise<QueueLimits> {
  const { prefix, single } = ctx;
  const reply = await single((r) =>
    r.hmget(`${prefix}:${queue}:meta`, 'version', 'concurrency', 'max', 'duration'),
  );
  return queueLimitsOf(queue, reply);
}
