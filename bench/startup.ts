/**
 * `npm run bench -- startup`: how fast the command line answers and how light the bot runs.
 *
 * Every figure is taken in the same run as `node -e ''` (the floor: a Node process that does
 * nothing) and `redis-cli llen` (the peer: what the runbook types today), so a busy machine shows
 * up in all three alike. The command lines are the installed binary (`bin/queue-ops.js` on the
 * compiled dist/, what `npm link` puts on PATH), each run a fresh process, round-robin so noise
 * spreads evenly:
 *   - `queue-ops --json status` against one BullMQ system of 12 queues, and against one Celery
 *     system (6 queues, no worker running: the pidbox inspection answer is "nobody");
 *   - `queue-ops --help`;
 *   - the same status through tsx on src/ (how every run started before the build), for reference.
 * Wall time (median, p90), CPU time (user + sys, median) and peak RSS (median of ru_maxrss, via
 * GNU time) of each. Then the bot (`node dist/main.js`, HTTP mode, against a stand-in for Slack on
 * loopback): its RSS at rest after start-up, right after 1,000 signed `/queue status` commands and
 * at rest after them, then the same for 1,000 more. The target (flat within 10 % over 1,000
 * commands) compares the two "at rest" readings: during a burst V8 lets its heap grow with the
 * garbage (measured: ~27 → ~44 MB of heap while the live part stays ~27–30 MB), and the bot gives
 * that back once it is idle (one compacting collection 5 s after the last command,
 * src/lib/idle-collector.ts; V8's own memory reducer did it only some of the time), so the busy
 * figure is the working size, not growth with use. Both are printed. Figures only, no assertions.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { celeryEnvelope, priorityKey } from '../src/demo/seed-celery.js';
import { freePort, startPrivateRedis } from '../src/lib/redis-server.js';
import { postSlash, ROOT, rssOf, SIGNING_SECRET, slackStandIn, spawnBot, until } from './bot.js';

const BIN = join(ROOT, 'bin', 'queue-ops.js');
const GNU_TIME = '/usr/bin/time';
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 15);
const BOT_COMMANDS = 1000;
/** Idle time before an "at rest" RSS reading: the bot collects 5 s after its last command. */
const REST_MS = 12_000;
const BOT_CONCURRENCY = 4;
const CELERY_QUEUES = [
  'celery',
  'celery:default',
  'celery:alarm_processing',
  'celery:notification_sending',
  'celery:ota_processing',
  'celery:measurement_processing',
];

interface Timed {
  wallMs: number;
  cpuMs: number;
  /** Peak resident set, MB; NaN without GNU time. */
  peakMb: number;
}

interface Command {
  label: string;
  argv: string[];
}

const median = (xs: number[]) => percentile(xs, 50);
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** One fresh process to completion: wall time here, CPU and peak RSS from GNU time. */
function timeOnce(argv: string[], outFile: string): Timed {
  const withTime = existsSync(GNU_TIME);
  const [cmd, ...args] = withTime ? [GNU_TIME, '-f', '%U %S %M', '-o', outFile, ...argv] : argv;
  const started = performance.now();
  const run = spawnSync(cmd!, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  const wallMs = performance.now() - started;
  if (run.status !== 0) {
    throw new Error(`${argv.join(' ')} exited ${run.status}: ${String(run.stderr).slice(0, 400)}`);
  }
  if (!withTime) return { wallMs, cpuMs: Number.NaN, peakMb: Number.NaN };
  const [user, sys, maxKb] = readFileSync(outFile, 'utf8').trim().split(/\s+/).slice(-3).map(Number);
  return { wallMs, cpuMs: ((user ?? 0) + (sys ?? 0)) * 1000, peakMb: (maxKb ?? 0) / 1024 };
}

/** Each command `RUNS` times, interleaved, after one warm-up each (the file cache, not the process). */
function timeAll(commands: Command[], dir: string): Map<string, Timed[]> {
  const out = join(dir, 'time.txt');
  const results = new Map<string, Timed[]>(commands.map((c) => [c.label, []]));
  for (const command of commands) timeOnce(command.argv, out);
  for (let i = 0; i < RUNS; i++) {
    for (const command of commands) results.get(command.label)!.push(timeOnce(command.argv, out));
  }
  return results;
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

function table(results: Map<string, Timed[]>, floor: string, target: Map<string, string>): string[] {
  const floorWall = median(results.get(floor)!.map((r) => r.wallMs));
  const widths = [52, 10, 8, 8, 8, 10, 12];
  const row = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[0]!) : c.padStart(widths[i]!))).join('  ');
  const lines = [
    row([
      'command (fresh process each run)',
      'median ms',
      'p90 ms',
      '× floor',
      'cpu ms',
      'peak MB',
      'target',
    ]),
  ];
  lines.push('-'.repeat(lines[0]!.length));
  for (const [label, runs] of results) {
    const wall = runs.map((r) => r.wallMs);
    lines.push(
      row([
        label,
        fmt(median(wall)),
        fmt(percentile(wall, 90)),
        `${fmt(median(wall) / floorWall, 1)}×`,
        fmt(median(runs.map((r) => r.cpuMs))),
        fmt(median(runs.map((r) => r.peakMb)), 1),
        target.get(label) ?? '',
      ]),
    );
  }
  return lines;
}

