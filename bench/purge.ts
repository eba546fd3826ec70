/**
 * Purge figures for `npm run bench`: 1,000,000 waiting BullMQ jobs and 1,000,000 Celery messages,
 * each seeded afresh (pipelined raw writes in BullMQ's and kombu's layouts) and emptied by:
 *   - queue-ops purge (archive to gzip + fsync, store cursor, conditional deletes), and
 *   - what people use today: BullMQ `drain()`, `obliterate({ force: true })`, a plain `DEL` of
 *     the list (the runbook's last resort; BullMQ's job hashes stay behind).
 * For each: wall time, jobs/s, and the worst and p99 latency a PING probe (a process of its own,
 * as a worker or producer on that Redis is) saw meanwhile: how long they were held up; and
 * the longest single command Redis itself timed, to tell a command that blocked Redis from a
 * machine short of CPU.
 * And the CPU each side spent: Redis (INFO cpu) and this process (every thread: the purge, its
 * gzip, V8's collector), to tell which one a figure waited on.
 * One more row runs the purge with no probe beside it, for its rate when it shares the machine with
 * Redis alone.
 * Two reference rows give the machine's own floor, so that a worst PING can be read: the probe
 * alone on an idle Redis for as long as queue-ops took, and the same deletes queue-ops makes (list
 * tail and job hashes, in batches) paced to the rate it reached, with nothing read or archived.
 * Figures only, no assertions; `BENCH_PURGE_N` changes the size; `BENCH_PURGE_ONLY=queue-ops`
 * skips the alternatives (a quicker run while working on the purge itself).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { type ChainableCommander, Redis } from 'ioredis';
import { createAudit } from '../src/audit/audit.js';
import { READ_SELECTED } from '../src/backends/bullmq/filter-script.js';
import { createBullmqBackend } from '../src/backends/bullmq/index.js';
import { PURGE_DELETE } from '../src/backends/bullmq/scripts.js';
import { createCeleryBackend } from '../src/backends/celery/index.js';
import { DELETE_MESSAGES } from '../src/backends/celery/purge.js';
import { createBackendRegistry } from '../src/backends/registry.js';
import { configSchema } from '../src/config/schema.js';
import { celeryEnvelope, priorityKey } from '../src/demo/seed-celery.js';
import { seedRawBullmqJobs } from '../src/demo/seed-raw.js';
import { createPurges } from '../src/purge/service.js';
import { createSqliteStore } from '../src/store/sqlite.js';
import type { ActionRequest } from '../src/store/store.js';

const N = Number(process.env.BENCH_PURGE_N ?? 1_000_000);
const PREFIX = 'bench';
const QUEUE = 'events';
const CELERY_QUEUE = 'celery:notification_sending';

/** The purge scripts, by SHA1, as BENCH_SLOWLOG names them. */
const SCRIPT_NAMES = new Map([
  [READ_SELECTED.sha, 'BullMQ read (Lua, without the pipe)'],
  [PURGE_DELETE.sha, 'BullMQ delete'],
  [DELETE_MESSAGES.sha, 'Celery delete'],
]);

interface Figure {
  label: string;
  ms: number;
  removed: number;
  worstPing: number;
  p99Ping: number;
  /** The longest single command Redis itself timed meanwhile (SLOWLOG; a script's inner calls too). */
  longestCall: number;
  /** CPU seconds Redis spent meanwhile (user + sys). */
  redisCpu: number;
  /** CPU seconds this process spent meanwhile, all its threads. */
  clientCpu: number;
  note?: string;
}

/**
 * What Redis itself saw: the longest command it ran (SLOWLOG, threshold 1 ms), next to what the
 * probe saw. A PING that waited far longer than any command ran was not held up by a command:
 * on a machine short of CPU, Redis or the probe was simply not scheduled.
 */
async function slowlogStart(admin: Redis): Promise<void> {
  await admin.config('SET', 'slowlog-log-slower-than', '1000');
  await admin.config('SET', 'slowlog-max-len', '100000');
  await admin.slowlog('RESET');
}

