/**
 * `npx tsx bench/tick-cpu.ts`: one monitor tick over 1,000 BullMQ queues (1M jobs, seeded as
 * `npm run bench -- status` does) beside `status()` of the same queues and the status command's read
 * (the counts and every queue's rates, as a tick reads them), with what wall times on a
 * busy machine do not show: the CPU time of the process's main thread per call (from
 * /proc/self/task, 10 ms ticks, so over many calls). As in the status section: a fresh monitor
 * with a real store, one tick to warm up, then the ticks timed back to back.
 *
 * - `TICKS` (10), `STATUS_RUNS` (15): calls timed.
 * - `PROFILE=<file>`: a CPU profile (V8's, for Chrome DevTools or `speedscope`) of the timed ticks,
 *   or of the status calls with `PROFILE_STATUS=1`; `WARM=<n>` more ticks before it starts.
 * - `PHASES=1`: then as many ticks again, with the time spent in each store and Redis call.
 * - `PG_URL=postgres://…`: a PostgreSQL store (in a schema of its own, dropped after) instead
 *   of SQLite.
 * Figures only, no assertions; not part of `npm test`. The calls are timed in blocks, one kind
 * after the other, so the CPU profile holds the ticks alone; a shift of the machine between the
 * blocks moves the ratios here. `npm run bench -- status` times the tick in turns with the read,
 * and its ratio is the one issue 36 §7 reads.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createBullmqBackend } from '../src/backends/bullmq/index.js';
import { createBackendRegistry } from '../src/backends/registry.js';
import { statusReadOptions } from '../src/commands/status.js';
import { parseConfig } from '../src/config/load.js';
import type { BullmqSystemConfig } from '../src/config/schema.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { createPostgresStore } from '../src/store/postgres.js';
import { createSqliteStore } from '../src/store/sqlite.js';
import { plainMonitor } from '../test/helpers/plain-monitor.js';
import { seedBullmq } from './seed-status.js';

const QUEUES = 1000;
const TOTAL_JOBS = 1_000_000;
const PREFIX = 'bench';
const TICKS = Number(process.env.TICKS ?? 10);
const STATUS_RUNS = Number(process.env.STATUS_RUNS ?? 15);

/** CPU time of this process's main thread so far, in ms (the kernel counts it in 10 ms ticks). */
function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

/** After one warm-up call: wall median and p95, and main-thread CPU per call. */
async function timed(runs: number, fn: () => Promise<unknown>) {
  await fn();
  const cpuBefore = mainThreadCpuMs();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  const cpu = (mainThreadCpuMs() - cpuBefore) / runs;
  times.sort((a, b) => a - b);
  return { median: percentile(times, 50), p95: percentile(times, 95), cpu };
}

const redis = await startPrivateRedis();
const url = `${redis.url}/0`;
const admin = new Redis(url);
const dir = mkdtempSync(join(tmpdir(), 'queue-ops-tick-cpu-'));
const schema = `bench_tick_${process.pid}`;
const pgUrl = process.env.PG_URL;
try {
  process.stderr.write(`seeding ${QUEUES} BullMQ queues with ${TOTAL_JOBS.toLocaleString('en-US')} jobs…\n`);
  await seedBullmq(url, admin, QUEUES, { total: TOTAL_JOBS, prefix: PREFIX });
  const storeUrl = pgUrl ?? `sqlite:${join(dir, 'bench.db')}`;
  const config = parseConfig(
    `slack: { incidentChannel: C0BENCH }\nstore: "${storeUrl}"\nsystems:\n  - { name: bench, type: bullmq, redis: "${url}", prefix: ${PREFIX} }\n`,
    {},
  );
  const store = pgUrl ? createPostgresStore(pgUrl, { schema }) : createSqliteStore(join(dir, 'bench.db'));
  await store.migrate();
  const backend = createBullmqBackend(config.systems[0] as BullmqSystemConfig);
  const backends = createBackendRegistry([backend]);
  const monitor = plainMonitor(config, store, backends);

  const status = await timed(STATUS_RUNS, () => backend.status());
  // What `/queue status` reads: the counts and every queue's rates, as a tick's sample has them.
  const commandRead = await timed(STATUS_RUNS, () => backend.status(undefined, statusReadOptions(false)));
  const target = process.env.PROFILE_STATUS ? () => backend.status() : () => monitor.tick();
  for (let i = 0; i < Number(process.env.WARM ?? 0); i++) await target();
  const session = process.env.PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const tick = await timed(TICKS, target);
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(process.env.PROFILE!, JSON.stringify(profile));
    session.disconnect();
  }
  const out = [
    `store: ${pgUrl ? 'PostgreSQL' : 'SQLite'}, ${QUEUES} BullMQ queues, ${TOTAL_JOBS.toLocaleString('en-US')} jobs`,
    `status(): median ${status.median.toFixed(1)} ms, p95 ${status.p95.toFixed(1)} ms, main-thread CPU ${status.cpu.toFixed(1)} ms/call (${STATUS_RUNS} calls)`,
    `status command read (+ rates): median ${commandRead.median.toFixed(1)} ms, p95 ${commandRead.p95.toFixed(1)} ms, main-thread CPU ${commandRead.cpu.toFixed(1)} ms/call (${STATUS_RUNS} calls)`,
    `tick():   median ${tick.median.toFixed(1)} ms, p95 ${tick.p95.toFixed(1)} ms, main-thread CPU ${tick.cpu.toFixed(1)} ms/call (${TICKS} ticks) = ${(tick.median / status.median).toFixed(2)}× status(), ${(tick.median / commandRead.median).toFixed(2)}× the command read`,
  ];

  if (process.env.PHASES) {
    // The store's and the backend's methods wrapped with a stopwatch, for as many ticks again.
    const spent = new Map<string, number>();
    const stopwatch = (target: object, prefix: string) => {
      const methods = target as Record<string, unknown>;
      for (const [name, method] of Object.entries(methods)) {
        if (typeof method !== 'function') continue;
        methods[name] = async (...args: unknown[]) => {
          const started = performance.now();
          try {
            return await (method as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            spent.set(`${prefix}${name}`, (spent.get(`${prefix}${name}`) ?? 0) + performance.now() - started);
          }
        };
      }
    };
    stopwatch(store.escalation, 'store.');
    stopwatch(backend, 'redis.');
    const started = performance.now();
    for (let i = 0; i < TICKS; i++) await monitor.tick();
    const each = (ms: number) => (ms / TICKS).toFixed(2);
    out.push(
      `phases, mean ms per tick over ${TICKS} more ticks (${each(performance.now() - started)} in all; calls made at once overlap):`,
      ...[...spent].map(([name, ms]) => `  ${name} ${each(ms)}`),
    );
  }
  out.push(
    `Node ${process.version}; load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')} (1, 5, 15 min).`,
  );
  console.log(out.join('\n'));
  await backends.close();
  await store.close();
} finally {
  admin.disconnect();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
  if (pgUrl) {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
}