/** 12 BullMQ queues written by BullMQ itself, a few jobs each in several states. */
export async function seedBullmq(url: string): Promise<void> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const now = Date.now();
  for (let q = 0; q < 12; q++) {
    const queue = new Queue(`q${String(q).padStart(2, '0')}`, { connection, prefix: 'hs' });
    await queue.addBulk(
      Array.from({ length: 20 }, (_, i) => ({
        name: 'send',
        data: { i },
        opts: i % 5 === 0 ? { delay: 60_000 } : i % 7 === 0 ? { priority: 3 } : { timestamp: now - i * 1000 },
      })),
    );
    await queue.close();
  }
  await connection.quit();
}

/** The six Zeus queues with a few messages on each priority list, bound as kombu binds them. */
async function seedCelery(url: string): Promise<void> {
  const client = new Redis(url);
  const pipeline = client.pipeline();
  for (const queue of CELERY_QUEUES) {
    pipeline.sadd(`_kombu.binding.${queue}`, `${queue}\x06\x16\x06\x16${queue}`);
    for (const step of [0, 3, 6, 9]) {
      for (let i = 0; i < 5; i++) {
        pipeline.lpush(
          priorityKey(queue, step),
          celeryEnvelope({ queue, task: 'zeus.task', args: [i], priority: step }),
        );
      }
    }
  }
  await pipeline.exec();
  client.disconnect();
}

function writeConfigs(dir: string, bullmqUrl: string, celeryUrl: string) {
  const store = `store: sqlite:${join(dir, 'queue-ops.db')}`;
  const roles = 'roles:\n  viewer: ["*"]';
  const bullmq = `  - { name: pushizo, type: bullmq, redis: "${bullmqUrl}", prefix: hs }`;
  const celery = `  - { name: zeus, type: celery, redis: "${celeryUrl}" }`;
  const write = (name: string, systems: string[]) => {
    const path = join(dir, name);
    writeFileSync(path, [store, roles, 'systems:', ...systems, ''].join('\n'));
    return path;
  };
  return {
    bullmq: write('bullmq.yml', [bullmq]),
    celery: write('celery.yml', [celery]),
    both: write('both.yml', [bullmq, celery]),
  };
}

/** The bot's RSS after start-up and as status commands go by. */
async function botRss(config: string): Promise<string[]> {
  const slack = await slackStandIn();
  const port = await freePort();
  const bot = await spawnBot(
    {
      SLACK_BOT_TOKEN: 'xoxb-bench',
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: slack.apiUrl,
      PORT: String(port),
      QUEUE_OPS_CONFIG: config,
    },
    port,
  );
  const pid = bot.pid;
  try {
    // At rest: the bot gives back what the last burst's garbage made its heap grow (5 s after the
    // last command), so each "at rest" figure is what an idle bot holds, the same way after
    // start-up as after the commands.
    const atRest = async () => {
      await new Promise((r) => setTimeout(r, REST_MS));
      return rssOf(pid);
    };
    const afterStart = await atRest();
    let sent = 0;
    const sendUpTo = async (total: number) => {
      const workers = Array.from({ length: BOT_CONCURRENCY }, async () => {
        while (sent < total) {
          const n = ++sent;
          await postSlash(port, slack.url, n);
        }
      });
      await Promise.all(workers);
      await until(`${total} answers`, () => slack.responses() >= total);
    };
    const started = performance.now();
    await sendUpTo(BOT_COMMANDS);
    const seconds = (performance.now() - started) / 1000;
    const busy = rssOf(pid);
    const rested = await atRest();
    await sendUpTo(2 * BOT_COMMANDS);
    const busyAgain = rssOf(pid);
    const restedAgain = await atRest();
    const count = (n: number) => n.toLocaleString('en-US');
    const pct = (to: number, from: number) => `${to >= from ? '+' : ''}${fmt((to / from - 1) * 100, 1)} %`;
    const line = (label: string, mb: number, note = '') =>
      `  bot RSS ${label.padEnd(46)} ${fmt(mb, 1).padStart(7)} MB${note ? `  ${note}` : ''}`;
    return [
      line('after start-up, at rest', afterStart),
      line(
        `right after ${count(BOT_COMMANDS)} status commands`,
        busy,
        `${pct(busy, afterStart)} (V8's heap at work)`,
      ),
      line(
        `after ${count(BOT_COMMANDS)} status commands, at rest`,
        rested,
        `${pct(rested, afterStart)} (target: within 10 %)`,
      ),
      line(`right after ${count(BOT_COMMANDS)} more`, busyAgain, pct(busyAgain, busy)),
      line(`after ${count(BOT_COMMANDS)} more, at rest`, restedAgain, pct(restedAgain, rested)),
      `  (signed slash commands over HTTP, ${BOT_CONCURRENCY} at a time, each answered on its response_url: ` +
        `the first ${count(BOT_COMMANDS)} in ${fmt(seconds, 1)} s; "at rest": ${REST_MS / 1000} s idle, after the bot's idle collection)`,
    ];
  } finally {
    await bot.stop();
    await slack.close();
  }
}

