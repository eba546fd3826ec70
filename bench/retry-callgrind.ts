/**
 * Instructions Redis executes for a retry of 1,000 failed BullMQ jobs: queue-ops `retry` beside
 * BullMQ's `Queue.retryJobs({count: 1000})`, each on the same jobs, counted by valgrind's callgrind
 * on a private redis-server. Load on the machine does not sway an instruction count the way it
 * sways wall time. Each run restores the same failed jobs (DUMP/RESTORE of every key of a queue a
 * real worker failed), zeroes the counters, runs the retry on a fresh connection (its handshake
 * counted, as the bench's times count it), and dumps them. Needs valgrind (callgrind_control).
 *
 *   npx tsx bench/retry-callgrind.ts [runs per variant, default 3]
 *
 * Prints each run's total and the median per variant; the profiles stay in the printed directory
 * for `callgrind_annotate --inclusive=yes <file>`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createBullmqBackend } from '../src/backends/bullmq/index.js';
import { freePort, privateRedisArgs, spawnRedis, startPrivateRedis } from '../src/lib/redis-server.js';
import { JOBS, PREFIX, seedFailed } from './retry.js';

const RUNS = Number(process.argv[2] ?? 3);
const QUEUE = 'cg';

type Variant = (url: string) => Promise<void>;

const variants: { label: string; run: Variant }[] = [
  {
    label: 'queue-ops retry',
    run: async (url) => {
      const backend = createBullmqBackend(
        { name: 'bench', type: 'bullmq', redis: url, prefix: PREFIX, queues: [QUEUE] },
        { commandTimeoutMs: 600_000, connectTimeoutMs: 60_000 },
      );
      await backend.retry(QUEUE, { all: true, limit: JOBS });
      await backend.close();
    },
  },
  {
    label: 'BullMQ Queue.retryJobs({count: 1000})',
    run: async (url) => {
      const queue = new Queue(QUEUE, { connection: { url }, prefix: PREFIX });
      await queue.retryJobs({ count: JOBS, state: 'failed' });
      await queue.close();
    },
  },
];

/** Every key of the seeded queue, as DUMP gives it. */
async function snapshot(url: string): Promise<[string, Buffer][]> {
  const redis = new Redis(url);
  const keys = await redis.keys(`${PREFIX}:${QUEUE}:*`);
  const dumped: [string, Buffer][] = [];
  for (const key of keys) dumped.push([key, (await redis.dumpBuffer(key))!]);
  redis.disconnect();
  return dumped;
}

function totalOf(file: string): number {
  const line = /^(?:summary|totals):\s*(\d+)/m.exec(readFileSync(file, 'utf8'));
  return Number(line?.[1] ?? Number.NaN);
}

const seedRedis = await startPrivateRedis();
let dumped: [string, Buffer][];
try {
  await seedFailed(seedRedis.url, QUEUE);
  dumped = await snapshot(seedRedis.url);
} finally {
  await seedRedis.stop();
}

const dir = mkdtempSync(join(tmpdir(), 'retry-callgrind-'));
const port = await freePort();
const child = await spawnRedis(
  [
    '--tool=callgrind',
    '--dump-instr=no',
    `--callgrind-out-file=${dir}/callgrind.out.%p`,
    'redis-server',
    ...privateRedisArgs(port, dir),
  ],
  { binary: 'valgrind', ready: /Ready to accept connections/ },
);
const url = `redis://127.0.0.1:${port}`;
const admin = new Redis(url);
const control = (flag: string) => execFileSync('callgrind_control', [flag, String(child.pid)]);
const dumps = () => new Set(readdirSync(dir).filter((f) => f.startsWith('callgrind.out.')));

async function restore(): Promise<void> {
  await admin.flushall();
  const pipeline = admin.pipeline();
  for (const [key, value] of dumped) pipeline.restore(key, 0, value);
  await pipeline.exec();
}

const results = new Map<string, number[]>();
try {
  // One unmeasured run each: the scripts cached, modules loaded.
  for (const variant of variants) {
    await restore();
    await variant.run(url);
  }
  for (let i = 0; i < RUNS; i++) {
    for (const variant of variants) {
      await restore();
      const before = dumps();
      control('-z');
      await variant.run(url);
      control('-d');
      const file = [...dumps()].find((f) => !before.has(f))!;
      const total = totalOf(join(dir, file));
      results.set(variant.label, [...(results.get(variant.label) ?? []), total]);
      const failed = await admin.zcard(`${PREFIX}:${QUEUE}:failed`);
      if (failed !== 0) throw new Error(`${failed} jobs still failed after ${variant.label}`);
      console.log(`${variant.label}: ${(total / 1e6).toFixed(2)} M instructions (${join(dir, file)})`);
    }
  }
} finally {
  admin.disconnect();
  child.kill('SIGTERM');
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [label, totals] of results)
  console.log(`${label}: median ${(median(totals) / 1e6).toFixed(2)} M (${totals.length} runs)`);
