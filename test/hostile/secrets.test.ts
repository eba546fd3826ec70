import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { waitFor } from '../helpers/bullmq-jobs.js';
import { publishCelery } from '../helpers/celery-worker.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';

/**
 * One run of every verb, through Slack (the bot as `npm start` runs it: dist/main.js in HTTP mode,
 * a child process logging at debug to its stderr) and through the command line (`queue-ops
 * --json`, also a child process), with a password in every Redis URL, a wrong password and an
 * unreachable Redis with a password, Slack's tokens and the audit key in the environment, and
 * secret-looking fields in job data and in a job's error. Everything that leaves the processes is
 * kept (logs, stdout and stderr, every Web API call and response_url body, `/metrics`), and no
 * password, token or key may appear in any of it. Job data may only be in the purge archive, whose
 * files are the owner's alone.
 */

const PASSWORD = 'Redis-Pa55-4f0c9d2e';
const WRONG_PASSWORD = 'Wrong-Pa55-77ab13ce';
const DOWN_PASSWORD = 'Down-Pa55-b51f03aa';
const BOT_TOKEN = 'xoxb-1111-2222-SeCrEtBoTtOkEn';
const SIGNING_SECRET = 'signing-secret-9e8d7c6b5a493827';
const AUDIT_KEY = 'audit-key-0123456789abcdef0123456789abcdef';
const JOB_SECRET = 'job-field-secret-5c2e81';
const JOB_API_KEY = 'AKIA-job-api-key-3f9a';

/** Never anywhere outside the processes. */
const NEVER = [PASSWORD, WRONG_PASSWORD, DOWN_PASSWORD, BOT_TOKEN, SIGNING_SECRET, AUDIT_KEY];
/** Job data: only in the purge archive. */
const JOB_DATA = [JOB_SECRET, JOB_API_KEY];

const BIN = resolve(import.meta.dirname, '../../bin/queue-ops.js');
const MAIN = resolve(import.meta.dirname, '../../dist/main.js');
const dir = mkdtempSync(join(tmpdir(), 'qo-hostile-secrets-'));
const archiveDir = join(dir, 'archive');
const configFile = join(dir, 'queue-ops.yml');
const prefix = `sec${Date.now().toString(36)}`;

let redis: PrivateRedis;
let fakeSlack: Server;
let slackBase: string;
let bot: ChildProcess | undefined;
let botBase: string;
let botOut = '';
let botErr = '';
/** Every request body that reached "Slack": Web API calls and response_url posts. */
const toSlack: { path: string; body: string }[] = [];
/** Every command line run: its arguments, stdout and stderr. */
const cliRuns: { args: string[]; stdout: string; stderr: string; code: number }[] = [];
const scraped: string[] = [];

const env = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  SLACK_BOT_TOKEN: BOT_TOKEN,
  SLACK_SIGNING_SECRET: SIGNING_SECRET,
  QUEUE_OPS_AUDIT_KEY: AUDIT_KEY,
  QUEUE_OPS_CONFIG: configFile,
  LOG_LEVEL: 'debug',
};

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string; json: CliJson }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, '--json', ...args],
      { env, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        cliRuns.push({ args, stdout, stderr, code });
        let json: CliJson;
        try {
          json = JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null') as CliJson;
        } catch {
          json = { ok: false, message: { text: stdout, blocks: [] }, data: null };
        }
        done({ code, stdout, stderr, json });
      },
    );
  });
}
interface CliJson {
  ok: boolean;
  message: { text: string; blocks: unknown[] };
  data: Record<string, unknown> | null;
}

/** A Web API form body without its `token` field (decoded, so an encoded secret is found too). */
function withoutToken(body: string): string {
  const form = new URLSearchParams(body);
  form.delete('token');
  return [...form].map(([k, v]) => `${k}=${v}`).join('&');
}

