import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nock, { type ReplyFnResult } from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionId } from '../../src/blocks/action-ids.js';
import { RequestStatus } from '../../src/store/store.js';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix } from '../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import {
  botConfigInput,
  buttonClick,
  HOOKS,
  memoryLogger,
  randomId,
  slashCommand,
  startWiredBot,
} from '../transports/slack/harness.js';

/**
 * Slack failing the answer an operator is waiting for: Slack answering 500, 429 with Retry-After, or hanging past the
 * client's timeout, on a slash command's answer (`respond()` through its response_url) and on the
 * `chat.update` that brings an approval request's message to its outcome. The real bot wiring
 * (`startBot`), real BullMQ queues on the test Redis, a real SQLite store; only Slack's HTTP side
 * is nock'd. Timeouts and back-offs are shortened through the bot's options, not slept through.
 */
const API_HOST = 'https://slack-api.answer-faults.test';
const TOKEN = 'xoxb-answer-faults-secret-token';
const TIMEOUT_MS = 300;
const HANG_MS = 1500;

interface Fault {
  name: string;
  status: number;
  retryAfter?: number;
  hangMs?: number;
}
const FAULTS: Fault[] = [
  { name: 'a 500', status: 500 },
  { name: 'a 429 with Retry-After: 1', status: 429, retryAfter: 1 },
  { name: 'a hang past the client timeout', status: 200, hangMs: HANG_MS },
];

/** Answers as `fault` says: at once, or after hanging (by then the client has given up). */
function answerWith(fault: Fault, answer: (error: null, reply: ReplyFnResult) => void): void {
  const reply: ReplyFnResult =
    fault.status === 429
      ? [429, 'rate_limited', { 'Retry-After': String(fault.retryAfter ?? 1) }]
      : [fault.status, fault.status === 200 ? 'ok' : 'upstream trouble'];
  if (fault.hangMs) setTimeout(() => answer(null, reply), fault.hangMs).unref();
  else answer(null, reply);
}

interface Received {
  /** The HTTP status answered; 0: it hung past the client. */
  status: number;
  body: Record<string, unknown>;
}

/** Every POST to a response_url, by path; `faultNext(path, fault)` scripts the next one. */
const hooks = new Map<string, Received[]>();
const hookFaults = new Map<string, Fault[]>();
/** Web API calls by method; `apiFaults[method]` scripts the next ones. */
const api: { method: string; status: number; body: Record<string, string>; ts?: string }[] = [];
const apiFaults = new Map<string, Fault[]>();
let tsCounter = 0;

