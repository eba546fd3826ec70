/**
 * Retry of 1,000 failed BullMQ jobs: queue-ops `retry` (one script call per batch of 250 that does
 * what BullMQ's reprocessJob does id by id), next to BullMQ's `Job.retry()` one job at a time (what a script over
 * `getFailed()` does) and `Queue.retryJobs()` (one script, but oldest first, attempts kept,
 * priorities ignored). Each on loopback and through a proxy that delays every packet 1 ms each
 * way. Run by `npm run bench`, or alone: `npx tsx bench/retry.ts`. Figures only, no assertions.
 */
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createBullmqBackend } from '../src/backends/bullmq/index.js';
import type { BullmqSystemConfig } from '../src/config/schema.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { type LatencyProxy, startLatencyProxy } from '../test/helpers/latency-proxy.js';

export const JOBS = 1000;
export const PREFIX = 'bench-retry';
const LINK_DELAY_MS = 1;
/** Runs per variant, each way (loopback and link): more on a busy machine, where medians need them. */
const RUNS = Number(process.env.BENCH_RETRY_RUNS ?? 3);

interface Figure {
  ms: number;
  /** Round trips seen by the proxy (link runs). */
  roundTrips: number;
  /** Commands Redis executed, Lua's inner calls included. */
  commands: number;
  /** The longest single command (a script call whole) Redis timed, ms: how long it held Redis. */
  longestMs: number;
  /** CPU Redis spent (user + sys), ms: less swayed by a busy machine than wall time. */
  redisCpuMs: number;
}

async function redisCpuMs(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? Number.NaN);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
}

async function commandsDone(admin: Redis): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await admin.info('stats'))?.[1] ?? 0);
}

/** A fresh queue holding `JOBS` jobs that a real BullMQ worker failed. */
export async function seedFailed(url: string, name: string): Promise<void> {
  const connection = { url, maxRetriesPerRequest: null };
  const queue = new Queue(name, { connection, prefix: PREFIX });
  await queue.addBulk(
    Array.from({ length: JOBS }, (_, n) => ({
      name: 'send',
      data: { n, token: 'x'.repeat(64) },
      opts: { attempts: 1 },
    })),
  );
  const worker = new Worker(
    name,
    async () => {
      throw new Error('APNs 429 TooManyRequests');
    },
    { connection, prefix: PREFIX, concurrency: 100 },
  );
  while (((await queue.getJobCounts('failed')).failed ?? 0) < JOBS)
    await new Promise((r) => setTimeout(r, 20));
  await worker.close();
  await queue.close();
}

async function waitingOf(url: string, name: string): Promise<number> {
  const queue = new Queue(name, { connection: { url }, prefix: PREFIX });
  const counts = await queue.getJobCounts('wait', 'prioritized', 'failed');
  await queue.close();
  if (counts.failed !== 0) throw new Error(`${counts.failed} jobs still failed after the retry`);
  return (counts.wait ?? 0) + (counts.prioritized ?? 0);
}

type Variant = (url: string, name: string) => Promise<void>;

const variants: { label: string; run: Variant }[] = [
  {
    label: 'queue-ops retry (1 script per 250 jobs)',
    run: async (url, name) => {
      const system: BullmqSystemConfig = {
        name: 'bench',
        type: 'bullmq',
        redis: url,
        prefix: PREFIX,
        queues: [name],
      };
      const backend = createBullmqBackend(system, { commandTimeoutMs: 60_000 });
      await backend.retry(name, { all: true, limit: JOBS });
      await backend.close();
    },
  },
  {
    label: 'BullMQ getFailed + Job.retry() each',
    run: async (url, name) => {
      const queue = new Queue(name, { connection: { url }, prefix: PREFIX });
      const jobs = await queue.getFailed(0, JOBS - 1);
      for (const job of jobs)
        await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      await queue.close();
    },
  },
  {
    label: 'BullMQ Queue.retryJobs({count: 1000})',
    run: async (url, name) => {
      const queue = new Queue(name, { connection: { url }, prefix: PREFIX });
      await queue.retryJobs({ count: JOBS, state: 'failed' });
      await queue.close();
    },
  },
];

