import { execWithScripts, type PipelineStep } from '../lua.js';
import type {
  QueueCounts,
  StatusOptions,
  SystemStatus,
  SystemWarning,
  ThroughputOptions,
  WorkerInfo,
} from '../queue-backend.js';
import { parseMemoryInfo } from '../redis-client.js';
import { workersFromClientList } from './client-list.js';
import type { BullmqContext } from './context.js';
import { limitsOfMeta } from './limits.js';
import { firstLine } from './reads.js';
import { RATE_FIELDS, STATUS_BATCH, STATUS_BATCH_QUEUES, STATUS_FIELDS } from './status-script.js';
import { readThroughput, throughputOf } from './throughput.js';
import { DELAYED_DUE, THROUGHPUT_BATCH, THROUGHPUT_BATCH_QUEUES } from './throughput-script.js';

/** BullMQ needs every key kept; any other policy can silently drop jobs. */
const REQUIRED_POLICY = 'noeviction';

/** `status` of a BullMQ system: one pipelined round trip (INFO memory, CLIENT LIST, the status scripts). */
export function createBullmqStatus(
  ctx: BullmqContext,
): (queues?: string[], options?: StatusOptions) => Promise<SystemStatus> {
  return (queues, options) => bullmqStatus(ctx, queues, options);
}

async function bullmqStatus(
  ctx: BullmqContext,
  queues?: string[],
  options?: StatusOptions,
): Promise<SystemStatus> {
  const { system, now, prefix, client, queueNames, withRedis, exec } = ctx;
  const failedSince = options?.failedSince;
  return await withRedis(async () => {
    const names = queues ? await queueNames.resolve(queues) : await queueNames.list();
    const at = now();
    const tp = options?.throughput;
    // Rates alone (nothing to time) are a few calls a queue inside the status script itself;
    // timing jobs, or their raw durations, takes the throughput script.
    const ratesOnly = tp !== undefined && tp.sample <= 0 && tp.raw !== true;
    const rateSince = tp ? Math.floor(at - tp.spanMs) : undefined;
    const extra: PipelineStep[] = [];
    if (tp && !ratesOnly) extra.push(...throughputSteps(prefix, names, tp, at));
    const throughputCalls = extra.length;
    if (options?.delayedDue)
      for (const name of names)
        extra.push({ script: DELAYED_DUE, keys: [`${prefix}:${name}:delayed`], args: [at] });
    const counted = statusSteps(prefix, names, at, failedSince, ratesOnly ? rateSince : undefined);
    const fields = ratesOnly ? STATUS_FIELDS + RATE_FIELDS : STATUS_FIELDS;
    const all = await execWithScripts(
      client,
      [{ command: (p) => p.info('memory') }, { command: (p) => p.client('LIST') }, ...counted, ...extra],
      exec,
    );
    const results = all.slice(0, 2 + counted.length);

    const [infoError, info] = results[0]!;
    if (infoError) throw infoError;
    const redis = parseMemoryInfo(String(info));

    const counts: QueueCounts[] = [];
    const rateWindow = { now: at, since: rateSince ?? at };
    results.slice(2).forEach(([error, reply], batch) => {
      const first = batch * STATUS_BATCH_QUEUES;
      if (error) throw new Error(`BullMQ queues ${names[first]}…: ${error.message}`);
      const values = reply as number[];
      for (let i = 0; first + i < names.length && i < STATUS_BATCH_QUEUES; i++) {
        const snapshot = queueSnapshot(
          names[first + i]!,
          values,
          i * fields,
          failedSince !== undefined,
          now(),
        );
        if (ratesOnly) {
          const r = i * fields + STATUS_FIELDS;
          snapshot.throughput = throughputOf(
            {
              completed: values[r]!,
              completedOldest: values[r + 1]!,
              failed: values[r + 2]!,
              failedOldest: values[r + 3]!,
              metricsCompleted: values[r + 4]!,
              metricsFailed: values[r + 5]!,
            },
            rateWindow,
            { wait: { unknown: 'notSampled' }, run: { unknown: 'notSampled' }, sampled: 0 },
          );
        }
        counts.push(snapshot);
      }
    });

    const extras = all.slice(2 + counted.length);
    if (options?.throughput && !ratesOnly) {
      const window = {
        now: at,
        since: Math.floor(at - options.throughput.spanMs),
        raw: options.throughput.raw === true,
        sample: options.throughput.sample,
      };
      extras.slice(0, throughputCalls).forEach(([error, reply], batch) => {
        if (error) throw error;
        const values = reply as number[];
        let offset = 0;
        const first = batch * THROUGHPUT_BATCH_QUEUES;
        for (let i = first; i < Math.min(names.length, first + THROUGHPUT_BATCH_QUEUES); i++) {
          const read = readThroughput(values, offset, window);
          counts[i]!.throughput = read.throughput;
          offset = read.next;
        }
      });
    }
    if (options?.delayedDue) {
      extras.slice(throughputCalls).forEach(([error, reply], i) => {
        if (error) throw error;
        const [next5m, nextHour, nextDay, later] = reply as number[];
        counts[i]!.delayedDue = {
          next5m: next5m!,
          nextHour: nextHour!,
          nextDay: nextDay!,
          later: later!,
        };
      });
    }

    const warnings: SystemWarning[] = [];
    if (redis.maxMemoryPolicy !== REQUIRED_POLICY) {
      warnings.push({ code: 'EvictionPolicy', params: { policy: redis.maxMemoryPolicy } });
    }
    const [listError, list] = results[1]!;
    let workers: WorkerInfo[] = [];
    if (listError) {
      // Managed Redis (GCP Memorystore and others) may refuse CLIENT LIST.
      warnings.push({ code: 'WorkerInspectFailed', params: { reason: firstLine(listError.message) } });
    } else {
      workers = workersFromClientList(String(list), prefix, names);
    }
    return { name: system.name, type: 'bullmq', redis, queues: counts, workers, warnings };
  });
}