function fakeSlack() {
  nock(HOOKS)
    .persist()
    .post(/.*/)
    .reply((path, raw, answer) => {
      const body = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Record<string, unknown>;
      const list = hooks.get(path) ?? [];
      hooks.set(path, list);
      const fault = hookFaults.get(path)?.shift();
      list.push({ status: fault ? (fault.hangMs ? 0 : fault.status) : 200, body });
      answerWith(fault ?? { name: 'ok', status: 200 }, answer);
    });
  nock(API_HOST)
    .persist()
    .post(/^\/api\//)
    .reply((uri, raw, answer) => {
      const method = uri.replace(/^\/api\//, '');
      const body = Object.fromEntries(new URLSearchParams(typeof raw === 'string' ? raw : ''));
      const fault = apiFaults.get(method)?.shift();
      const call: (typeof api)[number] = {
        method,
        status: fault ? (fault.hangMs ? 0 : fault.status) : 200,
        body,
      };
      api.push(call);
      if (fault) return answerWith(fault, answer);
      if (method === 'chat.postMessage') {
        tsCounter += 1;
        call.ts = `1700000200.${String(tsCounter).padStart(6, '0')}`;
        return answer(null, [200, { ok: true, channel: body.channel, ts: call.ts }]);
      }
      if (method === 'chat.update')
        return answer(null, [200, { ok: true, channel: body.channel, ts: body.ts }]);
      return answer(null, [200, { ok: false, error: 'unknown_method' }]);
    });
}

describe('answers to commands and clicks while Slack fails', () => {
  const redisUrl = testRedisUrl();
  const prefix = randomId('saf');
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-answer-faults-'));
  const log = memoryLogger();
  // One queue per fault, and one for the outage longer than the client's retries.
  const names = [...FAULTS.map((_, i) => `q-fault-${i}`), 'q-outage'];
  const queues: Queue[] = [];
  let bot: RunningBot;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    fakeSlack();
    for (const name of names) {
      const queue = new Queue(name, { connection: connectionFor(redisUrl), prefix });
      await queue.add('push', { n: 1 });
      queues.push(queue);
    }
    bot = await startWiredBot({
      dir,
      config: botConfigInput({ redis: redisUrl, prefix, dir }),
      token: TOKEN,
      apiUrl: `${API_HOST}/api/`,
      seams: {
        // The Web API clients: a short timeout and quick retries instead of the bot's minutes.
        clientOptions: { timeout: TIMEOUT_MS, retryConfig: { retries: 3, minTimeout: 50, maxTimeout: 50 } },
        respondPolicy: { timeoutMs: TIMEOUT_MS, backoffMs: 50 },
        logger: log.logger,
        metricsOptions: { processMetrics: false },
      },
    });
  });

  afterAll(async () => {
    await bot?.stop();
    for (const queue of queues) await queue.close();
    await deletePrefix(redisUrl, prefix);
    nock.cleanAll();
    nock.enableNetConnect();
    rmSync(dir, { recursive: true, force: true });
  });

  const deliver = (body: Record<string, unknown>) =>
    bot.slack.app.processEvent({ body, ack: async () => {} });
  const text = (value: unknown) => JSON.stringify(value);

  function expectNothingSecretLogged(paths: string[]) {
    const all = JSON.stringify(log.lines);
    expect(all).not.toContain(TOKEN);
    // A response_url answers anyone who holds it for 30 minutes: it is never logged.
    for (const path of paths) expect(all).not.toContain(path);
  }

  describe.each(FAULTS.map((fault, i) => ({ ...fault, queue: names[i]! })))('$name', (fault) => {
    it('a slash command’s answer through its response_url is sent again and arrives once', async () => {
      const path = `/commands/T0TEAM/${randomId('')}/${randomId('secret')}`;
      hookFaults.set(path, [fault]);
      const before = log.lines.length;
      await deliver(slashCommand(`status pushizo/${fault.queue}`, path));
      const posts = hooks.get(path)!;
      expect(posts.map((p) => p.status)).toEqual([fault.hangMs ? 0 : fault.status, 200]);
      // The same answer both times; the one Slack took shows the queue.
      expect(posts[1]!.body).toEqual(posts[0]!.body);
      expect(text(posts[1]!.body)).toContain(fault.queue);
      const retried = log.lines
        .slice(before)
        .filter((l) => l.msg === 'Slack did not take an answer to a command or click; trying again');
      expect(retried).toEqual([
        expect.objectContaining({
          attempt: 1,
          reason: fault.hangMs ? `no answer within ${TIMEOUT_MS} ms` : `HTTP ${fault.status}`,
          retryInMs: fault.retryAfter ? fault.retryAfter * 1000 : 50,
        }),
      ]);
      expect(
        log.lines.slice(before).filter((l) => l.msg === 'respond() failed; answer not delivered'),
      ).toEqual([]);
      expectNothingSecretLogged([path]);
    });

    it('an approval request’s message reaches its outcome through a chat.update Slack failed once', async () => {
      // Alice asks; the request is posted with chat.postMessage (it has a ts to update).
      const askPath = `/commands/T0TEAM/${randomId('')}/ask`;
      const firstCall = api.length;
      await deliver(slashCommand(`pause pushizo/${fault.queue}`, askPath));
      const post = api.slice(firstCall).find((c) => c.method === 'chat.postMessage')!;
      expect(post).toBeDefined();
      const ts = post.ts!;
      const id = (JSON.parse(post.body.blocks!) as { type: string; elements?: { value: string }[] }[]).find(
        (b) => b.type === 'actions',
      )!.elements![0]!.value;

      // Bob approves; the first chat.update of the request's message meets the fault.
      apiFaults.set('chat.update', [fault]);
      const before = log.lines.length;
      const clickPath = `/actions/T0TEAM/${randomId('')}/click`;
      await deliver(
        buttonClick(ActionId.Approve, id, clickPath, {
          user: { id: 'U0BOB', username: 'bob', name: 'bob', team_id: 'T0TEAM' },
          container: { type: 'message', message_ts: ts, channel_id: 'C0INCIDENT', is_ephemeral: false },
          message: { ts, type: 'message', text: 'request', blocks: [] },
        }),
      );
      await bot.idle();

      expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Done);
      expect(await queues[names.indexOf(fault.queue)]!.isPaused()).toBe(true);
      const updates = api.slice(firstCall).filter((c) => c.method === 'chat.update' && c.body.ts === ts);
      expect(updates[0]!.status).toBe(fault.hangMs ? 0 : fault.status);
      const last = updates.at(-1)!;
      expect(last.status).toBe(200);
      expect(last.body.blocks).toContain('Approved by bob (U0BOB)');
      expect(last.body.blocks).toContain(`pushizo/${fault.queue} is paused.`);
      // One request message, posted once; the click's own answer replaced its message once.
      expect(
        api.slice(firstCall).filter((c) => c.method === 'chat.postMessage' && !c.body.thread_ts),
      ).toHaveLength(1);
      expect(hooks.get(clickPath)!.map((p) => p.status)).toEqual([200]);
      expect(log.lines.filter((l) => l.msg === 'could not update the request message')).toEqual([]);
      // The log says a try failed, and why.
      const retried = log.lines
        .slice(before)
        .filter((l) => l.msg === 'Slack did not take a Web API call; trying again');
      expect(retried).toEqual([
        expect.objectContaining({
          attempt: 1,
          reason:
            fault.status === 429
              ? 'rate limited (429)'
              : fault.hangMs
                ? 'no answer within the timeout'
                : 'slack_webapi_http_error',
        }),
      ]);
      expectNothingSecretLogged([askPath, clickPath]);
    });
  });

  it('an approval request’s message whose every update try failed reaches its outcome on the next sweep', async () => {
    const askPath = `/commands/T0TEAM/${randomId('')}/ask`;
    const firstCall = api.length;
    await deliver(slashCommand('pause pushizo/q-outage', askPath));
    const post = api.slice(firstCall).find((c) => c.method === 'chat.postMessage')!;
    const ts = post.ts!;
    const id = (JSON.parse(post.body.blocks!) as { type: string; elements?: { value: string }[] }[]).find(
      (b) => b.type === 'actions',
    )!.elements![0]!.value;

    // Slack answers 500 to every try of every update (the client's 3 retries each): an outage
    // longer than the client waits, over the request's moves from approved to done.
    const outage = { name: 'a 500', status: 500 };
    apiFaults.set(
      'chat.update',
      Array.from({ length: 40 }, () => outage),
    );
    const before = log.lines.length;
    await deliver(
      buttonClick(ActionId.Approve, id, `/actions/T0TEAM/${randomId('')}/click`, {
        user: { id: 'U0BOB', username: 'bob', name: 'bob', team_id: 'T0TEAM' },
        container: { type: 'message', message_ts: ts, channel_id: 'C0INCIDENT', is_ephemeral: false },
        message: { ts, type: 'message', text: 'request', blocks: [] },
      }),
    );
    await bot.idle();
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Done);
    const updates = () => api.slice(firstCall).filter((c) => c.method === 'chat.update' && c.body.ts === ts);
    const failed = updates().length;
    expect(failed).toBeGreaterThanOrEqual(4);
    expect(new Set(updates().map((u) => u.status))).toEqual(new Set([500]));
    const givenUp = log.lines.slice(before).filter((l) => l.msg === 'could not update the request message');
    expect(givenUp.length).toBeGreaterThan(0);
    expect(givenUp.every((l) => l.requestId === id && l.sentAgain === true)).toBe(true);

    // Slack is back; the bot's sweep (every 30 s) sends the outcome again, once.
    apiFaults.set('chat.update', []);
    await bot.sweep();
    await bot.idle();
    expect(
      updates()
        .slice(failed)
        .map((u) => u.status),
    ).toEqual([200]);
    expect(updates().at(-1)!.body.blocks).toContain('Approved by bob (U0BOB)');
    expect(updates().at(-1)!.body.blocks).toContain('pushizo/q-outage is paused.');
    await bot.sweep();
    await bot.idle();
    expect(updates()).toHaveLength(failed + 1);
  });
});
