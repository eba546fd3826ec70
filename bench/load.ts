/**
 * `npm run bench -- load`: 200 `/queue status` at the same moment, as an incident channel sends
 * them when everyone types at once, to the real bot (`dist/main.js` as `npm start` runs it) in
 * HTTP mode and in Socket Mode. Slack is a local stand-in (bench/bot.ts): its Web API through
 * `SLACK_API_URL`, its websocket for Socket Mode, and the response_url every answer is posted to.
 *
 * For each mode: one burst right after start-up (the code still cold), then `BURSTS` bursts of
 * `CONCURRENT` signed commands, each started once the previous one is fully answered. Printed:
 * - ack: from sending a command to its acknowledgement (HTTP: the 200; Socket Mode: the ack frame
 *   on the websocket). Slack gives 3 s before the user sees "dispatch_failed".
 * - answer: from sending to the answer arriving on its response_url (the user sees it then).
 * - Redis commands per command (INFO commandstats delta over the measured bursts, Lua's inner
 *   calls included, the bench's own INFO left out): concurrent status reads share one read.
 * - the bot's peak RSS (VmHWM, start-up included) and its RSS at the end.
 * HTTP commands come from a sender in a process of its own (bench/load-sender.ts), so that
 * answers arriving at the stand-in (this process) do not hold up its reading of acks; the floor
 * is that same sender against a server that answers at once, and what the bot adds is printed
 * beside it. Socket Mode's sender is the stand-in's websocket, in this process. All of it shares
 * the machine's cores with the bot. Figures only, no assertions; `BENCH_LOAD_N` /
 * `BENCH_LOAD_BURSTS` change the sizes.
 */
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { freePort, startPrivateRedis } from '../src/lib/redis-server.js';
import {
  type BotProcess,
  cpuMsOf,
  peakRssOf,
  ROOT,
  rssOf,
  SIGNING_SECRET,
  type SlackStandIn,
  slackStandIn,
  slashFields,
  spawnBot,
  until,
} from './bot.js';
import type { SendJob, SendResult } from './load-sender.js';
import { seedBullmq } from './startup.js';

const CONCURRENT = Number(process.env.BENCH_LOAD_N ?? 200);
const BURSTS = Number(process.env.BENCH_LOAD_BURSTS ?? 5);
const SLACK_ACK_MS = 3000;

interface Burst {
  ackMs: number[];
  answerMs: number[];
}

