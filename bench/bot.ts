/**
 * The bot as `npm start` runs it, and a local Slack for it to talk to: shared by the start-up
 * bench (memory over 2,000 commands) and the load bench (200 at once, HTTP and Socket Mode).
 * Nothing here is mocked inside the bot: it is `dist/main.js` in a process of its own, reaching
 * this Slack through `SLACK_API_URL`, its answers through the response_url each command carries.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { type WebSocket, WebSocketServer } from 'ws';
import { outputOf } from '../test/helpers/loopback-slack.js';

export const ROOT = resolve(import.meta.dirname, '..');
export const SIGNING_SECRET = 'bench-signing-secret';

/** Linux: the resident set of a running process, MB. */
export function rssOf(pid: number): number {
  return statusMb(pid, 'VmRSS');
}

/** Linux: the largest resident set the process has had since it started, MB. */
export function peakRssOf(pid: number): number {
  return statusMb(pid, 'VmHWM');
}

/** Linux: the CPU time (user + system) a process has used so far, ms (10 ms resolution). */
export function cpuMsOf(pid: number): number {
  // The fields after the command name, which is in parentheses and may hold spaces.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function statusMb(pid: number, field: string): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024;
}

/**
 * Stands in for Slack: the Web API (`auth.test`, `apps.connections.open`, anything else `ok`),
 * the response_url of every command (`/respond/<n>`, arrival time kept), and, with `socket`, the
 * Socket Mode websocket, which says hello as Slack's does.
 */
export interface SlackStandIn {
  /** Base of the stand-in, e.g. `http://127.0.0.1:4711`. */
  url: string;
  /** For `SLACK_API_URL`. */
  apiUrl: string;
  /** Web API calls of `method` (`chat.postMessage`…) so far. */
  calls(method: string): number;
  /** Number of answers that reached a response_url. */
  responses(): number;
  /** `performance.now()` when the answer to command `n` arrived, and its body. */
  answer(n: number): { at: number; body: string } | undefined;
  /** Socket Mode: the bot's open websocket, once it has connected. */
  socket(): WebSocket | undefined;
  close(): Promise<void>;
}

export async function slackStandIn(options: { socket?: boolean } = {}): Promise<SlackStandIn> {
  const answers = new Map<number, { at: number; body: string }>();
  const calls = new Map<string, number>();
  let wss: WebSocketServer | undefined;
  let open: WebSocket | undefined;
  if (options.socket) {
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((done) => wss!.once('listening', done));
    wss.on('connection', (ws) => {
      open = ws;
      ws.send(
        JSON.stringify({ type: 'hello', num_connections: 1, connection_info: { app_id: 'A0QUEUEOPS' } }),
      );
    });
  }
  const wsPort = wss ? (wss.address() as AddressInfo).port : 0;
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const respond = /^\/respond\/(\d+)$/.exec(req.url ?? '');
      if (respond)
        answers.set(Number(respond[1]), { at: performance.now(), body: Buffer.concat(chunks).toString() });
      const method = /\/api\/([\w.]+)$/.exec(req.url ?? '')?.[1];
      if (method) calls.set(method, (calls.get(method) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(webApiAnswer(method, url, wsPort, calls.get(method ?? '') ?? 0)));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    apiUrl: `${url}/api/`,
    responses: () => answers.size,
    calls: (method) => calls.get(method) ?? 0,
    answer: (n) => answers.get(n),
    socket: () => open,
    async close() {
      for (const client of wss?.clients ?? []) client.terminate();
      if (wss) await new Promise((done) => wss!.close(done));
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

/** What Slack's Web API answers, enough for the bot: a new ts per post, an upload URL per file. */
function webApiAnswer(method: string | undefined, url: string, wsPort: number, n: number): object {
  switch (method) {
    case 'apps.connections.open':
      return { ok: true, url: `ws://127.0.0.1:${wsPort}/link` };
    case 'chat.postMessage':
      return { ok: true, channel: 'C0INCIDENT', ts: `1800000000.${String(n).padStart(6, '0')}` };
    case 'files.getUploadURLExternal':
      return { ok: true, upload_url: `${url}/upload/F${n}`, file_id: `F${n}` };
    case 'files.completeUploadExternal':
      return { ok: true, files: [{ id: `F${n}`, title: 'chart' }] };
    case 'conversations.history':
      return { ok: true, messages: [] };
    default:
      return { ok: true, user_id: 'U0BOT', bot_id: 'B0BOT', team_id: 'T0TEAM' };
  }
}

/** A `/queue <text>` slash command's fields as Slack sends them; its answer goes to `/respond/<n>`. */
export function slashFields(slackUrl: string, n: number, text = 'status'): Record<string, string> {
  return {
    token: 'unused',
    team_id: 'T0TEAM',
    channel_id: 'C0INCIDENT',
    user_id: 'U0BENCH',
    user_name: 'bench',
    command: '/queue',
    text,
    api_app_id: 'A0QUEUEOPS',
    response_url: `${slackUrl}/respond/${n}`,
    trigger_id: `${n}.1.1`,
  };
}

/**
 * Connections kept open between commands, as Slack's senders do; enough for a whole burst. Plain
 * `node:http`: on a busy 2-core machine fetch's own cost per request is a large part of what a
 * burst of 200 measures (bench/load.ts prints that floor).
 */
const agent = new Agent({ keepAlive: true, maxSockets: 512 });

/** POSTs `body` to `port`/`path`; resolves with the status once the whole answer is read. */
export function postLocal(
  port: number,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    // A kept connection the server closed as idle just as it was reused: sent again, as HTTP
    // clients do (the request never reached the server).
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (req.reusedSocket && error.code === 'ECONNRESET')
        postLocal(port, path, body, headers).then(resolve, reject);
      else reject(error);
    });
    req.end(body);
  });
}

