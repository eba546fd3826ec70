import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../src/lib/redis-server.js';
import { randomName } from '../helpers/bullmq-jobs.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { type LoopbackSlack, outputOf, startLoopbackSlack } from '../helpers/loopback-slack.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * `npm start` as README and a systemd unit run it: the real `npm`, its script, the built bot.
 * SIGTERM or SIGINT to npm's own pid must stop the bot (its script used to run node under
 * `sh -c`, which died and left node listening on the port, an orphan). A Slack that does not
 * answer at start: `/healthz` 200 at once, `/readyz` 503 naming the call and its URL, and the bot
 * keeps trying until Slack answers.
 */
const root = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'qo-npm-start-'));
const config = writeConfigFile(dir, {
  store: `sqlite:${join(dir, 'store.db')}`,
  systems: [bullmqSystem('pushizo', testRedisUrl(), randomName('npmstart'))],
});
const started: ChildProcess[] = [];
let slack: LoopbackSlack | undefined;

afterEach(async () => {
  for (const child of started.splice(0)) {
    for (const pid of descendants(child.pid as number)) kill(pid, 'SIGKILL');
    kill(child.pid as number, 'SIGKILL');
  }
  await slack?.close();
  slack = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie (exited, not yet reaped by its parent) holds no port and runs nothing.
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Every process below `pid` (Linux: /proc's children lists). */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

async function until<T>(
  what: string,
  read: () => Promise<T | undefined> | T | undefined,
  output: () => string,
) {
  for (let i = 0; i < 400; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}\n${output()}`);
}

async function get(port: number, path: string): Promise<{ status: number; text: string } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, text: await res.text() };
  } catch {
    return undefined;
  }
}

function npmStart(env: Record<string, string>) {
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? dir,
      SLACK_BOT_TOKEN: 'xoxb-npm-start',
      SLACK_SIGNING_SECRET: 'npm-start-secret',
      QUEUE_OPS_CONFIG: config,
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, output: outputOf(child), exited };
}

/** Signals npm's pid only, then waits for the port to close and every process below npm to end. */
async function stopAndCheck(bot: ReturnType<typeof npmStart>, port: number, signal: NodeJS.Signals) {
  const below = descendants(bot.child.pid as number);
  expect(below.length, bot.output()).toBeGreaterThan(0);
  bot.child.kill(signal);
  await bot.exited;
  await until('the port to close', async () => ((await portOpen(port)) ? undefined : true), bot.output);
  await until('the bot to end', () => (below.some(alive) ? undefined : true), bot.output);
  expect(below.filter(alive)).toEqual([]);
}

describe('npm start', () => {
  it('with Slack unreachable: /healthz 200 at once, /readyz 503 naming auth.test and its URL; SIGTERM to npm stops it all', async () => {
    const [port, deadSlack] = [await freePort(), await freePort()];
    const apiUrl = `http://127.0.0.1:${deadSlack}/api/`;
    const bot = npmStart({ PORT: String(port), SLACK_API_URL: apiUrl });
    const health = await until('/healthz', () => get(port, '/healthz'), bot.output);
    expect(health.status).toBe(200);
    const ready = await get(port, '/readyz');
    expect(ready?.status).toBe(503);
    expect(JSON.parse(ready?.text ?? '{}')).toMatchObject({
      ready: false,
      slack: 'disconnected',
      slackCall: { method: 'auth.test', url: `${apiUrl}auth.test`, error: 'unreachable' },
    });
    // The log names what it tried, and it keeps trying.
    await until('a second try', () => (/"attempt":2/.test(bot.output()) ? true : undefined), bot.output);
    expect(bot.output()).toContain(`auth.test at ${apiUrl}auth.test`);
    expect(bot.output()).not.toContain('xoxb-npm-start');
    await stopAndCheck(bot, port, 'SIGTERM');
  }, 60_000);

  it('turns ready once Slack answers, and SIGINT to npm stops the running bot and frees its port', async () => {
    const [port, slackPort] = [await freePort(), await freePort()];
    const bot = npmStart({ PORT: String(port), SLACK_API_URL: `http://127.0.0.1:${slackPort}/api/` });
    await until(
      '/readyz 503',
      async () => ((await get(port, '/readyz'))?.status === 503 ? true : undefined),
      bot.output,
    );
    slack = await startLoopbackSlack(slackPort);
    const ready = await until(
      '/readyz 200',
      async () => {
        const answer = await get(port, '/readyz');
        return answer?.status === 200 ? answer : undefined;
      },
      bot.output,
    );
    expect(JSON.parse(ready.text)).toMatchObject({ ready: true, store: 'ok', slack: 'connected' });
    expect(bot.output()).toContain('listening for Slack on port');
    await stopAndCheck(bot, port, 'SIGINT');
  }, 60_000);
});

/**
 * `store: sqlite:./data/…` is relative to the directory the bot runs in (the Docker image's
 * WORKDIR /app, where /app/data is the bot's), not to the config file's folder.
 */
describe('a relative SQLite store', () => {
  it('is opened under the working directory, not beside the config file', async () => {
    const workdir = mkdtempSync(join(tmpdir(), 'qo-workdir-'));
    const configDir = mkdtempSync(join(tmpdir(), 'qo-configdir-'));
    try {
      const relativeConfig = writeConfigFile(configDir, {
        store: 'sqlite:./data/queue-ops.db',
        systems: [bullmqSystem('pushizo', testRedisUrl(), randomName('relstore'))],
      });
      slack = await startLoopbackSlack();
      const port = await freePort();
      const child = spawn(process.execPath, [join(root, 'dist/main.js')], {
        cwd: workdir,
        env: {
          PATH: process.env.PATH ?? '',
          SLACK_BOT_TOKEN: 'xoxb-relative',
          SLACK_SIGNING_SECRET: 'relative-secret',
          SLACK_API_URL: slack.url,
          QUEUE_OPS_CONFIG: relativeConfig,
          PORT: String(port),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.push(child);
      const output = outputOf(child);
      await until(
        '/readyz 200',
        async () => ((await get(port, '/readyz'))?.status === 200 ? true : undefined),
        output,
      );
      expect(existsSync(join(workdir, 'data', 'queue-ops.db'))).toBe(true);
      expect(existsSync(join(configDir, 'data'))).toBe(false);
    } finally {
      rmSync(workdir, { recursive: true, force: true });
      rmSync(configDir, { recursive: true, force: true });
    }
  }, 60_000);
});