async function slowlogLongest(admin: Redis): Promise<number> {
  const entries = (await admin.slowlog('GET', 100000)) as [number, number, number, unknown[], ...unknown[]][];
  if (process.env.BENCH_SLOWLOG) {
    // Which calls were slowest, by kind (a purge script by its name, a command inside a script by
    // its own), and how many took over 5 ms (a diagnostic while tuning).
    const kindOf = (e: (typeof entries)[number]) => {
      const [command, sha] = (e[3] as unknown[]).map(String);
      const name = command!.toLowerCase();
      return name === 'evalsha' ? (SCRIPT_NAMES.get(sha!) ?? `evalsha ${sha!.slice(0, 8)}`) : name;
    };
    const top = [...entries].sort((a, b) => Number(b[2]) - Number(a[2])).slice(0, 5);
    const over5 = entries.filter((e) => Number(e[2]) > 5000).length;
    const kinds = new Map<string, { count: number; max: number }>();
    for (const e of entries) {
      const kind = kinds.get(kindOf(e)) ?? { count: 0, max: 0 };
      kind.count += 1;
      kind.max = Math.max(kind.max, Number(e[2]) / 1000);
      kinds.set(kindOf(e), kind);
    }
    console.error(
      `slowlog: ${entries.length} over 1 ms, ${over5} over 5 ms; slowest: ${top
        .map((e) => `${(Number(e[2]) / 1000).toFixed(1)} ms ${kindOf(e)}`)
        .join(', ')}; by kind: ${[...kinds]
        .sort((a, b) => b[1].count - a[1].count)
        .map(([kind, { count, max }]) => `${kind} ${count} (max ${max.toFixed(1)} ms)`)
        .join(', ')}`,
    );
  }
  return entries.reduce((max, e) => Math.max(max, Number(e[2]) / 1000), 0);
}

/** Redis' own CPU time so far, seconds (user + sys, all its threads). */
async function redisCpuSeconds(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? Number.NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** What ping-probe.mjs posts when told to stop (ms; `worstAt`: since the probe started). */
interface ProbeReport {
  worst: number;
  p99: number;
  worstAt: number;
  over20: number;
}

/** `work` timed, with the CPU it cost Redis and this process meanwhile. */
async function measured(admin: Redis, work: () => Promise<number>) {
  const redisBefore = await redisCpuSeconds(admin);
  const cpuBefore = process.cpuUsage();
  const t0 = performance.now();
  const removed = await work();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpuBefore);
  const redisCpu = (await redisCpuSeconds(admin)) - redisBefore;
  return { ms, removed, redisCpu, clientCpu: (cpu.user + cpu.system) / 1e6 };
}