/** A `/queue <text>` command's body and headers, signed as Slack signs it. */
export function signedSlash(
  slackUrl: string,
  n: number,
  text = 'status',
): { body: string; headers: Record<string, string> } {
  const body = new URLSearchParams(slashFields(slackUrl, n, text)).toString();
  const ts = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${ts}:${body}`).digest('hex')}`;
  return {
    body,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': signature,
    },
  };
}

/** The command over HTTP, signed as Slack signs it; resolves when the bot has acknowledged it. */
export async function postSlash(port: number, slackUrl: string, n: number, text = 'status'): Promise<void> {
  const { body, headers } = signedSlash(slackUrl, n, text);
  const status = await postLocal(port, '/slack/events', body, headers);
  if (status !== 200) throw new Error(`slash command ${n} answered ${status}`);
}

export async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface BotProcess {
  child: ChildProcess;
  pid: number;
  /** Where `/healthz` answers (HTTP: also `/slack/events`). */
  port: number;
  /** Everything the bot wrote so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * `dist/main.js` with `npm start`'s environment assignments and node flags, without npm in
 * between (so its RSS is the bot's), resolved once `/healthz` answers on `port`.
 */
export async function spawnBot(env: Record<string, string>, port: number): Promise<BotProcess> {
  const start = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start;
  // `VAR=value … node <flags> <entry>`: the assignments go to the environment, `node` is this one.
  const words = start.split(/\s+/);
  const assignments = Object.fromEntries(
    words
      .filter((w, i) => i < words.indexOf('node') && w.includes('='))
      .map((w) => w.split('=', 2) as [string, string]),
  );
  // BENCH_BOT_FLAGS: extra node flags for the bot, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const extra = process.env.BENCH_BOT_FLAGS?.split(/\s+/).filter(Boolean) ?? [];
  const args = [...extra, ...words.slice(words.indexOf('node') + 1)];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...assignments,
      PATH: process.env.PATH ?? '',
      ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = outputOf(child);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  try {
    // Ready when /healthz answers (the listener is up, the store open, the sweep done).
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the bot exited: ${output()}`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { child, pid: child.pid!, port, output, stop };
}