/** One queue's values in a {@link STATUS_BATCH} reply (integers), from `at`. */
function queueSnapshot(
  name: string,
  reply: number[],
  at: number,
  countsFailedSince: boolean,
  now: number,
): QueueCounts {
  const due = reply[at + 9]!;
  // Field by field (no spread): one of these per queue, 1,000s a monitor tick.
  const snapshot: QueueCounts = {
    name,
    waiting: reply[at]! + reply[at + 1]!,
    active: reply[at + 2]!,
    delayed: reply[at + 4]!,
    prioritized: reply[at + 3]!,
    failed: reply[at + 5]!,
    completed: reply[at + 6]!,
    waitingChildren: reply[at + 7]!,
    isPaused: reply[at + 8] === 1,
    limits: limitsOfMeta(reply[at + 11], reply[at + 12], reply[at + 13]),
    oldestWaitingSeconds: due < 0 ? null : Math.max(0, Math.floor((now - due) / 1000)),
  };
  if (countsFailedSince) snapshot.failedSince = reply[at + 10]!;
  if (due >= 0) snapshot.oldestWaitingFrom = 'due';
  return snapshot;
}

// The finished sets' scores are when each job finished (BullMQ's finishedOn); `+inf` counts nothing.
const statusSteps = (
  prefix: string,
  names: string[],
  at: number,
  failedSince?: number,
  rateSince?: number,
): PipelineStep[] => {
  const since = failedSince === undefined ? '+inf' : String(Math.floor(failedSince));
  const rates = rateSince === undefined ? '+inf' : String(Math.floor(rateSince));
  const steps: PipelineStep[] = [];
  for (let start = 0; start < names.length; start += STATUS_BATCH_QUEUES) {
    const batch = names.slice(start, start + STATUS_BATCH_QUEUES);
    steps.push({
      script: STATUS_BATCH,
      keys: [`${prefix}:${batch[0]}:meta`],
      args: [`${prefix}:`, since, rates, at, ...batch],
      integers: true,
    });
  }
  return steps;
};

/** Read only when asked (`StatusOptions.throughput`): it costs more than the counts. */
const throughputSteps = (
  prefix: string,
  names: string[],
  options: ThroughputOptions,
  at: number,
): PipelineStep[] => {
  const steps: PipelineStep[] = [];
  const sample = Math.min(500, Math.max(0, Math.floor(options.sample)));
  for (let start = 0; start < names.length; start += THROUGHPUT_BATCH_QUEUES) {
    const batch = names.slice(start, start + THROUGHPUT_BATCH_QUEUES);
    steps.push({
      script: THROUGHPUT_BATCH,
      keys: [`${prefix}:${batch[0]}:meta`],
      args: [`${prefix}:`, at, Math.floor(at - options.spanMs), sample, options.raw ? '1' : '0', ...batch],
    });
  }
  return steps;
};
