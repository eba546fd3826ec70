/**
 * `npm run bench [-- section…]`: every section, or those named (`status`, `startup`, `load`, …).
 *
 * status: what one `status` costs, next to what people do today.
 *
 * For 12, 100 and 1,000 BullMQ queues holding 1,000,000 jobs in total, and for 1,000,000 Celery
 * messages over the six Zeus queues and their priority lists, it prints the latency (median and
 * p95) and the number of Redis commands of:
 *   - queue-ops `status()` (counts for every state, paused flag, oldest waiting age, Redis memory,
 *     workers), and
 *   - BullMQ's own `Queue.getJobCounts()` called queue by queue (counts only), or for Celery the
 *     runbook's per-key LLEN loop.
 * Each is timed on loopback and through a proxy that adds 1 ms each way (a Redis one hop away),
 * where round trips, not Redis, dominate. Figures only: no assertions. Not part of `npm test`.
 * For the same BullMQ queues it also times one escalation monitor tick (the same status() reads,
 * plus storing the sample in a real SQLite store and evaluating the default rules over the stored
 * history), with its Redis commands next to status().
 * Runs on a private redis-server.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createBullmqBackend } from '../src/backends/bullmq/index.js';
import { createCeleryBackend } from '../src/backends/celery/index.js';
import { createBackendRegistry } from '../src/backends/registry.js';
import { statusReadOptions } from '../src/commands/status.js';
import { parseConfig } from '../src/config/load.js';
import type { BullmqSystemConfig, CelerySystemConfig } from '../src/config/schema.js';
import { celeryEnvelope, priorityKey } from '../src/demo/seed-celery.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { createSqliteStore } from '../src/store/sqlite.js';
import { type LatencyProxy, startLatencyProxy } from '../test/helpers/latency-proxy.js';
import { plainMonitor } from '../test/helpers/plain-monitor.js';
import { benchAuditVerify } from './audit-verify.js';
import { expireResultsBench } from './expire-results.js';
import { filtersBench } from './filters.js';
import { loadBench } from './load.js';
import { benchMetricsCoalescing } from './metrics-coalescing.js';
import { purgeBench } from './purge.js';
import { recoveryBench } from './recovery.js';
import { redisHealthBench } from './redis-health.js';
import { benchRetry } from './retry.js';
import { seedBullmq } from './seed-status.js';
import { soakBench } from './soak.js';
import { startupBench } from './startup.js';
import { throughputBench } from './throughput.js';
import { whyBench } from './why.js';

const TOTAL_JOBS = 1_000_000;
/** Each way (Node timers have 1 ms resolution): a 2 ms round trip, a Redis a network hop or two away. */
const LINK_DELAY_MS = 1;
const PREFIX = 'bench';
const CELERY_QUEUES = [
  'celery',
  'celery:default',
  'celery:alarm_processing',
  'celery:notification_sending',
  'celery:ota_processing',
  'celery:measurement_processing',
];

