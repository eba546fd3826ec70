import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { freePort } from '../../src/lib/redis-server.js';
import { backlogRule, bullmqSystem, configYaml } from './config-file.js';

/** One Web API call as the loopback Slack received it. */
export interface LoopbackCall {
  method: string;
  body: Record<string, string>;
  ts?: string;
}

/** A message the loopback Slack holds in a channel, as `conversations.history` returns it. */
interface HeldMessage {
  ts: string;
  text: string;
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
}

/**
 * Slack's Web API on a loopback port, for bots that run as real child processes (nock cannot reach
 * into another process). Records every call, keeps each channel's posts for `conversations.history`
 * (metadata included, as Slack does with `include_all_metadata`), and can take a post and never
 * answer it (Slack has the message, the bot never hears so, as when it dies mid-call) or answer
 * it 500 (Slack has the message, a proxy lost the answer). On `port`, or a free one.
 */
export async function startLoopbackSlack(port = 0) {
  const calls: LoopbackCall[] = [];
  const history = new Map<string, HeldMessage[]>();
  const held: ServerResponse[] = [];
  let counter = 0;
  let holdNextPost = false;
  let failNextPostAnswer = false;
  /** Methods (`*`: all) Slack answers `ok: false` with an error (a refused token). */
  const refused = new Map<string, string>();
  /** Methods (`*`: all) answered with an HTTP status and no body (Slack's own trouble). */
  const statuses = new Map<string, number>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += String(chunk);
    });
    req.on('end', () => {
      const method = (req.url ?? '').replace(/^\/api\//, '');
      const body = Object.fromEntries(new URLSearchParams(raw));
      const call: LoopbackCall = { method, body };
      calls.push(call);
      let answer: Record<string, unknown> = {
        ok: true,
        user_id: 'U0BOT',
        bot_id: 'B0BOT',
        team_id: 'T0TEAM',
      };
      const status = statuses.get(method) ?? statuses.get('*');
      if (status !== undefined) {
        res.writeHead(status);
        res.end();
        return;
      }
      const refusal = refused.get(method) ?? refused.get('*');
      if (refusal !== undefined) answer = { ok: false, error: refusal };
      else if (method === 'chat.postMessage') {
        // A real ts (seconds now), so `oldest` filters the way Slack's does.
        call.ts = `${Math.floor(Date.now() / 1000)}.${String(++counter).padStart(6, '0')}`;
        const channel = body.channel ?? '';
        const message: HeldMessage = { ts: call.ts, text: body.text ?? '' };
        if (body.metadata) message.metadata = JSON.parse(body.metadata) as HeldMessage['metadata'];
        history.set(channel, [message, ...(history.get(channel) ?? [])]);
        if (holdNextPost && !body.thread_ts) {
          holdNextPost = false;
          held.push(res);
          return;
        }
        if (failNextPostAnswer && !body.thread_ts) {
          failNextPostAnswer = false;
          res.writeHead(500);
          res.end();
          return;
        }
        answer = { ok: true, channel, ts: call.ts };
      } else if (method === 'chat.update') answer = { ok: true, channel: body.channel, ts: body.ts };
      else if (method === 'conversations.history') {
        const oldest = Number(body.oldest ?? 0);
        const all = body.include_all_metadata === 'true';
        answer = {
          ok: true,
          has_more: false,
          messages: (history.get(body.channel ?? '') ?? [])
            .filter((m) => Number(m.ts) >= oldest)
            .map((m) => (all ? m : { ts: m.ts, text: m.text })),
        };
      } else if (method === 'files.getUploadURLExternal') {
        answer = {
          ok: true,
          upload_url: `${url.replace(/api\/$/, '')}upload/F${++counter}`,
          file_id: `F${counter}`,
        };
      } else if (method === 'files.completeUploadExternal') answer = { ok: true, files: [] };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  return {
    url,
    calls,
    /** Top-level posts (not thread replies). */
    posts: () => calls.filter((c) => c.method === 'chat.postMessage' && !c.body.thread_ts),
    /** The next top-level post is taken (and kept in history) but never answered. */
    holdNextPost() {
      holdNextPost = true;
    },
    held: () => held.length,
    /** From now on every call of `method` (`*`: any) is answered `{ ok: false, error }`, as Slack refuses it. */
    refuse(method: string, error: string) {
      refused.set(method, error);
    },
    /** From now on every call of `method` (`*`: any) is answered with HTTP `status`. */
    answerStatus(method: string, status: number) {
      statuses.set(method, status);
    },
    /** `method` (`*`: the wildcard) is answered as usual again. */
    accept(method: string) {
      refused.delete(method);
      statuses.delete(method);
    },
    /** The next top-level post is taken (and kept in history), and answered 500. */
    failNextPostAnswer() {
      failNextPostAnswer = true;
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}

export type LoopbackSlack = Awaited<ReturnType<typeof startLoopbackSlack>>;

/**
 * The config of a bot that alerts on a backlog of `pushizo/dispatch-ios` (over 50 waiting) every
 * second, written to `file`: what the bots run as processes against the loopback Slack watch.
 */
export function writeBacklogAlertConfig(
  file: string,
  options: { store: string; redis: string; prefix: string },
): void {
  writeFileSync(
    file,
    configYaml({
      slack: { incidentChannel: 'C0INCIDENT' },
      store: options.store,
      systems: [bullmqSystem('pushizo', options.redis, options.prefix, { queues: ['dispatch-ios'] })],
      escalation: {
        groupBy: 'none',
        intervalSeconds: 1,
        renotifyMinutes: 60,
        rules: [backlogRule()],
      },
    }),
  );
}

/**
 * A real bot process (`dist/main.js`, as `npm start` runs it) in HTTP mode against `apiUrl`, on
 * `env.PORT` or a free port.
 */
export async function spawnBot(config: string, apiUrl: string, env: Record<string, string> = {}) {
  const port = Number(env.PORT ?? (await freePort()));
  const child: ChildProcess = spawn(process.execPath, [resolve(import.meta.dirname, '../../dist/main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      SLACK_BOT_TOKEN: 'xoxb-fault',
      SLACK_SIGNING_SECRET: 'fault-secret',
      SLACK_API_URL: apiUrl,
      QUEUE_OPS_CONFIG: config,
      LOG_LEVEL: 'info',
      ...env,
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return { child, port, output: outputOf(child), exited };
}

/** Everything a child process writes, stdout and stderr interleaved, from now on. */
export function outputOf(child: ChildProcess): () => string {
  let output = '';
  child.stdout?.on('data', (c) => {
    output += String(c);
  });
  child.stderr?.on('data', (c) => {
    output += String(c);
  });
  return () => output;
}
