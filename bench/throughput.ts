/**
 * `status` with throughput over 1,000 BullMQ queues, beside the plain `status()` read: what the
 * throughput columns cost. Every queue has 700 waiting jobs (bare ids), and 200 completed and 50
 * failed jobs finished in the last 5 minutes with BullMQ's own hash fields (`timestamp`,
 * `processedOn`, `finishedOn`), so every queue is busy and each throughput read samples its full
 * budget: the worst case. Printed per read: median and p95 latency, Redis commands per queue (Lua's
 * inner calls included), script calls, the mean time one script call held Redis, and the CPU one
 * read cost this process and redis-server (what compares reads on a busy machine). Also monitor
 * ticks (every sample has the rates; jobs are timed only for a rule on durations) beside plain
 * status, the aim being a tick within 1.3× a status.
 * Run by `npm run bench` (section `throughput`) or `npm run bench -- throughput`. Figures only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createBullmqBackend } from '../src/backends/bullmq/index.js';
import { createBackendRegistry } from '../src/backends/registry.js';
import { statusReadOptions } from '../src/commands/status.js';
import { parseConfig } from '../src/config/load.js';
import type { BullmqSystemConfig, Config } from '../src/config/schema.js';
import { SAMPLED_THROUGHPUT, sampledThroughput } from '../src/escalation/sampler.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { createSqliteStore } from '../src/store/sqlite.js';
import { plainMonitor } from '../test/helpers/plain-monitor.js';

const QUEUES = 1000;
const WAITING = 700;
const COMPLETED = 200;
const FAILED = 50;
const HISTORY = 100;
const PREFIX = 'bench-tp';
const RUNS = 7;

interface Figure {
  medianMs: number;
  p95Ms: number;
  commands: number;
  scripts: number;
  /** Mean time one script call held Redis, µs. */
  perScriptUs: number;
  /** CPU one read cost this process (user + system), ms: what a busy machine's wall time hides. */
  clientCpuMs: number;
  /** CPU one read cost the (private) redis-server, ms (`INFO cpu`). */
  redisCpuMs: number;
}

function percentile(sorted: number[], p: number): number {
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
}

async function counters(admin: Redis) {
  const stats = await admin.info('stats');
  const commandstats = await admin.info('commandstats');
  let scripts = 0;
  let scriptUs = 0;
  for (const m of commandstats.matchAll(/cmdstat_(?:evalsha|eval)(?:_ro)?:calls=(\d+),usec=(\d+)/g)) {
    scripts += Number(m[1]);
    scriptUs += Number(m[2]);
  }
  const cpu = await admin.info('cpu');
  const seconds = (field: string) => Number(new RegExp(`${field}:([\\d.]+)`).exec(cpu)?.[1] ?? 0);
  return {
    commands: Number(/total_commands_processed:(\d+)/.exec(stats)?.[1] ?? 0),
    scripts,
    scriptUs,
    redisCpuMs: (seconds('used_cpu_sys') + seconds('used_cpu_user')) * 1000,
  };
}

/** A read that times out (a machine too busy for the 4.5 s deadline) prints as '-', not a crash. */
async function measure(admin: Redis, fn: () => Promise<unknown>): Promise<Figure> {
  try {
    return await measureOnce(admin, fn);
  } catch {
    return {
      medianMs: Number.NaN,
      p95Ms: Number.NaN,
      commands: 0,
      scripts: 0,
      perScriptUs: Number.NaN,
      clientCpuMs: Number.NaN,
      redisCpuMs: Number.NaN,
    };
  }
}

async function measureOnce(admin: Redis, fn: () => Promise<unknown>): Promise<Figure> {
  await fn();
  const times: number[] = [];
  const cpuBefore = process.cpuUsage();
  const redisBefore = await counters(admin);
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const redisAfter = await counters(admin);
  times.sort((a, b) => a - b);
  const before = await counters(admin);
  await fn();
  const after = await counters(admin);
  const scripts = after.scripts - before.scripts;
  return {
    medianMs: percentile(times, 50),
    p95Ms: percentile(times, 95),
    commands: after.commands - before.commands - 2,
    scripts,
    perScriptUs: scripts > 0 ? (after.scriptUs - before.scriptUs) / scripts : 0,
    clientCpuMs: (cpu.user + cpu.system) / 1000 / RUNS,
    redisCpuMs: (redisAfter.redisCpuMs - redisBefore.redisCpuMs) / RUNS,
  };
}