interface ModeFigures {
  mode: 'HTTP' | 'Socket Mode';
  cold: Burst;
  warm: Burst[];
  commandsPerRequest: number;
  /** The commands Redis ran for the measured bursts, most frequent first. */
  topCommands: [string, number][];
  startMb: number;
  peakMb: number;
  endMb: number;
  /** The bot's CPU time (user + system) per command over the measured bursts. */
  cpuMsPerCommand: number;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Calls per command name since the server started (Lua's inner calls included). */
async function commandCalls(admin: Redis): Promise<Map<string, number>> {
  const text = await admin.info('commandstats');
  const calls = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  return calls;
}

/** Epoch ms, comparable between this process and the sender's. */
const epochNow = () => performance.timeOrigin + performance.now();

/** Sends `CONCURRENT` commands numbered from `n0` at once; when each started and was acked. */
type BurstSender = (n0: number) => Promise<SendResult>;

/** Concurrent commands over `send`, then their answers: ack and answer times per command. */
async function burst(slack: SlackStandIn, n0: number, send: BurstSender): Promise<Burst> {
  const { startedAt, ackedAt } = await send(n0);
  const numbers = startedAt.map((_, i) => n0 + i);
  await until(`${CONCURRENT} answers`, () => numbers.every((n) => slack.answer(n)), 60_000);
  const answers = numbers.map((n, i) => performance.timeOrigin + slack.answer(n)!.at - startedAt[i]!);
  for (const n of numbers) {
    const body = slack.answer(n)!.body;
    // Every answer must be the status, not an error: a fast wrong answer proves nothing.
    if (!body.includes('q00') || body.includes('went wrong'))
      throw new Error(`answer ${n} is not a status: ${body.slice(0, 300)}`);
  }
  return { ackMs: ackedAt.map((at, i) => at - startedAt[i]!), answerMs: answers };
}

/** The HTTP sender's process (bench/load-sender.ts), run through tsx as this bench is. */
async function startSender(): Promise<{ send(job: SendJob): Promise<SendResult>; stop(): void }> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./load-sender.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the load sender exited (${code})`)));
  });
  return {
    send: (job) =>
      new Promise<SendResult>((resolve, reject) => {
        child.once('message', (m: { ok: boolean; result?: SendResult; error?: string }) =>
          m.ok ? resolve(m.result!) : reject(new Error(m.error)),
        );
        child.send(job);
      }),
    stop: () => child.kill(),
  };
}

/** Socket Mode: the envelopes Slack sends for slash commands; each done when its ack comes back. */
function socketSender(slack: SlackStandIn): BurstSender {
  const waiting = new Map<string, (at: number) => void>();
  const ws = slack.socket()!;
  ws.on('message', (data) => {
    const at = epochNow();
    const { envelope_id: id } = JSON.parse(String(data)) as { envelope_id?: string };
    if (id) waiting.get(id)?.(at);
  });
  const one = (n: number) =>
    new Promise<number>((resolve) => {
      const id = `env-${n}`;
      waiting.set(id, (at) => {
        waiting.delete(id);
        resolve(at);
      });
      ws.send(
        JSON.stringify({
          envelope_id: id,
          type: 'slash_commands',
          accepts_response_payload: true,
          payload: slashFields(slack.url, n),
        }),
      );
    });
  return async (n0) => {
    const startedAt: number[] = [];
    const acks = Array.from({ length: CONCURRENT }, (_, i) => {
      startedAt[i] = epochNow();
      return one(n0 + i);
    });
    return { startedAt, ackedAt: await Promise.all(acks) };
  };
}

async function runMode(
  mode: ModeFigures['mode'],
  config: string,
  admin: Redis,
  log: (t: string) => void,
): Promise<ModeFigures> {
  const socket = mode === 'Socket Mode';
  const slack = await slackStandIn({ socket });
  const port = await freePort();
  let bot: BotProcess | undefined;
  const sender = socket ? undefined : await startSender();
  try {
    bot = await spawnBot(
      {
        SLACK_BOT_TOKEN: 'xoxb-bench',
        SLACK_API_URL: slack.apiUrl,
        QUEUE_OPS_CONFIG: config,
        ...(socket
          ? { SLACK_APP_TOKEN: 'xapp-bench', METRICS_PORT: String(port) }
          : { SLACK_SIGNING_SECRET: SIGNING_SECRET, PORT: String(port) }),
      },
      port,
    );
    const pid = bot.pid;
    if (socket) await until('the websocket', () => slack.socket() !== undefined);
    // Settled: start-up's own work (the first expiry sweep, the idle collection) is over.
    await new Promise((r) => setTimeout(r, 2000));
    const startMb = rssOf(pid);
    const send: BurstSender = sender
      ? (n0) => sender.send({ port, slash: { slackUrl: slack.url, n0 }, count: CONCURRENT })
      : socketSender(slack);
    log(`load: ${mode}, first burst of ${CONCURRENT}…`);
    let n = 1;
    const cold = await burst(slack, n, send);
    n += CONCURRENT;
    const before = await commandCalls(admin);
    const cpuBefore = cpuMsOf(pid);
    const warm: Burst[] = [];
    for (let b = 0; b < BURSTS; b++) {
      await new Promise((r) => setTimeout(r, 300));
      log(`load: ${mode}, burst ${b + 1} of ${BURSTS}…`);
      warm.push(await burst(slack, n, send));
      n += CONCURRENT;
    }
    const cpuMs = cpuMsOf(pid) - cpuBefore;
    const after = await commandCalls(admin);
    const delta = [...after]
      .map(
        ([name, calls]) =>
          [name, calls - (before.get(name) ?? 0) - (name === 'info' ? 1 : 0)] as [string, number],
      )
      .filter(([, d]) => d > 0)
      .sort((a, b) => b[1] - a[1]);
    const total = delta.reduce((s, [, d]) => s + d, 0);
    return {
      mode,
      cold,
      warm,
      commandsPerRequest: total / (BURSTS * CONCURRENT),
      topCommands: delta,
      startMb,
      peakMb: peakRssOf(pid),
      cpuMsPerCommand: cpuMs / (BURSTS * CONCURRENT),
      endMb: rssOf(pid),
    };
  } finally {
    sender?.stop();
    await bot?.stop();
    // BENCH_BOT_OUTPUT=1: what the bot wrote (warnings, a crash), after its figures.
    if (bot && process.env.BENCH_BOT_OUTPUT) log(bot.output());
    await slack.close();
  }
}

const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(0)} ms` : '-');

function report(f: ModeFigures, floor: number[]): string[] {
  const acks = f.warm.flatMap((b) => b.ackMs);
  const answers = f.warm.flatMap((b) => b.answerMs);
  const worstBurstP99 = Math.max(...f.warm.map((b) => percentile(b.ackMs, 99)));
  const late = [...acks, ...f.cold.ackMs].filter((a) => a > SLACK_ACK_MS).length;
  const row = (label: string, xs: number[]) =>
    `  ${label.padEnd(34)}${ms(percentile(xs, 50)).padStart(9)}${ms(percentile(xs, 99)).padStart(9)}${ms(Math.max(...xs)).padStart(9)}`;
  return [
    `${f.mode}: ${CONCURRENT} concurrent /queue status, ${BURSTS} bursts after a first one`,
    `  ${''.padEnd(34)}${'p50'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(9)}`,
    row('ack', acks),
    row('answer on response_url', answers),
    row('first burst after start: ack', f.cold.ackMs),
    row('first burst after start: answer', f.cold.answerMs),
    ...(f.mode === 'HTTP'
      ? [
          `  the bot's share of the ack (above the floor): p50 ${ms(percentile(acks, 50) - percentile(floor, 50))}, p99 ${ms(percentile(acks, 99) - percentile(floor, 99))}`,
        ]
      : []),
    `  worst burst's ack p99 ${ms(worstBurstP99)}; acks over Slack's 3 s: ${late} of ${acks.length + f.cold.ackMs.length}`,
    `  Redis commands per command: ${f.commandsPerRequest.toFixed(2)} (${f.topCommands
      .slice(0, 6)
      .map(([name, d]) => `${name} ${d}`)
      .join(', ')})`,
    `  bot CPU (user + system) per command: ${f.cpuMsPerCommand.toFixed(2)} ms`,
    `  bot RSS: ${f.startMb.toFixed(1)} MB settled after start, peak ${f.peakMb.toFixed(1)} MB, ${f.endMb.toFixed(1)} MB at the end`,
  ];
}

/**
 * The floor: the same bursts, from the same sender process, to a plain `node:http` server in a
 * process of its own that answers 200 at once. What is left above it is the bot's.
 */
async function floorBursts(): Promise<Burst[]> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      '-e',
      `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.end()); }).listen(${port}, '127.0.0.1', () => console.log('up'))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const sender = await startSender();
  try {
    await new Promise((resolve) => child.stdout!.once('data', resolve));
    const bursts: Burst[] = [];
    for (let b = 0; b <= BURSTS; b++) {
      const { startedAt, ackedAt } = await sender.send({ port, count: CONCURRENT });
      // The first burst opens the connections; the bot's measured bursts reuse theirs too.
      if (b > 0) bursts.push({ ackMs: ackedAt.map((at, i) => at - startedAt[i]!), answerMs: [] });
      await new Promise((r) => setTimeout(r, 300));
    }
    return bursts;
  } finally {
    sender.stop();
    child.kill();
  }
}

export async function loadBench(log: (t: string) => void): Promise<string[]> {
  log('load: building dist/ if stale…');
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.js'), '--if-stale'], { stdio: 'inherit' });
  const redis = await startPrivateRedis();
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-bench-load-'));
  const admin = new Redis(`${redis.url}/0`);
  try {
    await seedBullmq(`${redis.url}/0`);
    const config = join(dir, 'queue-ops.yml');
    writeFileSync(
      config,
      [
        `store: sqlite:${join(dir, 'queue-ops.db')}`,
        'roles:\n  viewer: ["*"]',
        'systems:',
        `  - { name: pushizo, type: bullmq, redis: "${redis.url}/0", prefix: hs }`,
        '',
      ].join('\n'),
    );
    log('load: the floor (a server that only answers 200)…');
    const floor = (await floorBursts()).flatMap((b) => b.ackMs);
    const out: string[] = [
      '',
      `floor: ${CONCURRENT} concurrent POSTs from the HTTP sender (a process of its own) to a plain node:http server answering 200 at once: ` +
        `p50 ${ms(percentile(floor, 50))}, p99 ${ms(percentile(floor, 99))}, max ${ms(Math.max(...floor))}`,
      '',
    ];
    for (const mode of ['HTTP', 'Socket Mode'] as const) {
      out.push(...report(await runMode(mode, config, admin, log), floor), '');
    }
    out.push(
      'One BullMQ system of 12 queues (SQLite store), each command answered in full on its response_url',
      `and checked to be the status. Load average now: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}.`,
    );
    return out;
  } finally {
    admin.disconnect();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