export async function startupBench(): Promise<string[]> {
  const log = (text: string) => process.stderr.write(`${text}\n`);
  log('startup: building dist/ if stale…');
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.js'), '--if-stale'], { stdio: 'inherit' });
  const redis = await startPrivateRedis();
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-bench-startup-'));
  try {
    const bullmqUrl = `${redis.url}/0`;
    const celeryUrl = `${redis.url}/1`;
    log('startup: seeding 12 BullMQ queues and 6 Celery queues…');
    await seedBullmq(bullmqUrl);
    await seedCelery(celeryUrl);
    const configs = writeConfigs(dir, bullmqUrl, celeryUrl);
    // The first run creates the store; every measured run finds it current, as users do.
    execFileSync(process.execPath, [BIN, '--config', configs.both, '--json', 'status'], { stdio: 'ignore' });

    const node = process.execPath;
    const redisCli = (key: string) => [
      'redis-cli',
      '-p',
      String(redis.port),
      '-n',
      key.split('|')[0]!,
      'llen',
      key.split('|')[1]!,
    ];
    const commands: Command[] = [
      { label: "floor: node -e ''", argv: [node, '-e', ''] },
      { label: 'peer: redis-cli llen hs:q00:wait', argv: redisCli('0|hs:q00:wait') },
      { label: 'peer: redis-cli llen celery', argv: redisCli('1|celery') },
      { label: 'queue-ops --help', argv: [node, BIN, '--help'] },
      {
        label: 'queue-ops --json status (BullMQ, 12 queues)',
        argv: [node, BIN, '--config', configs.bullmq, '--json', 'status'],
      },
      {
        label: 'queue-ops --json status (Celery, 6 queues)',
        argv: [node, BIN, '--config', configs.celery, '--json', 'status'],
      },
      {
        label: 'before: tsx src/…/cli/main.ts --json status (BullMQ)',
        argv: [
          node,
          '--import',
          'tsx',
          join(ROOT, 'src/transports/cli/main.ts'),
          '--config',
          configs.bullmq,
          '--json',
          'status',
        ],
      },
    ];
    log(`startup: ${RUNS} runs of ${commands.length} command lines, interleaved…`);
    const results = timeAll(commands, dir);
    const targets = new Map([
      ['queue-ops --help', '≤ 200 ms'],
      ['queue-ops --json status (BullMQ, 12 queues)', '≤ 2× floor, 80 MB'],
      ['queue-ops --json status (Celery, 6 queues)', '≤ 2× floor, 80 MB'],
    ]);
    const lines = table(results, "floor: node -e ''", targets);

    log(`startup: the bot, ${BOT_COMMANDS} status commands…`);
    const bot = await botRss(configs.both);
    const peerRss = median(results.get('peer: redis-cli llen hs:q00:wait')!.map((r) => r.peakMb));
    const floorRss = median(results.get("floor: node -e ''")!.map((r) => r.peakMb));
    return [
      ...lines,
      '',
      ...bot,
      `  (floor: node -e '' peaks at ${fmt(floorRss, 1)} MB; peer: redis-cli at ${fmt(peerRss, 1)} MB)`,
      '',
      `wall: spawn to exit as seen by the bench, ${RUNS} runs each after a warm-up, interleaved; cpu: user + sys;`,
      'peak: ru_maxrss (GNU time). "× floor" is the median over the floor\'s median in this same run, so a busy',
      `machine shows in every line alike (load average now: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}).`,
    ];
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