async function seed(admin: Redis, now: number): Promise<void> {
  await admin.flushdb();
  let pipeline = admin.pipeline();
  let pending = 0;
  const flush = async (force = false) => {
    if (pending >= 2000 || (force && pending > 0)) {
      await pipeline.exec();
      pipeline = admin.pipeline();
      pending = 0;
    }
  };
  for (let q = 0; q < QUEUES; q++) {
    const base = `${PREFIX}:q${String(q).padStart(4, '0')}:`;
    pipeline.hset(`${base}meta`, 'opts.maxLenEvents', 10000, 'version', 'bullmq:6.7.0');
    pipeline.lpush(`${base}wait`, ...Array.from({ length: WAITING }, (_, i) => `w${i}`));
    pending += 2;
    for (const [state, count] of [
      ['completed', COMPLETED],
      ['failed', FAILED],
    ] as const) {
      const args: (string | number)[] = [];
      for (let i = 0; i < count; i++) {
        const finished = now - 1000 - i * 1000;
        const id = `${state[0]}${i}`;
        args.push(finished, id);
        pipeline.hset(
          `${base}${id}`,
          'name',
          'send',
          'timestamp',
          finished - 5000 - (i % 7) * 1000,
          'processedOn',
          finished - 400 - (i % 5) * 100,
          'finishedOn',
          finished,
        );
        pending++;
      }
      pipeline.zadd(`${base}${state}`, ...args);
      pending++;
      await flush();
    }
  }
  await flush(true);
}

/** Adds HISTORY older finished jobs to every completed and failed set (ids only). */
async function keepHistory(admin: Redis, now: number): Promise<void> {
  const pipeline = admin.pipeline();
  for (let q = 0; q < QUEUES; q++) {
    const base = `${PREFIX}:q${String(q).padStart(4, '0')}:`;
    for (const state of ['completed', 'failed']) {
      const args: (string | number)[] = [];
      for (let i = 0; i < HISTORY; i++) args.push(now - 600_000 - i * 30_000, `${state[0]}old${i}`);
      pipeline.zadd(`${base}${state}`, ...args);
    }
  }
  await pipeline.exec();
}

async function monitorTick(admin: Redis, config: Config, file: string): Promise<Figure> {
  const store = createSqliteStore(file);
  await store.migrate();
  const backends = createBackendRegistry([createBullmqBackend(config.systems[0] as BullmqSystemConfig)]);
  const monitor = plainMonitor(config, store, backends);
  try {
    return await measure(admin, () => monitor.tick());
  } finally {
    await backends.close();
    await store.close();
  }
}

