/**
 * The escalation monitor for a day and more on a controlled clock: `npm run bench -- soak` (1,000
 * queues, `BENCH_SOAK_QUEUES`, `BENCH_SOAK_HOURS`, `BENCH_SOAK_INTERVAL`) prints the heap (after a
 * collection) and the store's tables at the start, half way and at the end; test/load/ runs the
 * same loop small and asserts that nothing grows.
 *
 * What runs is the bot's own: `createQueueOps` over a real SQLite file and real BullMQ queues in
 * a real Redis, `createEscalation`'s monitor and outbox, posting through the Web API client to a
 * local Slack stand-in (bench/bot.ts). Only time is simulated: each tick moves the clock one
 * interval on, then the outbox is drained, as the bot's loop does. A few "hot" queues go over the
 * rule's threshold for an hour every six, so alerts open, remind, chart and resolve all along.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Database from 'better-sqlite3';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createQueueOps } from '../src/app.js';
import { configSchema } from '../src/config/schema.js';
import { createEscalation } from '../src/escalation/runtime.js';
import { createLogger } from '../src/lib/logger.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { createAlertWebClient, createSlackSender } from '../src/transports/slack/alerts.js';
import { slackStandIn } from './bot.js';

export interface SoakOptions {
  redisUrl: string;
  /** Queues in the one BullMQ system watched. */
  queues: number;
  /** Of those, how many go over the threshold for an hour every six. */
  hot: number;
  hours: number;
  intervalSeconds: number;
  /** A fresh key prefix, so several soaks can share one Redis. */
  prefix: string;
  /** Hours of simulated time after which the tables and heap are read; default 1, half, end. */
  checkpointHours?: number[];
  /** Runs `trend <hot queue> 24h` at the end in a process with this heap, MB (the bench does). */
  trendHeapMb?: number;
  /** Called at each checkpoint, e.g. to print progress. */
  log?: (text: string) => void;
}

/** The store's tables and the process's heap at one moment of simulated time. */
export interface SoakCheckpoint {
  hour: number;
  heapMb: number;
  samples: number;
  /** Oldest stored sample, hours before the simulated now. */
  oldestSampleHours: number;
  alerts: { firing: number; resolved: number };
  outbox: { rows: number; pending: number };
  /** Slack messages received so far (posts, updates, charts' uploads). */
  slackCalls: number;
  /** The store file and its WAL, MB. */
  storeMb: number;
}

export interface SoakResult {
  checkpoints: SoakCheckpoint[];
  /**
   * `trend <hot queue> 24h` at the end, in a process with a `heapMb` heap: read as the bot reads
   * it (a page at a time), and the whole day at once.
   */
  trend?: { heapMb: number; paged: TrendRun; whole: TrendRun };
  ticks: number;
  seconds: number;
  alertsOpened: number;
}

/** A full collection when the process can run one (`--expose-gc`, or switched on here). */
function collect(): void {
  let gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
  gc();
}

/** One `trend … 24h` in a child process whose heap is capped: how it went. */
export interface TrendRun {
  /** Samples drawn; undefined when the process ran out of heap (or failed otherwise). */
  points?: number;
  ms?: number;
}

/** Runs bench/trend-heap.ts with `--max-old-space-size=<heapMb>` over the soak's store. */
function trendInHeap(heapMb: number, args: string[]): TrendRun {
  const run = spawnSync(
    process.execPath,
    [
      `--max-old-space-size=${heapMb}`,
      '--import',
      'tsx',
      join(import.meta.dirname, 'trend-heap.ts'),
      ...args,
    ],
    { encoding: 'utf8' },
  );
  if (run.status !== 0) return {};
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as TrendRun;
}

const HOUR = 3_600_000;

const T0 = Date.parse('2030-06-01T00:00:00.000Z');
const THRESHOLD = 100;

