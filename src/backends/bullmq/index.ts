import { type ChainableCommander, Cluster, type Redis } from 'ioredis';
import type { BullmqSystemConfig } from '../../config/schema.js';
import { ErrorCode, OpsError } from '../../errors.js';
import { groupErrors } from '../error-groups.js';
import { isPartial, type PurgeSelection } from '../job-filter.js';
import { execWithScripts, type PipelineStep, runScript } from '../lua.js';
import { withUnavailable } from '../purger-errors.js';
import {
  type DlqOptions,
  type DlqSample,
  type FailedJob,
  type FailOutcome,
  type JobLockInfo,
  limitRefusal,
  type PauseOutcome,
  type QueueBackend,
  type QueueCounts,
  type QueuedJob,
  type QueueLimitChange,
  type QueueLimits,
  type QueuePurger,
  type RetryOutcome,
  type RetryPreview,
  type RetryProgress,
  type RetrySelection,
  type RunningWork,
  type StatusOptions,
  type SystemStatus,
  type SystemWarning,
  type ThroughputOptions,
  type WorkerInfo,
} from '../queue-backend.js';
import { createQueueNames } from '../queue-names.js';
import { ensureConnected, parseMemoryInfo, toRedisUnavailable, urlSecrets } from '../redis-client.js';
import { isPlainReply, isReplyError, isVagueConnectionError } from '../redis-errors.js';
import { readNetwork, readPersistence, readRedisHealth, readRedisSignals } from '../redis-health.js';
import { workersFromClientList } from './client-list.js';
import { bullmqConnections } from './connections.js';
import { failWithBullmq, jobLockWithBullmq } from './fail.js';
import { readBullmqJob } from './job.js';
import { limitsOfMeta, metaWrite, queueLimitsOf, SET_LIMIT_IF, setLimitIfArgs } from './limits.js';
import { readNextJobs } from './next-jobs.js';
import { type BullmqMajor, majorOfVersion, setPausedWithBullmq } from './pause.js';
import { createBullmqRetry } from './retry.js';
import { readRunning } from './running.js';
import { RATE_FIELDS, STATUS_BATCH, STATUS_BATCH_QUEUES, STATUS_FIELDS } from './status-script.js';
import { readThroughput, throughputOf } from './throughput.js';
import { DELAYED_DUE, THROUGHPUT_BATCH, THROUGHPUT_BATCH_QUEUES } from './throughput-script.js';

/** The purger (and the archive's line format it writes), loaded when a purge or an undo runs. */
const loadPurger = () => import('./purge.js');

/** A purge of the jobs a filter selects, on top of it. */
const loadPurgeSelection = () => import('./purge-selection.js');

export { parseClientList, workersFromClientList } from './client-list.js';
export { type BullmqMajor, majorOfVersion } from './pause.js';

export interface BullmqBackendOptions {
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  /** Epoch milliseconds; injectable so tests and the bench control job ages and the discovery cache. */
  now?: () => number;
}

/** What the backend has sent to Redis so far, for the bench's "commands per status call". */
export interface BullmqCommandStats {
  /** Commands sent by the client (a script call counts once, whatever it runs inside Redis). */
  commands: number;
  /** Network round trips (one per pipeline or single command). */
  roundTrips: number;
}