let seq = 0;
/** A signed `/queue …` to the bot; resolves with what it posted to the response_url. */
async function slash(text: string, user = 'U0ALICE'): Promise<Record<string, unknown>> {
  const hook = `/hooks/${++seq}`;
  const raw = new URLSearchParams({
    command: '/queue',
    text,
    user_id: user,
    user_name: user.toLowerCase(),
    channel_id: 'C0INCIDENT',
    channel_name: 'incident',
    team_id: 'T0TEAM',
    team_domain: 'oncall',
    api_app_id: 'A0QUEUEOPS',
    token: 'unused',
    trigger_id: '1.2.3',
    response_url: `${slackBase}${hook}`,
  }).toString();
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0:${timestamp}:${raw}`).digest('hex')}`;
  const res = await fetch(`${botBase}/slack/events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': signature,
    },
    body: raw,
  });
  expect(res.status, text).toBe(200);
  let answer: { body: string } | undefined;
  await waitFor(
    `an answer to /queue ${text}`,
    async () => {
      answer = toSlack.find((r) => r.path === hook);
      return answer !== undefined;
    },
    20_000,
  );
  return JSON.parse(answer?.body ?? '{}') as Record<string, unknown>;
}

beforeAll(async () => {
  redis = await startPrivateRedis();
  const admin = new Redis(redis.url);
  await admin.config('SET', 'requirepass', PASSWORD);
  admin.disconnect();
  const port = new URL(redis.url).port;
  const url = `redis://default:${PASSWORD}@127.0.0.1:${port}`;
  const connection = {
    host: '127.0.0.1',
    port: Number(port),
    password: PASSWORD,
    maxRetriesPerRequest: null,
  };

  // Jobs whose data holds secrets; some fail with a credential in their error.
  const hooks = new Queue('webhooks', { connection, prefix });
  await hooks.addBulk(
    [0, 1, 2, 3].map((i) => ({
      name: 'deliver',
      data: { password: JOB_SECRET, apiKey: JOB_API_KEY, n: i, fail: i < 2 },
    })),
  );
  const worker = new Worker(
    'webhooks',
    async (job) => {
      if (job.data.fail)
        throw new Error(
          `POST https://push.example/v1?api_key=${JOB_API_KEY} via redis://svc:${PASSWORD}@10.0.0.7:6379`,
        );
    },
    { connection, prefix },
  );
  await waitFor('two failures', async () => (await hooks.getFailedCount()) === 2);
  await worker.close();
  const waitingQueue = new Queue('dispatch-ios', { connection, prefix });
  await waitingQueue.addBulk(
    [0, 1, 2].map((n) => ({
      name: 'push',
      data: { token: JOB_SECRET, authorization: `Bearer ${JOB_API_KEY}`, n },
    })),
  );
  await waitingQueue.close();
  await hooks.close();
  // A Celery queue on the same password-protected Redis (DB 1), no worker.
  await publishCelery({ brokerUrl: `${url}/1` }, [
    { task: 'tasks.add', args: [JOB_SECRET, 1], queue: 'alarm_processing' },
  ]);

  fakeSlack = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += String(c);
    });
    req.on('end', () => {
      toSlack.push({ path: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ok: true,
          ts: `1700000400.${String(toSlack.length).padStart(6, '0')}`,
          channel: 'C0INCIDENT',
          user_id: 'U0BOT',
          bot_id: 'B0BOT',
          team_id: 'T0TEAM',
        }),
      );
    });
  });
  await new Promise<void>((done) => fakeSlack.listen(0, '127.0.0.1', done));
  slackBase = `http://127.0.0.1:${(fakeSlack.address() as AddressInfo).port}`;

  writeConfigFile(dir, {
    store: `sqlite:${join(dir, 'store.db')}`,
    archive: { dir: archiveDir },
    slack: { incidentChannel: 'C0INCIDENT', auditChannel: 'C0AUDIT', allowedChannels: ['C0INCIDENT'] },
    roles: { viewer: ['*'], operator: ['U0ALICE', 'U0BOB'], admin: ['U0ALICE', 'U0BOB'] },
    policies: {
      pause: { role: 'operator', approvals: 0 },
      resume: { role: 'operator', approvals: 0 },
      retry: { role: 'operator', approvals: 0, bulkApprovals: 0 },
      purge: { role: 'admin', approvals: 1 },
      undo: { role: 'admin', approvals: 0 },
      revoke: { role: 'operator', approvals: 0 },
      fail: { role: 'operator', approvals: 0 },
    },
    approvals: { cliSameOsUser: 'allow' },
    // The shell these command lines run in is U0ALICE's: her purge may then be approved in Slack.
    cli: { users: { [userInfo().username]: ['U0ALICE'] } },
    rateLimit: { perUserPerMinute: 1000 },
    metrics: { cacheSeconds: 0 },
    escalation: {
      groupBy: 'none',
      intervalSeconds: 1,
      rules: [
        { name: 'failures', queues: ['*'], metric: 'failed', above: 0, severity: 'critical' },
        { name: 'down', metric: 'unreachableSamples', above: 0, severity: 'critical' },
      ],
    },
    systems: [
      bullmqSystem('pushizo', `${url}/0`, prefix),
      {
        name: 'zeus',
        type: 'celery',
        redis: `redis://:${PASSWORD}@127.0.0.1:${port}/1`,
        queues: ['alarm_processing'],
        inspectTimeoutMs: 300,
      },
      bullmqSystem('wrongpass', `redis://default:${WRONG_PASSWORD}@127.0.0.1:${port}/0`),
      bullmqSystem('down', `redis://ops:${DOWN_PASSWORD}@127.0.0.1:1/0`),
    ],
  });

  const botPort = await freePort();
  botBase = `http://127.0.0.1:${botPort}`;
  bot = spawn(process.execPath, [MAIN], {
    env: { ...env, SLACK_API_URL: `${slackBase}/api/`, PORT: String(botPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  bot.stdout?.on('data', (c) => {
    botOut += String(c);
  });
  bot.stderr?.on('data', (c) => {
    botErr += String(c);
  });
  await waitFor('the bot listening', async () => {
    if (bot?.exitCode !== null) throw new Error(`bot exited: ${botErr}`);
    return (await fetch(`${botBase}/healthz`).catch(() => undefined))?.status === 200;
  });
}, 90_000);

afterAll(async () => {
  if (bot?.exitCode !== null) console.error(`bot exited ${bot?.exitCode}:\n${botErr.slice(-6000)}`);
  if (bot && bot.exitCode === null) {
    bot.kill('SIGTERM');
    await new Promise((done) => bot?.once('exit', done));
  }
  await new Promise((done) => fakeSlack?.close(done));
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('no password, token or key leaves the bot or the command line', () => {
  it('runs every verb through Slack and the command line, then finds none of them anywhere', async () => {
    // Reads, both ways.
    const reads = [
      ['status'],
      ['status', 'wrongpass'],
      ['status', 'down'],
      ['dlq', 'pushizo/webhooks'],
      ['dlq', 'zeus/alarm_processing'],
      ['dlq', 'down/x'],
      ['workers'],
      ['stuck', 'pushizo', '0'],
      ['stuck', 'down'],
      ['pending'],
      ['audit'],
      ['audit', 'verify'],
      ['alerts'],
      ['timeline'],
      ['trend', 'pushizo/webhooks'],
      ['help'],
    ];
    // The command line and Slack side by side: each command line run is a process start.
    for (const words of reads)
      await Promise.all([cli('--user', 'U0ALICE', ...words), slash(words.join(' '))]);

    // Changes: each verb through one transport or the other, and the ones that fail.
    expect((await cli('--user', 'U0ALICE', 'pause', 'pushizo/webhooks')).json.ok).toBe(true);
    await slash('resume pushizo/webhooks');
    await slash('pause down/x');
    await cli('--user', 'U0ALICE', 'retry', 'pushizo/webhooks', 'all');
    await slash('retry wrongpass/webhooks all');
    await cli('--user', 'U0ALICE', 'fail', 'pushizo/webhooks', '999', 'stuck');
    await slash('revoke zeus 00000000-0000-0000-0000-000000000000');
    await slash('scale pushizo/workers 3');

    // A purge asked on the command line, approved in Slack; its archive; undone on the command line.
    const asked = await cli('--user', 'U0ALICE', 'purge', 'pushizo/dispatch-ios', 'waiting');
    const request = (asked.json.data as { request?: { id: string } } | null)?.request;
    expect(request?.id, asked.stdout + asked.stderr).toBeTruthy();
    await slash(`approve ${request?.id}`, 'U0BOB');
    await waitFor('the purge done', async () => {
      const shown = await cli('--user', 'U0ALICE', 'pending');
      return !JSON.stringify(shown.json).includes(request?.id ?? '?');
    });
    await cli('--user', 'U0ALICE', 'undo', request?.id ?? '');
    const denied = await cli('--user', 'U0ALICE', 'purge', 'pushizo/webhooks', 'failed');
    const deny = (denied.json.data as { request?: { id: string } } | null)?.request?.id;
    await slash(`deny ${deny} "not now"`, 'U0BOB');

    // Alerts the monitor raised (failures, the unreachable system): ack and snooze them.
    await waitFor('alerts posted', async () => toSlack.some((r) => r.path === '/api/chat.postMessage'));
    const alerts = (await cli('--user', 'U0ALICE', 'alerts')).json.data as {
      alerts?: { id: string }[];
    } | null;
    const [first, second] = alerts?.alerts ?? [];
    if (first) await slash(`ack ${first.id}`);
    if (second) await cli('--user', 'U0BOB', 'snooze', second.id, '30m');

    scraped.push(await (await fetch(`${botBase}/metrics`)).text());
    scraped.push(await (await fetch(`${botBase}/readyz`)).text());

    // The purge archive: job data is allowed there, and only its owner can read it.
    const files: string[] = [];
    const walk = (path: string) => {
      const st = statSync(path);
      if (st.isDirectory()) {
        expect((st.mode & 0o777).toString(8), path).toBe('700');
        for (const name of readdirSync(path)) walk(join(path, name));
      } else {
        expect((st.mode & 0o777).toString(8), path).toBe('600');
        files.push(path);
      }
    };
    walk(archiveDir);
    expect(files.some((f) => f.endsWith('.jsonl.gz'))).toBe(true);
    const archived = files
      .map((f) => (f.endsWith('.gz') ? gunzipSync(readFileSync(f)) : readFileSync(f)).toString())
      .join('\n');
    // What was purged is really there (the archive is what undo restores from).
    expect(archived).toContain(JOB_SECRET);

    const everything = [
      botOut,
      botErr,
      // What the bot tells Slack; the Web API's own `token` field is how it logs in, meant for Slack.
      ...toSlack.map((r) => `${r.path} ${r.path.startsWith('/api/') ? withoutToken(r.body) : r.body}`),
      ...cliRuns.map((r) => `${r.args.join(' ')}\n${r.stdout}\n${r.stderr}`),
      ...scraped,
    ].join('\n');
    // Enough happened for the search to mean something.
    expect(toSlack.length).toBeGreaterThan(30);
    expect(cliRuns.length).toBeGreaterThan(20);
    expect(botErr.split('\n').length).toBeGreaterThan(20);
    // The secret-bearing job error was read and shown, its credentials starred out; the systems
    // with a wrong password and no server answered with their errors; metrics were scraped.
    expect(everything).toContain('redis://***@10.0.0.7');
    expect(everything).toContain('api_key=***');
    expect(everything).toContain('Redis for `wrongpass`');
    expect(everything).toContain('Redis for `down` is not answering (connection refused)');
    expect(everything).toContain('queue_ops_system_up{system="wrongpass"} 0');
    for (const secret of [...NEVER, ...JOB_DATA]) {
      for (const form of new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)])) {
        const at = everything.indexOf(form);
        expect(at, `${secret} found: …${everything.slice(Math.max(0, at - 300), at + 100)}…`).toBe(-1);
      }
    }
    for (const secret of NEVER) expect(archived).not.toContain(secret);
  }, 240_000);
});