export async function withProbe(url: string, work: () => Promise<number>): Promise<Omit<Figure, 'label'>> {
  const admin = new Redis(url);
  await slowlogStart(admin);
  const probe = fork(fileURLToPath(new URL('./ping-probe.mjs', import.meta.url)), [url], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const first = new Promise<unknown>((resolve) => probe.once('message', resolve));
  await first;
  const figure = await measured(admin, work);
  const result = new Promise<ProbeReport>((resolve) =>
    probe.once('message', (m) => resolve(m as ProbeReport)),
  );
  probe.send('stop');
  const { worst, p99, worstAt, over20 } = await result;
  if (process.env.BENCH_SLOWLOG)
    console.error(
      `probe: worst ${worst.toFixed(1)} ms at ${(worstAt / 1000).toFixed(2)} s of ${(figure.ms / 1000).toFixed(2)} s; ${over20} PINGs over 20 ms`,
    );
  await new Promise((resolve) => (probe.exitCode === null ? probe.once('exit', resolve) : resolve(null)));
  const longestCall = await slowlogLongest(admin);
  admin.disconnect();
  return { ...figure, worstPing: worst, p99Ping: p99, longestCall };
}

/**
 * `work` with no probe beside it: what the purge does when it has the machine's two CPUs to share
 * with Redis alone (the probe is a process of its own that keeps one of them busy). No PING
 * figures (shown as –).
 */
async function withoutProbe(url: string, work: () => Promise<number>): Promise<Omit<Figure, 'label'>> {
  const admin = new Redis(url);
  await slowlogStart(admin);
  const figure = await measured(admin, work);
  const longestCall = await slowlogLongest(admin);
  admin.disconnect();
  return { ...figure, worstPing: Number.NaN, p99Ping: Number.NaN, longestCall };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The deletes alone: `step` queues the deletes of jobs `from`…`from + count` (a list's tail and,
 * for BullMQ, their hashes), one pipeline per batch, paced to `jobsPerSecond` (queue-ops' own
 * rate) on the schedule's clock, so that a slow batch is not followed by a burst.
 */
async function pacedDeletes(
  url: string,
  total: number,
  jobsPerSecond: number,
  step: (pipeline: ChainableCommander, from: number, count: number) => void,
): Promise<number> {
  const redis = new Redis(url);
  const batch = 500;
  const t0 = performance.now();
  try {
    for (let from = 0; from < total; from += batch) {
      const count = Math.min(batch, total - from);
      const pipeline = redis.pipeline();
      step(pipeline, from, count);
      for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
      const wait = t0 + ((from + count) / jobsPerSecond) * 1000 - performance.now();
      if (wait > 0) await sleep(wait);
    }
  } finally {
    redis.disconnect();
  }
  return total;
}

async function seedCeleryMessages(redis: Redis, count: number) {
  const steps = [0, 3, 6, 9];
  for (let from = 0; from < count; from += 5000) {
    const pipeline = redis.pipeline();
    for (const step of steps) {
      const values: string[] = [];
      for (let i = from + step / 3; i < Math.min(count, from + 5000); i += steps.length)
        values.push(
          celeryEnvelope({ queue: CELERY_QUEUE, task: 'zeus.notify', args: [i, 'push'], priority: step }),
        );
      if (values.length) pipeline.lpush(priorityKey(CELERY_QUEUE, step), ...values);
    }
    await pipeline.exec();
  }
  await redis.sadd('_kombu.binding.celery', `${CELERY_QUEUE}\x06\x16\x06\x16${CELERY_QUEUE}`);
}

const loadNow = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

export async function purgeBench(url: string, log: (text: string) => void): Promise<string[]> {
  const startLoad = loadNow();
  const admin = new Redis(url);
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-bench-purge-'));
  const figures: { bullmq: Figure[]; celery: Figure[] } = { bullmq: [], celery: [] };
  const config = configSchema.parse({
    store: `sqlite:${join(dir, 'q.db')}`,
    archive: { dir: join(dir, 'archive') },
    systems: [
      { name: 'hs', type: 'bullmq', redis: url, prefix: PREFIX, queues: [QUEUE] },
      { name: 'zeus', type: 'celery', redis: url, queues: [CELERY_QUEUE], inspectTimeoutMs: 200 },
    ],
  });
  const store = createSqliteStore(join(dir, 'q.db'));
  await store.migrate();
  const registry = createBackendRegistry([
    createBullmqBackend(config.systems[0] as never),
    createCeleryBackend(config.systems[1] as never),
  ]);
  const purges = createPurges({
    store,
    audit: createAudit({ store, now: () => new Date() }),
    config,
    backends: () => registry,
  });
  let n = 0;
  const purge = async (system: string, queue: string) => {
    const request = {
      id: `r-bench${++n}`,
      params: { system, queue, states: ['waiting'] },
    } as unknown as ActionRequest;
    const result = await purges.execute(request, { progress() {}, signal: new AbortController().signal });
    return result.purged;
  };
  const seedBull = async () => {
    await admin.flushall();
    log(`seeding ${N.toLocaleString('en-US')} BullMQ jobs…`);
    await seedRawBullmqJobs(admin, { prefix: PREFIX, queue: QUEUE, count: N });
  };
  try {
    await seedBull();
    log('queue-ops purge (BullMQ)…');
    figures.bullmq.push({
      label: 'queue-ops purge (archived, undoable)',
      ...(await withProbe(url, () => purge('hs', QUEUE))),
    });
    const bullRate = (N / figures.bullmq[0]!.ms) * 1000;
    log('the probe alone, on an idle Redis…');
    figures.bullmq.push({
      label: "idle Redis (the machine's floor)",
      ...(await withProbe(url, async () => {
        await sleep(figures.bullmq[0]!.ms);
        return 0;
      })),
      note: 'nothing running',
    });
    await seedBull();
    log('queue-ops purge (BullMQ) with no probe beside it…');
    figures.bullmq.push({
      label: 'queue-ops purge, no probe beside it',
      ...(await withoutProbe(url, () => purge('hs', QUEUE))),
    });
    await seedBull();
    log('the same deletes alone, at the same rate…');
    figures.bullmq.push({
      label: 'LTRIM + UNLINK alone, same rate',
      ...(await withProbe(url, () =>
        pacedDeletes(url, N, bullRate, (pipeline, from, count) => {
          // Ids 1…N, LPUSHed: the oldest at the tail, where queue-ops takes them too.
          pipeline.ltrim(`${PREFIX}:${QUEUE}:wait`, 0, -(count + 1));
          const keys: string[] = [];
          for (let id = from + 1; id <= from + count; id++) keys.push(`${PREFIX}:${QUEUE}:${id}`);
          pipeline.unlink(...keys);
        }),
      )),
      note: 'nothing read or archived',
    });

    const alternatives = process.env.BENCH_PURGE_ONLY !== 'queue-ops';
    if (alternatives) {
      const connection = new Redis(url, { maxRetriesPerRequest: null });
      const queue = new Queue(QUEUE, { connection, prefix: PREFIX });
      await seedBull();
      log('BullMQ drain()…');
      figures.bullmq.push({
        label: 'BullMQ drain()',
        ...(await withProbe(url, async () => {
          await queue.drain();
          return N - (await admin.llen(`${PREFIX}:${QUEUE}:wait`));
        })),
      });
      await seedBull();
      log('BullMQ obliterate({ force: true })…');
      figures.bullmq.push({
        label: 'BullMQ obliterate({ force: true })',
        ...(await withProbe(url, async () => {
          await queue.obliterate({ force: true });
          return N;
        })),
      });
      await queue.close();
      connection.disconnect();
      await seedBull();
      log('DEL of the wait list…');
      figures.bullmq.push({
        label: 'DEL wait (runbook; hashes stay)',
        ...(await withProbe(url, async () => {
          await admin.del(`${PREFIX}:${QUEUE}:wait`);
          return N;
        })),
        note: 'job hashes left behind',
      });
    }

    const seedCelery = async () => {
      await admin.flushall();
      log(`seeding ${N.toLocaleString('en-US')} Celery messages…`);
      await seedCeleryMessages(admin, N);
    };
    await seedCelery();
    log('queue-ops purge (Celery)…');
    figures.celery.push({
      label: 'queue-ops purge (archived, undoable)',
      ...(await withProbe(url, () => purge('zeus', CELERY_QUEUE))),
    });
    await seedCelery();
    log('queue-ops purge (Celery) with no probe beside it…');
    figures.celery.push({
      label: 'queue-ops purge, no probe beside it',
      ...(await withoutProbe(url, () => purge('zeus', CELERY_QUEUE))),
    });
    await seedCelery();
    const celeryRate = (N / figures.celery[0]!.ms) * 1000;
    const lists = [0, 3, 6, 9].map((s) => priorityKey(CELERY_QUEUE, s));
    const lengths = await Promise.all(lists.map((list) => admin.llen(list)));
    log('the same deletes alone, at the same rate…');
    figures.celery.push({
      label: 'LTRIM alone, same rate',
      ...(await withProbe(url, () =>
        pacedDeletes(url, N, celeryRate, (pipeline, from, count) => {
          // The lists one after another, as queue-ops walks them.
          let offset = from;
          let left = count;
          for (let i = 0; i < lists.length && left > 0; i++) {
            const length = lengths[i]!;
            if (offset >= length) {
              offset -= length;
              continue;
            }
            const take = Math.min(left, length - offset);
            pipeline.ltrim(lists[i]!, 0, -(take + 1));
            left -= take;
            offset = 0;
          }
        }),
      )),
      note: 'nothing read or archived',
    });
    if (alternatives) {
      await seedCelery();
      log('DEL of the priority lists…');
      figures.celery.push({
        label: 'DEL of the 4 priority lists (runbook)',
        ...(await withProbe(url, async () => {
          await admin.del(...[0, 3, 6, 9].map((s) => priorityKey(CELERY_QUEUE, s)));
          return N;
        })),
      });
    }
  } finally {
    await registry.close();
    await store.close();
    admin.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
  const table = (title: string, rows: Figure[]) => {
    const ours = rows[0]!;
    const cells = (r: Figure) =>
      [
        r.label.padEnd(38),
        (r.ms / 1000).toFixed(2).padStart(8),
        // A rate over less than a tenth of a second (one DEL) says nothing: shown as "–".
        (r.ms < 100 ? '–' : Math.round((r.removed / r.ms) * 1000).toLocaleString('en-US')).padStart(11),
        // No probe ran beside a row of the purge alone.
        (Number.isNaN(r.worstPing) ? '–' : r.worstPing.toFixed(1)).padStart(10),
        (Number.isNaN(r.p99Ping) ? '–' : r.p99Ping.toFixed(1)).padStart(8),
        (Number.isNaN(r.worstPing) ? '–' : `${(r.worstPing / ours.worstPing).toFixed(1)}×`).padStart(9),
        r.longestCall.toFixed(1).padStart(12),
        r.redisCpu.toFixed(1).padStart(9),
        r.clientCpu.toFixed(1).padStart(10),
      ].join('  ');
    return [
      '',
      [
        title.padEnd(38),
        'time s',
        'jobs/s',
        'worst PING',
        'p99 ms',
        'PING ×',
        'longest call',
        'Redis CPU',
        'client CPU',
      ]
        .map((c, i) => (i === 0 ? c : c.padStart([8, 11, 10, 8, 9, 12, 9, 10][i - 1]!)))
        .join('  '),
      '-'.repeat(133),
      ...rows.map(cells),
    ];
  };
  return [
    ...table(`BullMQ, ${N.toLocaleString('en-US')} waiting jobs`, figures.bullmq),
    ...table(`Celery, ${N.toLocaleString('en-US')} messages, 4 priority lists`, figures.celery),
    '',
    'worst PING: the longest a PING (own process, own connection, back to back) waited while the purge ran,',
    'i.e. how long workers and producers on that Redis were held up; "PING ×" is relative to queue-ops.',
    "longest call: the longest single command Redis itself timed meanwhile (SLOWLOG, a script's inner calls too;",
    'wall time, so a Redis waiting for a CPU lengthens it too): a worst PING far above it waited for a CPU, not a command.',
    'Redis CPU / client CPU: seconds of CPU Redis and this process (all threads: purge, gzip, GC) spent meanwhile.',
    "idle Redis: the probe alone for as long as queue-ops took; LTRIM + UNLINK alone: queue-ops' deletes without",
    'its reads or archive, paced to its rate. Their worst PING is what this machine does to a probe anyway.',
    'no probe beside it: the same purge with no PING probe running (the probe is a process that keeps one of two',
    'CPUs busy): its rate when it shares the machine with Redis alone.',
    'queue-ops purge writes every job to a gzip archive (fsynced, sha256 in its manifest) before deleting it.',
    `load average (1, 5, 15 min) at the start: ${startLoad}; at the end: ${loadNow()}.`,
  ];
}