/** Times one variant on a freshly seeded queue; the connection setup is outside the timing only for the seed. */
async function once(
  variant: Variant,
  urls: { seed: string; run: string },
  admin: Redis,
  proxy: LatencyProxy | undefined,
  n: number,
): Promise<Figure> {
  const name = `q${n}`;
  await seedFailed(urls.seed, name);
  // Every command into the slow log, to read the longest one Redis ran.
  await admin.config('SET', 'slowlog-log-slower-than', '0');
  await admin.config('SET', 'slowlog-max-len', '100000');
  await admin.slowlog('RESET');
  const trips = proxy?.roundTrips() ?? 0;
  const cpu = await redisCpuMs(admin);
  const commands = await commandsDone(admin);
  const started = performance.now();
  await variant(urls.run, name);
  const ms = performance.now() - started;
  const figure = {
    ms,
    roundTrips: (proxy?.roundTrips() ?? 0) - trips,
    // minus the INFO that read the counter before
    commands: (await commandsDone(admin)) - commands - 1,
    longestMs: 0,
    redisCpuMs: (await redisCpuMs(admin)) - cpu,
  };
  const entries = (await admin.slowlog('GET', 100000)) as [number, number, number, string[]][];
  figure.longestMs = entries
    .filter((e) => !/^(info|slowlog|config)$/i.test(String(e[3]?.[0])))
    .reduce((max, e) => Math.max(max, Number(e[2]) / 1000), 0);
  await admin.config('SET', 'slowlog-log-slower-than', '10000');
  const back = await waitingOf(urls.seed, name);
  if (back !== JOBS) throw new Error(`${back} of ${JOBS} jobs back in the queue`);
  await admin.flushdb();
  return figure;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Runs the comparison against a Redis at `url` (DB flushed between runs) and returns the table. */
export async function benchRetry(redis: { url: string; port: number }, log: (text: string) => void) {
  const proxy = await startLatencyProxy({ host: '127.0.0.1', port: redis.port }, LINK_DELAY_MS);
  const linkedUrl = `redis://127.0.0.1:${proxy.port}/0`;
  const admin = new Redis(redis.url);
  const rows: {
    label: string;
    local: number;
    link: number;
    trips: number;
    commands: number;
    longest: number;
    redisCpu: number;
  }[] = [];
  let n = 0;
  try {
    await admin.flushdb();
    for (const variant of variants) {
      log(`retry of ${JOBS} failed jobs: ${variant.label}…`);
      // One unmeasured run first, as the status bench does: script caches, module loading, JIT.
      await once(variant.run, { seed: redis.url, run: redis.url }, admin, undefined, n++);
      const local: Figure[] = [];
      const linked: Figure[] = [];
      // Interleaved, so a burst of load elsewhere sways both the same way.
      for (let i = 0; i < RUNS; i++) {
        local.push(await once(variant.run, { seed: redis.url, run: redis.url }, admin, undefined, n++));
        linked.push(await once(variant.run, { seed: redis.url, run: linkedUrl }, admin, proxy, n++));
      }
      rows.push({
        label: variant.label,
        local: median(local.map((f) => f.ms)),
        link: median(linked.map((f) => f.ms)),
        trips: median(linked.map((f) => f.roundTrips)),
        commands: median(local.map((f) => f.commands)),
        longest: Math.max(...local.map((f) => f.longestMs)),
        redisCpu: median(local.map((f) => f.redisCpuMs)),
      });
    }
  } finally {
    admin.disconnect();
    await proxy.close();
  }
  const ours = rows[0]!;
  const widths = [42, 10, 10, 12, 10, 12, 10, 8];
  const row = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[0]!) : c.padStart(widths[i]!))).join('  ');
  const header = row([
    'Retry of 1,000 failed BullMQ jobs',
    'local ms',
    'link ms',
    'round trips',
    'commands',
    'longest call',
    'Redis CPU',
    'link ×',
  ]);
  return [
    header,
    '-'.repeat(header.length),
    ...rows.map((r) =>
      row([
        r.label,
        r.local.toFixed(1),
        r.link.toFixed(1),
        String(r.trips),
        String(r.commands),
        r.longest.toFixed(2),
        r.redisCpu.toFixed(1),
        `${(r.link / ours.link).toFixed(1)}×`,
      ]),
    ),
    `local: median of ${RUNS} runs on loopback after one warm-up; link: median of ${RUNS} runs through a proxy`,
    `delaying every packet ${LINK_DELAY_MS} ms each way (BENCH_RETRY_RUNS sets how many).`,
    "round trips: request bursts the proxy saw (a connection's handshake and ready check included);",
    "commands: executed by Redis, Lua's inner calls included; longest call: the longest single command",
    '(a script whole) Redis timed in those runs, ms, beside the purge\'s "longest call"; Redis CPU: ms',
    'of CPU Redis spent (median; the INFO reads included). Each run retries',
    '1,000 jobs a real worker failed, and checks all 1,000 are back in the queue. retryJobs takes the oldest first, keeps attempts',
    'and ignores priorities; queue-ops and Job.retry reset attempts.',
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const redis = await startPrivateRedis();
  try {
    console.log(
      (
        await benchRetry({ url: `${redis.url}/0`, port: redis.port }, (t) => process.stderr.write(`${t}\n`))
      ).join('\n'),
    );
  } finally {
    await redis.stop();
  }
}