/** A `QueueBackend` over BullMQ 5.x or 6.x queues, plus counters for the bench. */
export interface BullmqBackend extends QueueBackend {
  readonly type: 'bullmq';
  /** Through BullMQ's own `Queue.pause()`, of the major the queue was written by. */
  pause(queue: string): Promise<PauseOutcome>;
  resume(queue: string): Promise<PauseOutcome>;
  /** What BullMQ's own `reprocessJob` of the queue's major does, one script per batch (see retry.ts). */
  previewRetry(queue: string, selection: RetrySelection): Promise<RetryPreview>;
  retry(queue: string, selection: RetrySelection, progress?: RetryProgress): Promise<RetryOutcome>;
  running(queues?: readonly string[]): Promise<RunningWork[]>;
  nextJobs(queue: string, limit: number): Promise<QueuedJob[]>;
  jobLock(queue: string, id: string): Promise<JobLockInfo>;
  failJob(queue: string, id: string, reason: string): Promise<FailOutcome>;
  queueLimits(queue: string): Promise<QueueLimits>;
  setQueueLimit(
    queue: string,
    change: QueueLimitChange,
    options?: { onlyIf?: QueueLimitChange['value'] },
  ): Promise<{ before: QueueLimits; after: QueueLimits; written?: boolean }>;
  /** Purge and undo of one queue, on a connection of its own (see purge.ts). */
  purger(queue: string, selection?: PurgeSelection): Promise<QueuePurger>;
  /** Cumulative since creation; take a difference around a call to cost it. */
  stats(): BullmqCommandStats;
}

/**
 * How long discovered queue names are fresh; then the next read answers from them and SCANs in
 * the background (src/backends/queue-names.ts). A SCAN walks every key, jobs included, so it runs
 * at most once in this span; a queue asked for by name is looked for at once.
 */
export const DISCOVERY_TTL_MS = 5 * 60_000;
/**
 * An answer, even a failure, within 5 s of Redis going silent: Slack shows a slash command's
 * answer for a few seconds only, and an operator waiting longer assumes the bot is down.
 */
const DEADLINE_MS = 4_500;
const SCAN_COUNT = 1000;
const MAX_LIMIT = 100;
/** `topErrors` never reads more than this many failures. */
export const GROUP_ERRORS_OVER = 500;
const GROUP_BATCH = 100;
/** BullMQ needs every key kept; any other policy can silently drop jobs. */
const REQUIRED_POLICY = 'noeviction';
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

/** SCAN MATCH is a glob; a prefix like `{hs}` is literal, but `*?[]\` would not be. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

function firstLine(text: string | null | undefined): string {
  return (text ?? '').split(/\r?\n/, 1)[0]!.trim();
}

function toNumber(value: unknown): number {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

/**
 * A `QueueBackend` for one BullMQ system. Reads go through one fail-fast ioredis client (no
 * offline queue, short timeouts); `status` is one pipelined round trip (INFO memory, CLIENT LIST,
 * and one read-only script per queue), and pause/resume use BullMQ's own Queue of the major the
 * queue was written by.
 */
