import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ActionId, indexedActionId } from '../../src/blocks/action-ids.js';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import {
  buttonClick,
  captureResponses,
  HOOKS,
  memoryLogger,
  randomId,
  slackSignature,
  slashCommand,
  startWiredBot,
} from '../transports/slack/harness.js';

/**
 * The bot as `npm start` runs it in HTTP mode (`startBot`: Bolt's HTTP receiver on a real port,
 * the replay memory in its SQLite store, the guards in the dispatcher's chain), sent requests the way
 * an attacker on the network could: unsigned, signed with another secret, too old, replayed,
 * edited after signing, and block_actions payloads with fields missing or added.
 */

// Slack's "Verifying requests from Slack" example, byte for byte (design/slack-platform.md §4).
const DOC_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const DOC_TIMESTAMP = 1531420618;
const DOC_BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const DOC_SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
const DOC_RESPONSE_PATH = '/commands/T1DC2JH3J/397700885554/96rGlfmibIGlgcZRskXaIFfN';

const url = testRedisUrl();
const dir = mkdtempSync(join(tmpdir(), 'qo-hostile-signing-'));
let fakeSlack: Server;
let bot: RunningBot;
let base: string;
let logLines: Record<string, unknown>[];

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  // Slack's Web API through SLACK_API_URL: ok to everything (users.info, usergroups…).
  fakeSlack = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, user_id: 'U0BOT', bot_id: 'B0BOT', team_id: 'T0TEAM' }));
  });
  await new Promise<void>((resolve) => fakeSlack.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(fakeSlack.address() as AddressInfo).port}/api/`;
  const configFile = writeConfigFile(dir, {
    store: `sqlite:${join(dir, 'store.db')}`,
    systems: [bullmqSystem('pushizo', url, randomId('sig'))],
  });
  const memory = memoryLogger();
  logLines = memory.lines;
  bot = await startWiredBot({
    dir,
    configFile,
    token: 'xoxb-hostile-signing',
    apiUrl,
    http: { signingSecret: DOC_SECRET },
    seams: { logger: memory.logger },
    stderr: () => {},
  });
  base = `http://127.0.0.1:${bot.port}`;
});