export async function throughputBench(log: (text: string) => void): Promise<string[]> {
  const redis = await startPrivateRedis();
  const url = `${redis.url}/0`;
  const admin = new Redis(url);
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-bench-tp-'));
  try {
    log(`seeding ${QUEUES} BullMQ queues with throughput to sample…`);
    await seed(admin, Date.now());
    const config = parseConfig(
      `slack: { incidentChannel: C0BENCH }\nstore: sqlite:${join(dir, 'bench.db')}\nsystems:\n  - { name: bench, type: bullmq, redis: "${url}", prefix: ${PREFIX} }\n`,
      {},
    );
    const backend = createBullmqBackend(config.systems[0] as BullmqSystemConfig);
    log('measuring status reads…');
    const plain = await measure(admin, () => backend.status());
    const command = await measure(admin, () => backend.status(undefined, statusReadOptions(false)));
    // As a tick asks: failures since the previous sample, and the rates; timed jobs only for a rule on durations.
    const tickRead = (throughput?: typeof SAMPLED_THROUGHPUT | ReturnType<typeof sampledThroughput>) => () =>
      backend.status(undefined, {
        failedSince: Date.now() - 60_000,
        ...(throughput ? { throughput } : {}),
      });
    const samplerBare = await measure(admin, tickRead());
    const sampler = await measure(admin, tickRead(sampledThroughput([])));
    const samplerTimed = await measure(admin, tickRead(SAMPLED_THROUGHPUT));
    const one = await measure(admin, () => backend.status(['q0500'], statusReadOptions(true)));
    const timed = await measure(admin, () =>
      backend.status(undefined, { throughput: { spanMs: 300_000, sample: 20 } }),
    );
    await backend.close();

    log('measuring monitor ticks…');
    const tick = await monitorTick(admin, config, join(dir, 'default.db'));
    const withRule = parseConfig(
      `slack: { incidentChannel: C0BENCH }\nsystems:\n  - { name: bench, type: bullmq, redis: "${url}", prefix: ${PREFIX} }\nescalation:\n  rules:\n    - { name: backlog, metric: waiting, above: 100000 }\n    - { name: slow-pickup, metric: waitP95Seconds, above: 30 }\n`,
      {},
    );
    const tickWithRule = await monitorTick(admin, withRule, join(dir, 'rule.db'));

    // The usual shape: sets that also keep jobs finished before the 5 minutes (ids suffice, as
    // nothing reads their hashes), so each count is exact and BullMQ's metrics are not read.
    log('measuring with sets that reach back…');
    await keepHistory(admin, Date.now());
    const again = createBullmqBackend(config.systems[0] as BullmqSystemConfig);
    const commandHistory = await measure(admin, () => again.status(undefined, statusReadOptions(false)));
    const samplerHistory = await measure(admin, () =>
      again.status(undefined, { failedSince: Date.now() - 60_000, throughput: sampledThroughput([]) }),
    );
    await again.close();
    const tickHistory = await monitorTick(admin, config, join(dir, 'history.db'));

    const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
    const cols = [9, 9, 10, 8, 11, 11, 11, 10];
    const cells = (label: string, values: string[]) =>
      label.padEnd(52) + values.map((v, i) => v.padStart(cols[i]!)).join('');
    const cpu = (f: Figure) => f.clientCpuMs + f.redisCpuMs;
    // CPU, not wall time, is the comparison: the machine the bench runs on may be busy.
    const row = (label: string, f: Figure) =>
      cells(label, [
        fmt(f.medianMs),
        fmt(f.p95Ms),
        fmt(f.commands / QUEUES),
        String(f.scripts),
        fmt(f.perScriptUs),
        fmt(f.clientCpuMs),
        fmt(f.redisCpuMs),
        `${(cpu(f) / cpu(plain)).toFixed(2)}×`,
      ]);
    const head = cells('throughput, 1,000 busy BullMQ queues', [
      'median',
      'p95',
      'cmd/queue',
      'scripts',
      'µs/script',
      'client cpu',
      'redis cpu',
      'cpu×plain',
    ]);
    return [
      '',
      head,
      '-'.repeat(head.length),
      row('status() plain (counts only)', plain),
      row('status command read (+ rates, no durations)', command),
      row('status() + rates and durations (20/outcome)', timed),
      row('monitor sampler read (failed since; no rates: before)', samplerBare),
      row('monitor sampler read (+ failed since, rates)', sampler),
      row(`monitor sampler read (+ rates, ${SAMPLED_THROUGHPUT.sample} timed/outcome)`, samplerTimed),
      row('monitor tick(), default rules (rates in every sample)', tick),
      row(`monitor tick(), a duration rule (${SAMPLED_THROUGHPUT.sample} timed/outcome)`, tickWithRule),
      row('status <system>/<queue> (200/outcome + delayed due)', one),
      'sets also holding jobs finished before the 5 minutes:',
      row('status command read (+ rates, no durations)', commandHistory),
      row('monitor sampler read (+ failed since, rates)', samplerHistory),
      row('monitor tick(), default rules (rates in every sample)', tickHistory),
      `  (each queue: ${WAITING} waiting, ${COMPLETED} completed and ${FAILED} failed in the last 5 min, hashes kept: every set`,
      `   wholly inside the span, the worst case; the last rows: ${HISTORY} more in each set, finished 10-60 min ago; ms, loopback;`,
      '   cmd/queue: Redis commands per queue, Lua inner calls included; cpu: ms of CPU per read, this process and redis-server)',
    ];
  } finally {
    admin.disconnect();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