export function createBullmqBackend(
  system: BullmqSystemConfig,
  options: BullmqBackendOptions = {},
): BullmqBackend {
  const now = options.now ?? Date.now;
  const secrets = urlSecrets(system.redis);
  const prefix = system.prefix;
  const connect = bullmqConnections(system, {
    connectTimeoutMs: options.connectTimeoutMs,
    commandTimeoutMs: options.commandTimeoutMs,
  });
  const client = connect({ connectionName: `queue-ops:${system.name}` });
  // ioredis reports why a connection failed only as an 'error' event; the promise just says
  // "closed" or times out, which tells the on-call engineer less than "connection refused".
  let lastConnectionError: unknown;
  client.on('error', (error) => {
    lastConnectionError = error;
  });
  client.on('ready', () => {
    lastConnectionError = undefined;
  });
  const counters: BullmqCommandStats = { commands: 0, roundTrips: 0 };
  let closed = false;
  const scanProgress = new Set<() => void>();

  const unavailable = (error: unknown) => toRedisUnavailable(system.name, error, secrets);

  /**
   * Runs `work` against a connected client and answers within the deadline whatever Redis does:
   * a server that accepts the TCP connection but never replies (SIGSTOP, a stuck host) would
   * otherwise leave the ready check waiting forever.
   */
  async function withRedis<T>(work: (expired: AbortSignal) => Promise<T>): Promise<T> {
    if (closed) throw unavailable(new Error('backend closed'));
    let timer: NodeJS.Timeout | undefined;
    let expire: () => void = () => {};
    // Told to the work when the caller has been answered: work of several round trips (a retry's
    // batches) must then stop before its next one, or it would go on, unaudited, once Redis is back.
    const expiry = new AbortController();
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(expire, DEADLINE_MS);
    };
    const deadline = new Promise<never>((_, reject) => {
      expire = () => {
        expiry.abort();
        reject(new Error('Command timed out'));
      };
      arm();
    });
    // A first discovery on a big keyspace is many SCAN replies (about 1 s per million keys);
    // each one proves Redis is alive, so the deadline counts silence, not total time.
    scanProgress.add(arm);
    try {
      return await Promise.race([
        (async () => {
          await ensureConnected(client);
          return await work(expiry.signal);
        })(),
        deadline,
      ]);
    } catch (error) {
      if (error instanceof OpsError) throw error;
      if (isPlainReply(error)) throw error;
      throw unavailable(isVagueConnectionError(error) && lastConnectionError ? lastConnectionError : error);
    } finally {
      scanProgress.delete(arm);
      clearTimeout(timer);
    }
  }

  /** Sends a pipeline and returns its replies, throwing the first error that is not a reply error. */
  async function exec(pipeline: ChainableCommander): Promise<[Error | null, unknown][]> {
    counters.commands += pipeline.length;
    counters.roundTrips += 1;
    const results = (await pipeline.exec()) ?? [];
    // A reply proves Redis alive: work of several pipelines (a retry's batches) is bounded by
    // silence, like a long SCAN, not by its total time.
    for (const onProgress of scanProgress) onProgress();
    for (const [error] of results) if (error && !isReplyError(error)) throw error;
    return results;
  }

  async function single<T>(send: (redis: Redis) => Promise<T>): Promise<T> {
    counters.commands += 1;
    counters.roundTrips += 1;
    return await send(client);
  }

  /** On a cluster, the master holding the prefix's one slot, where every key of the queues lives. */
  async function prefixNode(): Promise<Redis> {
    const asCluster = client as unknown as Cluster;
    if (!(asCluster instanceof Cluster)) return client;
    const slot = Number(await asCluster.call('CLUSTER', 'KEYSLOT', `${prefix}:meta`));
    const owner = asCluster.slots[slot]?.[0];
    const node = asCluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner);
    if (!node) throw new Error(`no master holds slot ${slot} of ${prefix}`);
    return node;
  }

  async function scanQueues(): Promise<string[]> {
    const pattern = `${escapeGlob(prefix)}:*:meta`;
    const head = prefix.length + 1;
    const found = new Set<string>();
    // A cluster's keys are spread over its masters: each is scanned on its own.
    const asCluster: unknown = client;
    const nodes: Redis[] = asCluster instanceof Cluster ? asCluster.nodes('master') : [client];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await single(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT));
        cursor = next;
        for (const onProgress of scanProgress) onProgress();
        for (const key of keys) {
          const name = key.slice(head, -':meta'.length);
          // BullMQ refuses ':' in queue names; such a key belongs to a longer prefix or is not a queue.
          if (name && !name.includes(':')) found.add(name);
        }
      } while (cursor !== '0');
    }
    return [...found].sort();
  }

  const queueNames = createQueueNames({
    system: system.name,
    configured: system.queues,
    patterns: system.queuePatterns,
    discover: scanQueues,
    now,
    ttlMs: DISCOVERY_TTL_MS,
  });

  /** One queue's values in a {@link STATUS_BATCH} reply (integers), from `at`. */
  function queueSnapshot(name: string, reply: number[], at: number, countsFailedSince: boolean): QueueCounts {
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
      oldestWaitingSeconds: due < 0 ? null : Math.max(0, Math.floor((now() - due) / 1000)),
    };
    if (countsFailedSince) snapshot.failedSince = reply[at + 10]!;
    if (due >= 0) snapshot.oldestWaitingFrom = 'due';
    return snapshot;
  }

  // The finished sets' scores are when each job finished (BullMQ's finishedOn); `+inf` counts nothing.
  const statusSteps = (
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
  const throughputSteps = (names: string[], options: ThroughputOptions, at: number): PipelineStep[] => {
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

  const retries = createBullmqRetry({
    system: system.name,
    prefix,
    client,
    exec,
    withRedis,
    resolveQueue: async (queue) => {
      await queueNames.resolve([queue]);
    },
    now,
  });

  const backend: BullmqBackend = {
    name: system.name,
    type: 'bullmq',

    async listQueues(lookingFor) {
      const names = () => (lookingFor ? queueNames.lookFor(lookingFor) : queueNames.list());
      // Only configured names need no Redis; patterns are matched against a discovery.
      if (system.queues && !system.queuePatterns) return names();
      return await withRedis(names);
    },

    async redisHealth(budget) {
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
    },

    async persistence() {
      return await withRedis(async () => readPersistence(await prefixNode()));
    },

    async redisSignals() {
      return await withRedis(async () => readRedisSignals(await prefixNode()));
    },

    async network(during?: Promise<unknown>) {
      return await withRedis(async () => readNetwork(await prefixNode(), during));
    },

    async status(queues?: string[], options?: StatusOptions): Promise<SystemStatus> {
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
        if (tp && !ratesOnly) extra.push(...throughputSteps(names, tp, at));
        const throughputCalls = extra.length;
        if (options?.delayedDue)
          for (const name of names)
            extra.push({ script: DELAYED_DUE, keys: [`${prefix}:${name}:delayed`], args: [at] });
        const counted = statusSteps(names, at, failedSince, ratesOnly ? rateSince : undefined);
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
            const snapshot = queueSnapshot(names[first + i]!, values, i * fields, failedSince !== undefined);
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
    },

    async job(queue, id) {
      if (queue === undefined) throw new Error('a BullMQ job is looked up in its queue');
      return await withRedis(async () => {
        await queueNames.resolve([queue]);
        const job = await readBullmqJob(client, prefix, queue, id);
        if (job) return { found: true, kind: 'bullmq', job };
        return { found: false, looked: [`${prefix}:${queue}:${id}`] };
      });
    },

    async dlq(queue: string, limit: number, options?: DlqOptions): Promise<DlqSample> {
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
            sample.hmget(
              `${prefix}:${queue}:${id}`,
              'name',
              'failedReason',
              'atm',
              'attemptsMade',
              'finishedOn',
            );
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
    },

    async workers(): Promise<WorkerInfo[]> {
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
    },

    async pause(queue: string): Promise<PauseOutcome> {
      return await setPaused(queue, true);
    },

    async resume(queue: string): Promise<PauseOutcome> {
      return await setPaused(queue, false);
    },

    previewRetry: retries.previewRetry,
    retry: retries.retry,

    async running(queues?: readonly string[]): Promise<RunningWork[]> {
      return await withRedis(async () =>
        readRunning(client, prefix, queues ? await queueNames.resolve([...queues]) : await queueNames.list()),
      );
    },

    async nextJobs(queue, limit) {
      return await withRedis(async () => {
        await queueNames.resolve([queue]);
        counters.commands += 1;
        counters.roundTrips += 1;
        return await readNextJobs(client, prefix, queue, limit);
      });
    },

    async jobLock(queue: string, id: string): Promise<JobLockInfo> {
      return await withAdmin(queue, (admin, major) => jobLockWithBullmq(admin, prefix, queue, id, major));
    },

    async failJob(queue: string, id: string, reason: string): Promise<FailOutcome> {
      return await withAdmin(queue, (admin, major) =>
        failWithBullmq(admin, prefix, queue, id, major, reason, system.name),
      );
    },

    async queueLimits(queue: string): Promise<QueueLimits> {
      return await withRedis(async () => {
        await queueNames.resolve([queue]);
        return await readLimits(queue);
      });
    },

    async setQueueLimit(queue, change, options = {}) {
      return await withRedis(async () => {
        await queueNames.resolve([queue]);
        const before = await readLimits(queue);
        // Taking a limit off is always allowed; setting one the queue's workers would ignore is not.
        const refused = change.value === null ? undefined : limitRefusal(system.name, before, change.kind);
        if (refused) throw refused;
        const meta = `${prefix}:${queue}:meta`;
        if ('onlyIf' in options) {
          // Checked and written in one step: a read here and a write later could undo a change
          // another process made in between (a newer limit set while this one ran out).
          const args = setLimitIfArgs(change, options.onlyIf ?? null);
          const written = (await single((r) => runScript(r, SET_LIMIT_IF, [meta], args))) === 1;
          return { before, after: await readLimits(queue), written };
        }
        const write = metaWrite(change);
        await single((r) => (write.set ? r.hset(meta, write.set) : r.hdel(meta, ...write.remove!)));
        return { before, after: await readLimits(queue), written: true };
      });
    },

    async purger(queue: string, selection?: PurgeSelection): Promise<QueuePurger> {
      const [{ createBullmqPurger }, selecting] = await Promise.all([
        loadPurger(),
        isPartial(selection) ? loadPurgeSelection() : undefined,
      ]);
      await withRedis(() => queueNames.resolve([queue]));
      // Its own connection: a purge pipelines thousands of calls, which must not queue behind (or
      // ahead of) the status reads, and its calls may take longer than the read deadline.
      const connection = connect({
        connectionName: `queue-ops:${system.name}:purge`,
        commandTimeoutMs: 30_000,
      });
      try {
        await ensureConnected(connection);
      } catch (error) {
        connection.disconnect();
        throw unavailable(error);
      }
      const whole = createBullmqPurger({ client: connection, prefix, queue, now });
      const purger = selecting
        ? selecting.withSelection(whole, { client: connection, prefix, queue, selection: selection!, now })
        : whole;
      return withUnavailable(purger, unavailable);
    },

    async close() {
      closed = true;
      // disconnect, not quit: QUIT would wait on a Redis that hangs.
      client.disconnect();
    },

    stats() {
      return { ...counters };
    },
  };

  /**
   * Runs `work` with BullMQ's own classes of the queue's major on a short-lived connection of its
   * own (see setPaused), mapping connection failures to `RedisUnavailable`.
   */
  async function withAdmin<T>(
    queue: string,
    work: (admin: Redis, major: BullmqMajor) => Promise<T>,
  ): Promise<T> {
    const version = await withRedis(async () => {
      await queueNames.resolve([queue]);
      return await single((r) => r.hget(`${prefix}:${queue}:meta`, 'version'));
    });
    // The system's whole endpoint, as every connection: TLS files, Sentinel, Cluster.
    const admin = connect({ connectionName: `queue-ops:${system.name}:admin` });
    try {
      await ensureConnected(admin);
      return await work(admin, majorOfVersion(version));
    } catch (error) {
      if (error instanceof OpsError) throw error;
      if (isPlainReply(error)) throw error;
      throw unavailable(error);
    } finally {
      admin.disconnect();
    }
  }

  async function readLimits(queue: string): Promise<QueueLimits> {
    const reply = await single((r) =>
      r.hmget(`${prefix}:${queue}:meta`, 'version', 'concurrency', 'max', 'duration'),
    );
    return queueLimitsOf(queue, reply);
  }

  async function setPaused(queue: string, paused: boolean): Promise<PauseOutcome> {
    const version = await withRedis(async () => {
      await queueNames.resolve([queue]);
      return await single((r) => r.hget(`${prefix}:${queue}:meta`, 'version'));
    });
    // BullMQ defines its scripts on the connection it is given: a separate, short-lived one keeps
    // 5.x and 6.x scripts (same names, different bodies) apart and off the read client.
    const admin = connect({ connectionName: `queue-ops:${system.name}:admin` });
    try {
      await ensureConnected(admin);
      await setPausedWithBullmq(admin, prefix, queue, majorOfVersion(version), paused);
      const isPaused = (await admin.hexists(`${prefix}:${queue}:meta`, 'paused')) === 1;
      return { queue, isPaused };
    } catch (error) {
      if (error instanceof OpsError) throw error;
      if (isPlainReply(error)) throw error;
      throw unavailable(error);
    } finally {
      admin.disconnect();
    }
  }

  return backend;
}