export async function runMonitorSoak(options: SoakOptions): Promise<SoakResult> {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-soak-'));
  const storePath = join(dir, 'soak.db');
  const slack = await slackStandIn();
  const logger = createLogger({ level: 'silent' });
  const names = Array.from({ length: options.queues }, (_, i) => `q${String(i).padStart(4, '0')}`);
  const hot = names.slice(0, options.hot);
  const admin = new Redis(options.redisUrl);
  let clock = T0;
  const started = performance.now();
  try {
    // One real job per queue, written by BullMQ (its meta, its id counter, the job at the head).
    const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
    for (const name of names) {
      const queue = new Queue(name, { connection, prefix: options.prefix });
      await queue.add('oldest', { n: 0 });
      await queue.close();
    }
    connection.disconnect();

    const config = configSchema.parse({
      slack: { incidentChannel: 'C0INCIDENT' },
      store: `sqlite:${storePath}`,
      roles: { viewer: ['*'] },
      systems: [{ name: 'soak', type: 'bullmq', redis: options.redisUrl, prefix: options.prefix }],
      escalation: {
        intervalSeconds: options.intervalSeconds,
        clearAfterSamples: 2,
        rules: [
          { name: 'backlog', queues: ['soak/*'], metric: 'waiting', above: THRESHOLD, severity: 'warning' },
        ],
      },
    });
    const runtime = await createQueueOps({ config, env: {}, logger, now: () => new Date(clock) });
    const sender = createSlackSender(
      createAlertWebClient('xoxb-soak', { apiUrl: slack.apiUrl }),
      logger,
      'en',
    );
    const escalation = createEscalation({ runtime, logger, slack: sender, label: 'soak' });
    const raw = new Database(storePath, { readonly: true });
    const count = (sql: string) => (raw.prepare(sql).get() as { n: number }).n;
    const slackCalls = () =>
      ['chat.postMessage', 'chat.update', 'files.completeUploadExternal'].reduce(
        (n, m) => n + slack.calls(m),
        0,
      );

    const checkpoint = (): SoakCheckpoint => {
      collect();
      const oldest = raw.prepare('SELECT MIN(at) AS at FROM escalation_samples').get() as {
        at: string | null;
      };
      const size = (path: string) => {
        try {
          return statSync(path).size;
        } catch {
          return 0;
        }
      };
      return {
        hour: Math.round(((clock - T0) / HOUR) * 10) / 10,
        heapMb: process.memoryUsage().heapUsed / 1024 / 1024,
        samples: count('SELECT COUNT(*) AS n FROM escalation_samples'),
        oldestSampleHours: oldest.at ? (clock - Date.parse(oldest.at)) / HOUR : 0,
        alerts: {
          firing: count("SELECT COUNT(*) AS n FROM escalation_alerts WHERE status = 'firing'"),
          resolved: count("SELECT COUNT(*) AS n FROM escalation_alerts WHERE status = 'resolved'"),
        },
        outbox: {
          rows: count('SELECT COUNT(*) AS n FROM escalation_outbox'),
          pending: count('SELECT COUNT(*) AS n FROM escalation_outbox WHERE done_at IS NULL'),
        },
        slackCalls: slackCalls(),
        storeMb: (size(storePath) + size(`${storePath}-wal`)) / 1024 / 1024,
      };
    };

    const intervalMs = options.intervalSeconds * 1000;
    const ticks = Math.round((options.hours * HOUR) / intervalMs);
    const checkpoints: SoakCheckpoint[] = [];
    // By default after the first hour (every path warm: code, caches), half way, and at the end.
    const at = new Set(
      (options.checkpointHours ?? [1, options.hours / 2, options.hours]).map(
        (h) => Math.round((h * HOUR) / intervalMs) - 1,
      ),
    );
    let alertsOpened = 0;
    let over = false;
    for (let tick = 0; tick < ticks; tick++) {
      clock += intervalMs;
      // Hot queues go over the threshold in the first hour of every six, and back under after.
      const shouldBeOver = (clock - T0) % (6 * HOUR) < HOUR;
      if (shouldBeOver !== over) {
        over = shouldBeOver;
        const pipeline = admin.pipeline();
        for (const name of hot) {
          const key = `${options.prefix}:${name}:wait`;
          if (over)
            pipeline.lpush(key, ...Array.from({ length: THRESHOLD + 50 }, (_, i) => `soak-${tick}-${i}`));
          // BullMQ pushes on the left and takes from the right: the real job stays at the head.
          else pipeline.ltrim(key, -1, -1);
        }
        await pipeline.exec();
      }
      const outcome = await escalation.monitor.tick();
      if (outcome.leader) alertsOpened += outcome.opened.length;
      await escalation.outbox.drain();
      if (at.has(tick)) {
        checkpoints.push(checkpoint());
        options.log?.(`soak: hour ${checkpoints.at(-1)!.hour} of ${options.hours}`);
      }
    }
    raw.close();
    await escalation.monitor.stop();
    await runtime.close();
    // What `/queue trend <hot queue> 24h` needs: each way in a process with a small heap.
    const heapMb = options.trendHeapMb;
    const trendArgs = (mode: string) => [storePath, mode, 'soak', hot[0]!, String(clock)];
    const trend =
      heapMb === undefined
        ? undefined
        : {
            heapMb,
            paged: trendInHeap(heapMb, trendArgs('paged')),
            whole: trendInHeap(heapMb, trendArgs('whole')),
          };
    return { checkpoints, trend, ticks, seconds: (performance.now() - started) / 1000, alertsOpened };
  } finally {
    admin.disconnect();
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const shownTrend = (run: TrendRun) =>
  run.points === undefined ? 'ran out of heap' : `${run.points} samples in ${run.ms!.toFixed(0)} ms`;

/** `npm run bench -- soak`. */
export async function soakBench(log: (text: string) => void): Promise<string[]> {
  const redis = await startPrivateRedis();
  try {
    const queues = Number(process.env.BENCH_SOAK_QUEUES ?? 1000);
    const hours = Number(process.env.BENCH_SOAK_HOURS ?? 30);
    const intervalSeconds = Number(process.env.BENCH_SOAK_INTERVAL ?? 60);
    const result = await runMonitorSoak({
      redisUrl: `${redis.url}/0`,
      queues,
      hot: 5,
      hours,
      intervalSeconds,
      prefix: 'soak',
      // Well under the bot's heap, and above what one page of samples needs.
      trendHeapMb: 64,
      log,
    });
    const w = [10, 10, 9, 12, 15, 15, 11, 10];
    const row = (cells: string[]) =>
      cells.map((c, i) => (i === 0 ? c.padEnd(w[0]!) : c.padStart(w[i]!))).join('  ');
    return [
      '',
      `Monitor soak: ${queues.toLocaleString('en-US')} BullMQ queues, ${hours} h on a controlled clock at ${intervalSeconds} s ` +
        `(${result.ticks.toLocaleString('en-US')} ticks in ${result.seconds.toFixed(0)} s), 5 queues over the threshold 1 h in 6`,
      row(['hour', 'heap MB', 'samples', 'oldest h', 'alerts f/r', 'outbox rows', 'pending', 'store MB']),
      ...result.checkpoints.map((c) =>
        row([
          String(c.hour),
          c.heapMb.toFixed(1),
          String(c.samples),
          c.oldestSampleHours.toFixed(1),
          `${c.alerts.firing}/${c.alerts.resolved}`,
          String(c.outbox.rows),
          String(c.outbox.pending),
          c.storeMb.toFixed(1),
        ]),
      ),
      `heap: used after a full collection; samples are kept for trend's longest window (24 h); ` +
        `${result.alertsOpened} alerts opened in all.`,
      ...(result.trend
        ? [
            `trend q0000 24h in a process with a ${result.trend.heapMb} MB heap: read a page at a time as the bot does, ` +
              `${shownTrend(result.trend.paged)}; the whole day at once (as before), ${shownTrend(result.trend.whole)}.`,
          ]
        : []),
    ];
  } finally {
    await redis.stop();
  }
}