interface Sample {
  medianMs: number;
  p95Ms: number;
  commands: number;
  scripts: number;
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Commands Redis executed (Lua's inner calls included) and script calls, from INFO deltas. */
async function counters(admin: Redis): Promise<{ commands: number; scripts: number }> {
  const stats = await admin.info('stats');
  const commandstats = await admin.info('commandstats');
  const commands = Number(/total_commands_processed:(\d+)/.exec(stats)?.[1] ?? 0);
  let scripts = 0;
  for (const m of commandstats.matchAll(/cmdstat_(?:evalsha|eval|fcall)(?:_ro)?:calls=(\d+)/g))
    scripts += Number(m[1]);
  return { commands, scripts };
}

/**
 * Latency (after one warm-up call: script load, discovery cache, connection), then, with `admin`,
 * one more call between two INFO reads for the command count. The second INFO sees the first one
 * and the INFO commandstats between them: those two are subtracted.
 */
async function measure(admin: Redis | undefined, runs: number, fn: () => Promise<unknown>): Promise<Sample> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const sample = { medianMs: percentile(times, 50), p95Ms: percentile(times, 95), commands: 0, scripts: 0 };
  if (!admin) return sample;
  const before = await counters(admin);
  await fn();
  const after = await counters(admin);
  return {
    ...sample,
    commands: after.commands - before.commands - 2,
    scripts: after.scripts - before.scripts,
  };
}

/** 1M Celery messages over the six queues' priority lists; a few real envelopes, the rest short. */
async function seedCelery(admin: Redis): Promise<void> {
  await admin.flushdb();
  const perList = Math.floor(TOTAL_JOBS / (CELERY_QUEUES.length * 4));
  const BATCH = 1000;
  let pipeline = admin.pipeline();
  let pending = 0;
  for (const queue of CELERY_QUEUES) {
    await admin.sadd(`_kombu.binding.${queue}`, `${queue}\x06\x16\x06\x16${queue}`);
    for (const step of [0, 3, 6, 9]) {
      const key = priorityKey(queue, step);
      // LLEN is O(1) whatever the element: the oldest message is a real envelope, the rest are
      // placeholders so that 1M messages fit in memory on a laptop.
      pipeline.lpush(key, celeryEnvelope({ queue, task: 'bench.task', args: [1], priority: step }));
      for (let start = 1; start < perList; start += BATCH) {
        const values = [];
        for (let i = start; i < Math.min(perList, start + BATCH); i++) values.push(`m${i}`);
        pipeline.lpush(key, ...values);
        if (++pending >= 50) {
          await pipeline.exec();
          pipeline = admin.pipeline();
          pending = 0;
        }
      }
    }
  }
  await pipeline.exec();
}

/**
 * A monitor as the bot runs it, for timing its tick: status() of the system, the sample appended
 * to a real SQLite store, the default rules evaluated over the stored history (it grows with each
 * tick, as in production), alerts written. No Slack: the outbox only queues. `detectors: false`:
 * the tick before the network detectors (issue 36 §2), one INFO persistence beside the status
 * read instead.
 */
function benchMonitor(url: string, options: { detectors?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-bench-'));
  const config = parseConfig(
    `slack: { incidentChannel: C0BENCH }\nstore: sqlite:${join(dir, 'bench.db')}\nsystems:\n  - { name: bench, type: bullmq, redis: "${url}", prefix: ${PREFIX} }\n`,
    {},
  );
  const store = createSqliteStore(join(dir, 'bench.db'));
  const backend = createBullmqBackend(config.systems[0] as BullmqSystemConfig, { commandTimeoutMs: 60_000 });
  const backends = createBackendRegistry([
    options.detectors === false ? { ...backend, network: undefined } : backend,
  ]);
  const monitor = plainMonitor(config, store, backends);
  return {
    migrated: store.migrate(),
    tick: () => monitor.tick(),
    async close() {
      await backend.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One monitor tick over the link (`trips`: the link's round-trip counter, to count one more
 * tick's round trips).
 */
async function linkedTick(
  url: string,
  runs: number,
  options: { detectors?: boolean; trips: () => number },
): Promise<Sample & { roundTrips: number }> {
  const bench = benchMonitor(url, options);
  try {
    await bench.migrated;
    const sample = await timeOnly(runs, bench.tick);
    return { ...sample, roundTrips: await roundTripsOf(options.trips, bench.tick) };
  } finally {
    await bench.close();
  }
}

/**
 * The status command's read and the monitor tick (with and without the network detectors), timed
 * in turns: read, tick, tick without detectors, and again. Timed one block after the other, a
 * shift of the machine between the blocks moved the ratio by more than the tick's own work (seven
 * quiet runs gave 1.14-1.53×); in turns every one of them meets the same machine. After one warm-up
 * call of each; with `admin`, each one's Redis commands from one more call.
 */
async function tickInTurns(
  url: string,
  admin: Redis,
  runs: number,
  read: () => Promise<unknown>,
): Promise<{ read: Sample; tick: Sample; bare: Sample }> {
  const withDetectors = benchMonitor(url);
  const bare = benchMonitor(url, { detectors: false });
  try {
    await Promise.all([withDetectors.migrated, bare.migrated]);
    const calls = [read, withDetectors.tick, bare.tick];
    const times: number[][] = calls.map(() => []);
    for (const call of calls) await call();
    for (let i = 0; i < runs; i++) {
      for (const [k, call] of calls.entries()) {
        const started = performance.now();
        await call();
        times[k]!.push(performance.now() - started);
      }
    }
    const [readSample, tickSample, bareSample] = times.map((list) => {
      list.sort((a, b) => a - b);
      return { medianMs: percentile(list, 50), p95Ms: percentile(list, 95) };
    });
    const counted = async (k: number) => {
      const before = await counters(admin);
      await calls[k]!();
      const after = await counters(admin);
      return { commands: after.commands - before.commands - 2, scripts: after.scripts - before.scripts };
    };
    return {
      read: { ...readSample!, commands: 0, scripts: 0 },
      tick: { ...tickSample!, ...(await counted(1)) },
      bare: { ...bareSample!, commands: 0, scripts: 0 },
    };
  } finally {
    await withDetectors.close();
    await bare.close();
  }
}

/** Round trips one call makes over the link: request bursts that follow an answer (the proxy counts them). */
async function roundTripsOf(trips: () => number, fn: () => Promise<unknown>): Promise<number> {
  const before = trips();
  await fn();
  return trips() - before;
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const WIDTHS = [36, 9, 10, 8, 12, 9, 8, 8];

function row(cells: string[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(WIDTHS[0]!) : c.padStart(WIDTHS[i]!))).join('  ');
}

/** One line of the table: local figures, the median over the slow link, and the ratio to ours. */
function line(
  label: string,
  size: string,
  local: Sample,
  linked: Sample,
  ours?: { local: Sample; linked: Sample },
) {
  return row([
    label,
    size,
    fmt(local.medianMs),
    fmt(local.p95Ms),
    fmt(linked.medianMs),
    String(local.commands),
    String(local.scripts),
    ours ? `${fmt(linked.medianMs / ours.linked.medianMs)}×` : '1.0×',
  ]);
}

/** Latency only: the command count does not depend on the link. */
const timeOnly = (runs: number, fn: () => Promise<unknown>) => measure(undefined, runs, fn);

/**
 * The BullMQ rows of the status table for one number of queues (seeded here): `status()`, the
 * status command's read, the monitor tick with and without the network detectors and their round
 * trips, and BullMQ's own `getJobCounts()` queue by queue, each on loopback and over the link.
 */
async function bullmqStatusRows(
  { url, linkedUrl, admin, proxy }: { url: string; linkedUrl: string; admin: Redis; proxy: LatencyProxy },
  queues: number,
  log: (text: string) => void,
): Promise<string[]> {
  log(`seeding ${queues} BullMQ queues with ${TOTAL_JOBS.toLocaleString('en-US')} jobs…`);
  await seedBullmq(url, admin, queues, { total: TOTAL_JOBS, prefix: PREFIX });
  const system = (redisUrl: string) =>
    parseConfig(`systems:\n  - { name: bench, type: bullmq, redis: "${redisUrl}", prefix: ${PREFIX} }\n`, {})
      .systems[0] as BullmqSystemConfig;
  const local = createBullmqBackend(system(url));
  const linked = createBullmqBackend(system(linkedUrl), { commandTimeoutMs: 60_000 });
  const runs = queues >= 1000 ? 15 : 40;
  const linkRuns = queues >= 1000 ? 5 : 15;
  log(`measuring ${queues} queues…`);
  const ours = {
    local: await measure(admin, runs, () => local.status()),
    linked: await timeOnly(linkRuns, () => linked.status()),
  };
  // What `/queue status` reads of every queue: the counts and each queue's done/failed a minute.
  const commandRead = {
    local: await measure(admin, runs, () => local.status(undefined, statusReadOptions(false))),
    linked: await timeOnly(linkRuns, () => linked.status(undefined, statusReadOptions(false))),
  };
  const readTrips = await roundTripsOf(proxy.roundTrips, () =>
    linked.status(undefined, statusReadOptions(false)),
  );
  log(`measuring one monitor tick over ${queues} queues, in turns with the status command's read…`);
  const turns = await tickInTurns(url, admin, queues >= 1000 ? 15 : 20, () =>
    local.status(undefined, statusReadOptions(false)),
  );
  const tick = turns.tick;
  // Over the slow link too, with and without the network detectors (issue 36 §2: their PINGs,
  // INFO stats/clients and CLIENT LIST), so what they add shows on its own, in round trips.
  const tickLinked = await linkedTick(linkedUrl, linkRuns, { trips: proxy.roundTrips });
  const bare = {
    local: turns.bare,
    linked: await linkedTick(linkedUrl, linkRuns, { detectors: false, trips: proxy.roundTrips }),
  };
  const names = await local.listQueues();
  const localConnection = new Redis(url, { maxRetriesPerRequest: null });
  const linkedConnection = new Redis(linkedUrl, { maxRetriesPerRequest: null });
  const localQueues = names.map((name) => new Queue(name, { connection: localConnection, prefix: PREFIX }));
  const linkedQueues = names.map((name) => new Queue(name, { connection: linkedConnection, prefix: PREFIX }));
  const theirs = {
    local: await measure(admin, runs, async () => {
      for (const q of localQueues) await q.getJobCounts();
    }),
    linked: await timeOnly(linkRuns, async () => {
      for (const q of linkedQueues) await q.getJobCounts();
    }),
  };
  const counted = (await local.status()).queues.reduce(
    (n, q) => n + q.waiting + q.delayed + q.prioritized + q.failed + q.completed,
    0,
  );
  await Promise.all([...localQueues, ...linkedQueues].map((q) => q.close()));
  await localConnection.quit();
  await linkedConnection.quit();
  await local.close();
  await linked.close();
  return [
    line('queue-ops status()', String(queues), ours.local, ours.linked),
    line('queue-ops status command read', String(queues), commandRead.local, commandRead.linked, ours),
    row([
      'queue-ops monitor tick()',
      String(queues),
      fmt(tick.medianMs),
      fmt(tick.p95Ms),
      fmt(tickLinked.medianMs),
      String(tick.commands),
      String(tick.scripts),
      `${fmt(tick.medianMs / turns.read.medianMs, 2)}× read`,
    ]),
    row([
      '  the tick without network detectors',
      String(queues),
      fmt(bare.local.medianMs),
      fmt(bare.local.p95Ms),
      fmt(bare.linked.medianMs),
      '',
      '',
      `${fmt(bare.local.medianMs / turns.read.medianMs, 2)}× read`,
    ]),
    `  (monitor tick: ${fmt(tick.medianMs / ours.local.medianMs, 2)}× status(), ${fmt(tick.medianMs / turns.read.medianMs, 2)}× the status command's read, which reads the same rates, timed in turns with it: ${fmt(turns.read.medianMs)} ms then)`,
    `  (round trips over the link, counted: the read ${readTrips}, the tick without the detectors ${bare.linked.roundTrips}, with them ${tickLinked.roundTrips}: the detectors add ${(tickLinked.roundTrips ?? 0) - (bare.linked.roundTrips ?? 0)}, ${fmt(tickLinked.medianMs - bare.linked.medianMs)} ms of the ${2 * LINK_DELAY_MS} ms link in the median)`,
    `  (what the link adds to each: the read ${fmt(commandRead.linked.medianMs - commandRead.local.medianMs)} ms, the tick ${fmt(tickLinked.medianMs - tick.medianMs)} ms; the tick's own work, the sample, rules and store, is in its local time)`,
    line('BullMQ getJobCounts() queue by queue', String(queues), theirs.local, theirs.linked, ours),
    `  (jobs counted by queue-ops status: ${counted.toLocaleString('en-US')})`,
  ];
}

async function statusBench() {
  const started = Date.now();
  const redis = await startPrivateRedis();
  const url = `${redis.url}/0`;
  const proxy = await startLatencyProxy({ host: '127.0.0.1', port: redis.port }, LINK_DELAY_MS);
  const linkedUrl = `redis://127.0.0.1:${proxy.port}/0`;
  const admin = new Redis(url);
  const out: string[] = [];
  const log = (text: string) => process.stderr.write(`${text}\n`);
  try {
    const header = row([
      'BullMQ, 1M jobs',
      'queues',
      'median ms',
      'p95 ms',
      'link median',
      'commands',
      'scripts',
      'link ×',
    ]);
    out.push(header, '-'.repeat(header.length));
    for (const queues of [12, 100, 1000])
      out.push(...(await bullmqStatusRows({ url, linkedUrl, admin, proxy }, queues, log)));

    log(`seeding ${TOTAL_JOBS.toLocaleString('en-US')} Celery messages…`);
    await seedCelery(admin);
    const celerySystem = (redisUrl: string) =>
      parseConfig(
        `systems:\n  - { name: zeus, type: celery, redis: "${redisUrl}", inspectTimeoutMs: 200 }\n`,
        {},
      ).systems[0] as CelerySystemConfig;
    const localCelery = createCeleryBackend(celerySystem(url));
    const linkedCelery = createCeleryBackend(celerySystem(linkedUrl), { commandTimeoutMs: 60_000 });
    const ours = {
      local: await measure(admin, 40, () => localCelery.status()),
      linked: await timeOnly(15, () => linkedCelery.status()),
    };
    const localClient = new Redis(url);
    const linkedClient = new Redis(linkedUrl);
    const depth = { runbook: 0, perKey: 0 };
    const runbookLoop = (client: Redis) => async () => {
      depth.runbook = 0;
      for (const q of CELERY_QUEUES) depth.runbook += await client.llen(q);
    };
    const perKeyLoop = (client: Redis) => async () => {
      depth.perKey = 0;
      for (const q of CELERY_QUEUES)
        for (const step of [0, 3, 6, 9]) depth.perKey += await client.llen(priorityKey(q, step));
    };
    const runbook = {
      local: await measure(admin, 40, runbookLoop(localClient)),
      linked: await timeOnly(15, runbookLoop(linkedClient)),
    };
    const perKey = {
      local: await measure(admin, 40, perKeyLoop(localClient)),
      linked: await timeOnly(15, perKeyLoop(linkedClient)),
    };
    const ourDepth = (await localCelery.status()).queues.reduce((n, q) => n + q.waiting, 0);
    localClient.disconnect();
    linkedClient.disconnect();
    await localCelery.close();
    await linkedCelery.close();
    out.push(
      '',
      row([
        'Celery, 1M messages, 6 queues × 4 pri',
        'depth',
        'median ms',
        'p95 ms',
        'link median',
        'commands',
        'scripts',
        'link ×',
      ]),
      '-'.repeat(header.length),
      line('queue-ops status()', String(ourDepth), ours.local, ours.linked),
      line('runbook: LLEN per queue (6 keys)', String(depth.runbook), runbook.local, runbook.linked, ours),
      line('LLEN per priority list (24 keys)', String(depth.perKey), perKey.local, perKey.linked, ours),
      '',
      `link: the same calls through a proxy that delays every packet ${LINK_DELAY_MS} ms each way, like a Redis`,
      'one network hop away; "link ×" is that median relative to queue-ops status().',
      'commands: every command Redis executed for one call, including those run inside Lua scripts',
      '(INFO total_commands_processed delta); scripts: EVAL/EVALSHA among them. queue-ops status() also',
      'reads Redis memory, the paused flag and oldest waiting job of every queue and the workers',
      '(CLIENT LIST; for Celery a pidbox PUBLISH, no worker runs here); getJobCounts reads counts only.',
      'The runbook loop reads only the base list of each Celery queue and misses the priority lists.',
      "status command read: what `/queue status` reads of every queue, the counts and each queue's",
      'done/failed a minute over 5 minutes (here every finished job is inside them: the costlier case).',
      'monitor tick(): the same reads as the command (and the failures since the last tick), plus the',
      'stored sample and the default rules over the stored history (SQLite). "× read": the tick',
      "relative to the status command's read. Without network detectors: the tick with one INFO",
      'persistence beside the read instead (before issue 36 §2). Round trips: request bursts that',
      "follow an answer, as the link's proxy counts them; the detectors' INFO and CLIENT LIST and",
      'their first PING travel with the read, the PING sent once it is answered is their one more.',
      `Redis ${(await admin.info('server')).match(/redis_version:(\S+)/)?.[1]}, Node ${process.version}, ` +
        `${Math.round((Date.now() - started) / 1000)} s in all; load average ${loadavg()
          .map((n) => n.toFixed(2))
          .join(' ')} (1, 5, 15 min).`,
    );
    // BENCH_STATUS_ONLY=1: the status tables alone (retry and purge have sections of their own).
    if (!process.env.BENCH_STATUS_ONLY) {
      out.push('', ...(await benchRetry({ url, port: redis.port }, log)));
      out.push(...(await purgeBench(url, log)));
    }
    console.log(out.join('\n'));
  } finally {
    admin.disconnect();
    await proxy.close();
    await redis.stop();
  }
}

async function purgeOnly() {
  const redis = await startPrivateRedis();
  try {
    console.log((await purgeBench(`${redis.url}/0`, (t) => process.stderr.write(`${t}\n`))).join('\n'));
  } finally {
    await redis.stop();
  }
}

// `npm run bench` runs every section; `npm run bench -- audit` (or `status`, `startup`, `metrics`,
// `load`, `soak`, `recovery`, `redis`)
// runs only those named.
const SECTIONS: Record<string, () => Promise<void>> = {
  status: statusBench,
  // `status` with throughput over 1,000 busy queues, beside the plain read, and a monitor tick.
  throughput: async () =>
    console.log((await throughputBench((t) => process.stderr.write(`${t}\n`))).join('\n')),
  audit: async () => console.log(`\n${await benchAuditVerify((text) => process.stderr.write(`${text}\n`))}`),
  metrics: benchMetricsCoalescing,
  startup: async () => console.log((await startupBench()).join('\n')),
  load: async () => console.log((await loadBench((t) => process.stderr.write(`${t}\n`))).join('\n')),
  soak: async () => console.log((await soakBench((t) => process.stderr.write(`${t}\n`))).join('\n')),
  // Also part of `status` (after the retry figures); on its own it needs only a private Redis.
  purge: purgeOnly,
  // A purge SIGKILLed mid-way and finished by the next command line, beside the purge itself.
  recovery: async () => console.log((await recoveryBench((t) => process.stderr.write(`${t}\n`))).join('\n')),
  // Retry of part of 100,000 failed BullMQ jobs (--error, --name, --older-than), beside the plain retry.
  filters: async () => console.log((await filtersBench((t) => process.stderr.write(`${t}\n`))).join('\n')),
  // `/queue redis <system>` on a Redis of 1M keys, beside an idle Redis and `redis-cli --bigkeys`.
  redis: async () => console.log((await redisHealthBench((t) => process.stderr.write(`${t}\n`))).join('\n')),
  'expire-results': async () =>
    console.log((await expireResultsBench((t) => process.stderr.write(`${t}\n`))).join('\n')),
  // `why` on each scenario (the matrix of causes), and its read beside `status`'s at 1,000 queues.
  why: async () => console.log((await whyBench((t) => process.stderr.write(`${t}\n`))).join('\n')),
};

const asked = process.argv.slice(2).filter((a) => a !== '--');
const unknown = asked.filter((name) => !(name in SECTIONS));
if (unknown.length > 0) {
  console.error(`unknown bench section ${unknown.join(', ')}; valid: ${Object.keys(SECTIONS).join(', ')}`);
  process.exitCode = 2;
} else {
  for (const name of asked.length > 0 ? asked : Object.keys(SECTIONS).filter((n) => n !== 'purge'))
    await SECTIONS[name]!();
}