afterAll(async () => {
  vi.useRealTimers();
  await bot?.stop();
  await new Promise((resolve) => fakeSlack?.close(resolve));
  nock.cleanAll();
  nock.enableNetConnect();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  vi.useRealTimers();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

function post(raw: string, headers: Record<string, string>) {
  return fetch(`${base}/slack/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: raw,
  });
}

/** Signed with the bot's secret at `timestamp` (now by default). */
function signed(raw: string, timestamp = nowSeconds()) {
  return {
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': slackSignature(DOC_SECRET, timestamp, raw),
  };
}

const formOf = (body: Record<string, unknown>) =>
  new URLSearchParams(body as Record<string, string>).toString();
const payloadOf = (body: unknown) => `payload=${encodeURIComponent(JSON.stringify(body))}`;
const answered = () => logLines.filter((l) => l.msg === 'command answered').length;
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe("Slack's documented signing example, through the bot's own HTTP receiver", () => {
  it('accepts the exact documented body and signature at the documented time, and answers at its response_url', async () => {
    // Only the clock is moved to 2018; timers, sockets and Redis run for real.
    vi.useFakeTimers({ toFake: ['Date'], now: (DOC_TIMESTAMP + 2) * 1000 });
    const { bodies } = captureResponses(DOC_RESPONSE_PATH);
    const res = await post(DOC_BODY, {
      'x-slack-request-timestamp': String(DOC_TIMESTAMP),
      'x-slack-signature': DOC_SIGNATURE,
    });
    expect(res.status).toBe(200);
    // Empty text is `/queue` with no words: the help answer, to the person who typed it.
    await expect.poll(() => bodies.length, { timeout: 5_000 }).toBe(1);
    expect(bodies[0]?.response_type).toBe('ephemeral');
    expect(String(bodies[0]?.text)).toContain('/queue commands: status, dlq, workers');
  });

  it('refuses the same documented request five minutes and a second later, and with one byte changed', async () => {
    const before = answered();
    vi.useFakeTimers({ toFake: ['Date'], now: (DOC_TIMESTAMP + 5 * 60 + 1) * 1000 });
    const headers = {
      'x-slack-request-timestamp': String(DOC_TIMESTAMP),
      'x-slack-signature': DOC_SIGNATURE,
    };
    expect((await post(DOC_BODY, headers)).status).toBe(401);
    vi.setSystemTime((DOC_TIMESTAMP + 3) * 1000);
    expect((await post(DOC_BODY.replace('text=', 'text=purge'), headers)).status).toBe(401);
    expect(
      (await post(DOC_BODY, { ...headers, 'x-slack-request-timestamp': String(DOC_TIMESTAMP + 1) })).status,
    ).toBe(401);
    await settle();
    expect(answered()).toBe(before);
  });
});

describe('requests the bot must refuse before running anything', () => {
  it('refuses with 401, and runs nothing, every signature that is not the bot secret’s over these bytes at this time', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/forged`;
    const { bodies } = captureResponses(path);
    const raw = formOf(slashCommand('status', path));
    const ts = nowSeconds();
    const good = slackSignature(DOC_SECRET, ts, raw);
    const before = answered();
    const attempts: Record<string, string>[] = [
      {}, // unsigned
      { 'x-slack-request-timestamp': String(ts) }, // no signature
      { 'x-slack-signature': good }, // no timestamp
      { 'x-slack-request-timestamp': 'soon', 'x-slack-signature': good },
      {
        'x-slack-request-timestamp': String(ts),
        'x-slack-signature': slackSignature('another-secret', ts, raw),
      },
      { 'x-slack-request-timestamp': String(ts), 'x-slack-signature': good.replace(/^v0=/, 'v1=') },
      { 'x-slack-request-timestamp': String(ts), 'x-slack-signature': 'v0=' },
      { 'x-slack-request-timestamp': String(ts), 'x-slack-signature': good.toUpperCase() },
      { 'x-slack-request-timestamp': String(ts), 'x-slack-signature': good.slice(0, -1) },
      // A signature over the body for another time, sent with this time.
      {
        'x-slack-request-timestamp': String(ts),
        'x-slack-signature': slackSignature(DOC_SECRET, ts - 1, raw),
      },
    ];
    for (const headers of attempts)
      expect((await post(raw, headers)).status, JSON.stringify(headers)).toBe(401);
    // The bytes edited after signing: the text, then a second user_id appended.
    expect((await post(raw.replace('text=status', 'text=purge'), signed(raw, ts))).status).toBe(401);
    expect((await post(`${raw}&user_id=U0ADMIN`, signed(raw, ts))).status).toBe(401);
    await settle();
    expect(bodies).toHaveLength(0);
    expect(answered()).toBe(before);
  });

  it('refuses a correctly signed request stamped more than five minutes ago, and runs one stamped just inside', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/window`;
    const { bodies } = captureResponses(path);
    const raw = formOf(slashCommand('help', path));
    const stale = nowSeconds() - 5 * 60 - 2;
    expect((await post(raw, signed(raw, stale))).status).toBe(401);
    const oneHourAgo = nowSeconds() - 3600;
    expect((await post(raw, signed(raw, oneHourAgo))).status).toBe(401);
    await settle();
    expect(bodies).toHaveLength(0);

    expect((await post(raw, signed(raw, nowSeconds() - 4 * 60 - 50))).status).toBe(200);
    await expect.poll(() => bodies.length, { timeout: 5_000 }).toBe(1);
  });

  it('acknowledges a replayed click three more times but answers it once, on the store-backed replay memory', async () => {
    const path = `/actions/T0TEAM/${randomId('')}/replayed`;
    const { bodies } = captureResponses(path);
    const raw = payloadOf(buttonClick(ActionId.StatusRefresh, 'pushizo', path));
    const headers = signed(raw);
    const before = answered();
    expect((await post(raw, headers)).status).toBe(200);
    await expect.poll(() => bodies.length, { timeout: 5_000 }).toBe(1);
    for (let i = 0; i < 3; i++) expect((await post(raw, headers)).status).toBe(200);
    await settle();
    expect(bodies).toHaveLength(1);
    expect(answered()).toBe(before + 1);
    expect(
      logLines.filter((l) => String(l.msg).startsWith('replayed Slack request')).length,
    ).toBeGreaterThanOrEqual(3);
  });
});

describe('block_actions payloads with fields missing or added, correctly signed', () => {
  const unknownButton = 'That button is not one queue-ops knows';

  /**
   * Posts one signed payload; resolves with the HTTP status and what was sent to its response_url.
   * Slack takes nothing sent to the response_url before the HTTP ack is in: an ack that waited for
   * the answer would come only after Bolt's unhandled-request timeout, as its 404.
   */
  async function click(mutate: (body: Record<string, unknown>, path: string) => unknown) {
    const path = `/actions/T0TEAM/${randomId('')}/click`;
    const bodies: Record<string, unknown>[] = [];
    const held: (() => void)[] = [];
    let acked = false;
    nock(HOOKS)
      .persist()
      .post(path, (body) => {
        bodies.push(body as Record<string, unknown>);
        return true;
      })
      .reply((_uri, _body, answer) => {
        const take = () => answer(null, [200, 'ok']);
        if (acked) take();
        else held.push(take);
      });
    const body = buttonClick(indexedActionId(ActionId.OpenDlq, 1), 'pushizo/dispatch-ios', path);
    const raw = payloadOf(mutate(body, path));
    const res = await post(raw, signed(raw));
    acked = true;
    for (const take of held.splice(0)) take();
    return { status: res.status, bodies };
  }

  it('answers a click missing the fields it needs with one ephemeral line, and runs nothing', async () => {
    const cases: [string, (b: Record<string, unknown>) => unknown][] = [
      ['no actions', ({ actions: _a, ...b }) => b],
      ['empty actions', (b) => ({ ...b, actions: [] })],
      ['actions not a list', (b) => ({ ...b, actions: { action_id: ActionId.OpenDlq } })],
      ['no action_id', (b) => ({ ...b, actions: [{ type: 'button', value: 'pushizo/dispatch-ios' }] })],
      ['action_id a number', (b) => ({ ...b, actions: [{ type: 'button', action_id: 7, value: 'x' }] })],
      [
        'value an object',
        (b) => ({ ...b, actions: [{ type: 'button', action_id: ActionId.OpenDlq, value: {} }] }),
      ],
      ['user without id', (b) => ({ ...b, user: { name: 'mallory' } })],
      ['user a string', (b) => ({ ...b, user: 'U0ALICE' })],
      [
        'value holding a second word',
        (b) => ({ ...b, actions: [{ action_id: ActionId.Approve, value: 'r1 --force' }] }),
      ],
    ];
    const before = answered();
    for (const [name, mutate] of cases) {
      const { status, bodies } = await click(mutate);
      // Acknowledged before the answer went out (see click), not left to Bolt's unhandled-request
      // timeout (a 404).
      expect(status, name).toBe(200);
      await expect.poll(() => bodies.length, { timeout: 5_000, message: name }).toBe(1);
      const answer = bodies[0] as { text?: string; response_type?: string; replace_original?: boolean };
      expect(answer.response_type, name).toBe('ephemeral');
      expect(answer.replace_original, name).toBe(false);
      expect(answer.text, name).toContain(unknownButton);
      expect(JSON.stringify(answer), name).not.toMatch(/\bat .+\.(js|ts):\d+|TypeError|Cannot read/);
    }
    expect(answered()).toBe(before);
  });

  it('refuses a click with no user at all (Bolt cannot tell whose it is) with an empty 500, running nothing', async () => {
    const before = answered();
    const path = `/actions/T0TEAM/${randomId('')}/nouser`;
    const { bodies } = captureResponses(path);
    const { user: _u, ...body } = buttonClick(ActionId.StatusRefresh, 'pushizo', path);
    const raw = payloadOf(body);
    const res = await post(raw, signed(raw));
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('');
    await settle();
    expect(bodies).toHaveLength(0);
    expect(answered()).toBe(before);
  });

  it('still runs a click whose payload has extra or missing optional fields, reading only the action id and value', async () => {
    const cases: [string, (b: Record<string, unknown>) => unknown][] = [
      [
        'extra fields everywhere',
        (b) => ({
          ...b,
          evil: '<!channel>',
          __proto__: { isAdmin: true },
          user: { ...(b.user as object), is_admin: true, roles: ['admin'] },
          actions: [{ ...(b.actions as object[])[0], extra: 'x', confirm: { ok: true } }],
        }),
      ],
      [
        'a second action after ours',
        (b) => ({
          ...b,
          actions: [...(b.actions as object[]), { action_id: ActionId.Approve, value: 'r1' }],
        }),
      ],
      ['no message, no channel, no container', ({ message: _m, channel: _c, container: _k, ...b }) => b],
      ['no team, no trigger_id, no state', ({ team: _t, trigger_id: _r, state: _s, ...b }) => b],
    ];
    for (const [name, mutate] of cases) {
      const { status, bodies } = await click(mutate);
      expect(status, name).toBe(200);
      await expect.poll(() => bodies.length, { timeout: 5_000, message: name }).toBe(1);
      // The DLQ of pushizo/dispatch-ios (empty), in place of the message that held the button.
      expect(JSON.stringify(bodies[0]), name).toContain('dispatch-ios');
      expect(bodies[0]?.text, name).not.toContain(unknownButton);
    }
  });

  it('acknowledges a click without a response_url and logs that the answer had nowhere to go', async () => {
    const before = logLines.filter((l) => l.msg === 'no response_url on this payload; answer dropped').length;
    const { status } = await click(({ response_url: _r, ...b }) => b);
    expect(status).toBe(200);
    await expect
      .poll(() => logLines.filter((l) => l.msg === 'no response_url on this payload; answer dropped').length)
      .toBe(before + 1);
  });

  it('answers 400 to a signed payload that is not JSON or is JSON null, runs nothing, and keeps serving', async () => {
    const before = answered();
    for (const raw of ['payload=%7Bnot-json', 'payload=', 'payload=null']) {
      expect((await post(raw, signed(raw))).status, raw).toBeGreaterThanOrEqual(400);
    }
    // A JSON body of null once threw inside Bolt's receiver, outside any handler: an unhandled
    // rejection, which ends a Node process. The bot still answers afterwards.
    const res = await fetch(`${base}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signed('null') },
      body: 'null',
    });
    expect(res.status).toBe(400);
    await settle();
    expect(answered()).toBe(before);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
