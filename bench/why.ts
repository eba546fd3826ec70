/**
 * `npm run bench -- why`: issue 36 §5 and §7.
 *
 * The matrix: every scenario of `test/helpers/why-scenarios.ts` (each a real queue system on a
 * Redis of its own, in the state one runbook cause leaves it), asked `why`; one row a scenario,
 * one column a cause: `S` strong, `p` possible, `?` could not tell, `·` nothing. The cause the
 * scenario was built with is marked `[ ]`; anything strong elsewhere is a loss of precision.
 *
 * The speed: `why` of a system of 1,000 BullMQ queues beside the `status` read of the same system
 * (the read `status <system>` makes), with and without the monitor's stored samples (15 minutes at
 * the default 30 s tick). `BENCH_WHY_MATRIX=0`: the speed alone. Figures only: no assertions. Not part of `npm test`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createBullmqBackend } from '../src/backends/bullmq/index.js';
import { createBackendRegistry } from '../src/backends/registry.js';
import { statusReadOptions } from '../src/commands/status.js';
import { configSchema } from '../src/config/schema.js';
import { diagnose } from '../src/diagnosis/engine.js';
import { gatherEvidence } from '../src/diagnosis/gather.js';
import { CAUSE_IDS } from '../src/diagnosis/types.js';
import { takeSample } from '../src/escalation/sampler.js';
import { encodeSample } from '../src/escalation/samples.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { createSqliteStore } from '../src/store/sqlite.js';
import { SCENARIOS } from '../test/helpers/why-scenarios.js';
import { seedBullmq } from './seed-status.js';

const QUEUES = 1000;
const JOBS = Number(process.env.BENCH_WHY_JOBS ?? 100_000);
const RUNS = 15;
/** 15 minutes at the default 30 s tick: what `why` reads back at most. */
const SAMPLES = 30;

const SHORT: Record<string, string> = {
  'no-workers': 'nowk',
  'no-capacity': 'ncap',
  'stuck-tasks': 'stck',
  'redis-memory': 'mem',
  'task-burst': 'brst',
  'retry-loop': 'rtry',
  'redis-network': 'net',
  'slow-dependency': 'slow',
  paused: 'paus',
  'jobs-vanished': 'vani',
};

async function matrix(log: (text: string) => void): Promise<string[]> {
  const rows: string[] = [];
  let misses = 0;
  let strays = 0;
  for (const { name, cause, build } of SCENARIOS) {
    log(`why: scenario ${name}…`);
    const scenario = await build();
    try {
      const { data } = await scenario.why();
      const cells = CAUSE_IDS.map((id) => {
        const found = data.causes.find((c) => c.id === id);
        const check = data.checked.find((c) => c.id === id);
        const mark = found
          ? found.confidence === 'strong'
            ? 'S'
            : 'p'
          : check?.result === 'unknown'
            ? '?'
            : '·';
        if (id === cause && mark !== 'S') misses++;
        if (id !== cause && mark === 'S') strays++;
        return id === cause ? `[${mark}]` : ` ${mark} `;
      });
      const first = data.causes[0]?.id ?? '—';
      rows.push(`| ${name} | ${cause} | ${cells.join(' | ')} | ${data.verdict} | ${first} |`);
    } finally {
      await scenario.close();
    }
  }
  return [
    '',
    'why: scenarios × causes (S strong, p possible, ? unknown, · nothing; [ ] the cause built)',
    `| scenario | built | ${CAUSE_IDS.map((id) => SHORT[id]).join(' | ')} | verdict | first |`,
    `|---|---|${CAUSE_IDS.map(() => '---').join('|')}|---|---|`,
    ...rows,
    `missed (built cause not first-class strong): ${misses}; strong causes a scenario does not have: ${strays}`,
  ];
}

type Timing = { median: number; p95: number };

function stats(times: number[]): Timing {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    median: sorted[Math.floor(sorted.length / 2)]!,
    p95: sorted[Math.ceil(sorted.length * 0.95) - 1]!,
  };
}

/** Times each read `RUNS` times, taking turns (so neither gets the warmer process), after one warm-up each. */
async function timedInTurns(reads: (() => Promise<unknown>)[]): Promise<{ median: number; p95: number }[]> {
  for (const read of reads) await read();
  const times: number[][] = reads.map(() => []);
  for (let i = 0; i < RUNS; i++) {
    for (const [k, read] of reads.entries()) {
      const started = performance.now();
      await read();
      times[k]!.push(performance.now() - started);
    }
  }
  return times.map(stats);
}

async function speed(log: (text: string) => void): Promise<string[]> {
  const redis = await startPrivateRedis();
  const url = `${redis.url}/0`;
  const admin = new Redis(url);
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-bench-why-'));
  try {
    log(`why: seeding ${QUEUES} queues, ${JOBS.toLocaleString('en-US')} jobs…`);
    await seedBullmq(url, admin, QUEUES, { total: JOBS, prefix: 'bench' });
    const config = configSchema.parse({
      systems: [{ name: 'bench', type: 'bullmq', redis: url, prefix: 'bench' }],
    });
    const system = config.systems[0]!;
    if (system.type !== 'bullmq') throw new Error('unreachable');
    const backend = createBullmqBackend(system);
    const store = createSqliteStore(join(dir, 'q.db'));
    await store.migrate();
    const now = () => new Date();
    log(`why: storing ${SAMPLES} monitor samples of ${QUEUES} queues…`);
    const registry = createBackendRegistry([backend]);
    const sample = await takeSample({ config, backends: registry }, [], Date.now());
    for (let i = SAMPLES; i > 0; i--) {
      const at = Date.now() - i * 30_000;
      await store.escalation.appendSample(new Date(at).toISOString(), encodeSample({ ...sample, at }));
    }
    const [status, bare, withHistory] = (await timedInTurns([
      () => backend.status(undefined, statusReadOptions(false)),
      async () => diagnose(await gatherEvidence({ config, now }, 'bench', backend)),
      async () => diagnose(await gatherEvidence({ config, store, now }, 'bench', backend)),
    ])) as [Timing, Timing, Timing];
    await backend.close();
    await store.close?.();
    const row = (label: string, t: { median: number; p95: number }) =>
      `| ${label} | ${t.median.toFixed(1)} ms | ${t.p95.toFixed(1)} ms | ${(t.median / status.median).toFixed(2)}× |`;
    return [
      '',
      `why vs status: one system of ${QUEUES.toLocaleString('en-US')} BullMQ queues, ${JOBS.toLocaleString('en-US')} jobs, loopback, ${RUNS} runs`,
      '| read | median | p95 | × status |',
      '|---|---|---|---|',
      row('`status` read (status(), throughput)', status),
      row('`why` (gather + diagnose), no stored samples', bare),
      row(`\`why\` with ${SAMPLES} stored samples (15 min)`, withHistory),
      `load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')} (1, 5, 15 min): on a shared machine the ratios move with it.`,
    ];
  } finally {
    admin.disconnect();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function whyBench(log: (text: string) => void): Promise<string[]> {
  return [...(await speed(log)), ...(process.env.BENCH_WHY_MATRIX === '0' ? [] : await matrix(log))];
}
