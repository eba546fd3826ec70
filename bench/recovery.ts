/**
 * Recovery figures for `npm run bench`: 200,000 waiting BullMQ jobs (`BENCH_RECOVERY_N`), purged by
 * the command line (`bin/queue-ops.js approve`, the compiled dist/ as users run it), beside the
 * same purge whose process is SIGKILLed mid-way, in the middle of deleting a chunk, and finished by
 * the next command line, a `status`: it answers first, then recovery deletes again the chunk the
 * killed run had only partly deleted and walks on.
 * For each: wall time of the command line, when `status` answered, and the worst and p99 latency
 * of a PING probe (a process of its own) meanwhile, with the longest single command Redis timed
 * (SLOWLOG): how long workers and producers on that Redis were held up. Figures only.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { seedRawBullmqJobs } from '../src/demo/seed-raw.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { ROOT } from './bot.js';
import { withProbe } from './purge.js';

const N = Number(process.env.BENCH_RECOVERY_N ?? 200_000);
const BIN = join(ROOT, 'bin', 'queue-ops.js');
/** The purge's chunk: the kill lands between two of its boundaries. */
const CHUNK = 10_000;

interface Run {
  label: string;
  ms: number;
  answeredMs?: number;
  worstPing: number;
  p99Ping: number;
  longestCall: number;
  note: string;
}

/** One command line as a child; resolves with its exit code and when its stdout first spoke. */
function cli(args: string[]): { done: Promise<{ code: number | null; firstOut?: number; out: string }> } {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let firstOut: number | undefined;
  let out = '';
  child.stdout.on('data', (chunk) => {
    firstOut ??= performance.now() - t0;
    out += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    out += String(chunk);
  });
  return {
    done: new Promise((resolve) => child.once('exit', (code) => resolve({ code, firstOut, out }))),
  };
}

export async function recoveryBench(log: (text: string) => void): Promise<string[]> {
  log('recovery: building dist/ if stale…');
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.js'), '--if-stale'], { stdio: 'inherit' });
  const server = await startPrivateRedis();
  const url = `${server.url}/0`;
  const admin = new Redis(url);
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-bench-recovery-'));
  const dbFile = join(dir, 'q.db');
  const config = join(dir, 'queue-ops.yml');
  writeFileSync(
    config,
    [
      `store: ${JSON.stringify(`sqlite:${dbFile}`)}`,
      'roles:',
      '  admin: [U0BOB, U0ERIN]',
      'approvals:',
      '  cliSameOsUser: allow',
      'archive:',
      `  dir: ${JSON.stringify(join(dir, 'archive'))}`,
      'systems:',
      '  - name: hs',
      '    type: bullmq',
      `    redis: ${JSON.stringify(url)}`,
      '    prefix: bench',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const as = (user: string, ...words: string[]) =>
    cli(['--config', config, '--user', user, '--json', ...words]);
  const ask = async () => {
    const { out } = await as('U0BOB', 'purge', 'hs/events').done;
    return (
      JSON.parse(out.split('\n').find((l) => l.startsWith('{'))!) as { data: { request: { id: string } } }
    ).data.request.id;
  };
  const seed = async () => {
    await admin.flushall();
    log(`recovery: seeding ${N.toLocaleString('en-US')} BullMQ jobs…`);
    await seedRawBullmqJobs(admin, { prefix: 'bench', queue: 'events', count: N });
  };
  const wait = 'bench:events:wait';
  const runs: Run[] = [];
  try {
    await seed();
    let id = await ask();
    log('recovery: the purge itself (approve on the command line)…');
    const whole = await withProbe(url, async () => {
      await as('U0ERIN', 'approve', id).done;
      return N - (await admin.llen(wait));
    });
    runs.push({
      label: 'purge, uninterrupted',
      ...whole,
      note: `${whole.removed.toLocaleString('en-US')} purged`,
    });

    await seed();
    id = await ask();
    log('recovery: the same purge, SIGKILLed mid-way, mid-chunk…');
    const child = spawn(
      process.execPath,
      [BIN, '--config', config, '--user', 'U0ERIN', '--json', 'approve', id],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
        stdio: 'ignore',
      },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    for (;;) {
      const gone = N - (await admin.llen(wait));
      if (gone >= N / 2 && gone % CHUNK >= CHUNK / 10 && gone % CHUNK <= (CHUNK * 8) / 10) break;
      await new Promise((r) => setTimeout(r, 1));
    }
    child.kill('SIGKILL');
    await exited;
    const left = await admin.llen(wait);
    const db = new Database(dbFile, { readonly: true });
    const marked = (
      db
        .prepare('SELECT COALESCE(SUM(purged), 0) AS n FROM purge_chunks WHERE purge_id = ? AND deleted = 1')
        .get(id) as { n: number }
    ).n;
    db.close();
    log('recovery: the next command line, `status`…');
    let answeredMs: number | undefined;
    const recovered = await withProbe(url, async () => {
      const { code, firstOut } = await as('U0BOB', 'status', 'hs').done;
      if (code !== 0) throw new Error(`status exited ${code}`);
      answeredMs = firstOut;
      return left - (await admin.llen(wait));
    });
    runs.push({
      label: 'killed mid-way; `status`, then recovery',
      ...recovered,
      ...(answeredMs === undefined ? {} : { answeredMs }),
      note: `killed with ${left.toLocaleString('en-US')} left, ${(N - left - marked).toLocaleString('en-US')} deleted but not recorded; ${recovered.removed.toLocaleString('en-US')} purged by recovery`,
    });
  } finally {
    admin.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const row = (r: Run) =>
    [
      r.label.padEnd(40),
      (r.ms / 1000).toFixed(2).padStart(7),
      (r.answeredMs === undefined ? '–' : (r.answeredMs / 1000).toFixed(2)).padStart(9),
      r.worstPing.toFixed(1).padStart(10),
      r.p99Ping.toFixed(1).padStart(7),
      r.longestCall.toFixed(1).padStart(13),
      `  ${r.note}`,
    ].join('  ');
  return [
    '',
    [
      `BullMQ, ${N.toLocaleString('en-US')} waiting jobs`.padEnd(40),
      'time s',
      'answered',
      'worst PING',
      'p99 ms',
      'longest call',
    ]
      .map((c, i) => (i === 0 ? c : c.padStart([7, 9, 10, 7, 13][i - 1]!)))
      .join('  '),
    '-'.repeat(100),
    ...runs.map(row),
    '',
    'Each a command line (dist/) as a process of its own: `approve` running the purge; then the same purge',
    'SIGKILLed while deleting a chunk, and the next command line, `status`, which answers first ("answered": its',
    'JSON on stdout, seconds after start) and then finishes the purge from its archive ("time": until it exits).',
    'worst PING / p99: a PING probe (own process, own connection) meanwhile, ms; longest call: SLOWLOG, ms.',
  ];
}
