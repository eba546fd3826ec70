import { verifySlackRequest } from '@slack/bolt';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../../src/app.js';
import { parseConfig } from '../../../src/config/load.js';
import {
  boltLogger,
  createSlackApp,
  type SlackApp,
  SlackEnvError,
  slackSettingsFromEnv,
} from '../../../src/transports/slack/create-app.js';
import {
  postMessage,
  registerSlackListeners,
  updateMessage,
} from '../../../src/transports/slack/listeners.js';
import { bullmqSystem, configYaml } from '../../helpers/config-file.js';
import { testRedisUrl } from '../../helpers/test-redis.js';
import { captureResponses, memoryLogger, randomId, slackSignature, slashCommand } from './harness.js';

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
});
afterAll(() => {
  nock.enableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

describe('Slack request signing helper', () => {
  it("reproduces Slack's published test vector, which Bolt's own verifier accepts", () => {
    const secret = '8f742231b10e8888abcd99yyyzzz85a5';
    const timestamp = 1531420618;
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const signature = slackSignature(secret, timestamp, body);
    expect(signature).toBe('v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503');
    expect(() =>
      verifySlackRequest({
        signingSecret: secret,
        body,
        headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
        nowMilliseconds: timestamp * 1000,
      }),
    ).not.toThrow();
  });
});

describe('the environment decides how to reach Slack', () => {
  it('uses Socket Mode when SLACK_APP_TOKEN is set, and HTTP on PORT (default 3000) otherwise', () => {
    expect(slackSettingsFromEnv({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' })).toMatchObject({
      mode: 'socket',
      port: 3000,
    });
    expect(
      slackSettingsFromEnv({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 'sss', PORT: '8080' }),
    ).toMatchObject({ mode: 'http', port: 8080, signingSecret: 'sss' });
  });

  it('names every missing variable in one line', () => {
    const error = (() => {
      try {
        slackSettingsFromEnv({});
      } catch (e) {
        return e;
      }
    })() as SlackEnvError;
    expect(error).toBeInstanceOf(SlackEnvError);
    expect(error.message).not.toContain('\n');
    expect(error.message).toContain('SLACK_BOT_TOKEN');
    expect(error.message).toContain('SLACK_APP_TOKEN or SLACK_SIGNING_SECRET');
    expect(() => slackSettingsFromEnv({ SLACK_APP_TOKEN: 'xapp-1' })).toThrow(/SLACK_BOT_TOKEN is not set/);
  });

  it('refuses a SLACK_API_URL that is not http(s) and adds the trailing slash WebClient needs', () => {
    const env = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' };
    expect(() => slackSettingsFromEnv({ ...env, SLACK_API_URL: 'ftp://x' })).toThrow(SlackEnvError);
    expect(slackSettingsFromEnv({ ...env, SLACK_API_URL: 'https://slack-gov.com/api' }).apiUrl).toBe(
      'https://slack-gov.com/api/',
    );
  });
});

describe('SLACK_API_URL', () => {
  it('sends chat.postMessage and chat.update to the given base URL, blocks validated', async () => {
    const { logger } = memoryLogger();
    const slack = createSlackApp({
      env: {
        SLACK_BOT_TOKEN: 'xoxb-gov',
        SLACK_SIGNING_SECRET: 'sss',
        SLACK_API_URL: 'https://api.gov.example.test/proxy/api',
      },
      logger,
      receiverOverride: { init() {}, start: async () => undefined, stop: async () => undefined },
      authorization: { botId: 'B0BOT', botUserId: 'U0BOT' },
      clientOptions: { retryConfig: { retries: 0 } },
    });
    const posted: URLSearchParams[] = [];
    const scope = nock('https://api.gov.example.test')
      .post('/proxy/api/chat.postMessage', (body) => {
        posted.push(new URLSearchParams(body as string));
        return true;
      })
      .reply(200, { ok: true, channel: 'C0INCIDENT', ts: '1700000000.000200' })
      .post('/proxy/api/chat.update', (body) => {
        posted.push(new URLSearchParams(body as string));
        return true;
      })
      .reply(200, { ok: true, channel: 'C0INCIDENT', ts: '1700000000.000200' });

    const message = {
      text: 'alert',
      blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'alert' } }],
    };
    const sent = await postMessage(slack.app.client, 'C0INCIDENT', message, { logger });
    const updated = await updateMessage(slack.app.client, 'C0INCIDENT', sent.ts as string, message, {
      logger,
    });

    expect(scope.isDone()).toBe(true);
    expect(sent).toEqual({ ok: true, channel: 'C0INCIDENT', ts: '1700000000.000200' });
    expect(updated.ok).toBe(true);
    expect(posted[0]?.get('channel')).toBe('C0INCIDENT');
    expect(JSON.parse(posted[0]?.get('blocks') ?? '[]')).toEqual(message.blocks);
    expect(posted[1]?.get('ts')).toBe('1700000000.000200');
  });

  it('posts a one-line error with a logged ref instead of a message that breaks Slack limits', async () => {
    const { logger, lines } = memoryLogger();
    const slack = createSlackApp({
      env: { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 'sss' },
      logger,
      receiverOverride: { init() {}, start: async () => undefined, stop: async () => undefined },
      authorization: { botId: 'B0BOT', botUserId: 'U0BOT' },
      clientOptions: { retryConfig: { retries: 0 } },
    });
    let blocks: unknown[] = [];
    nock('https://slack.com')
      .post('/api/chat.postMessage', (body) => {
        blocks = JSON.parse(new URLSearchParams(body as string).get('blocks') ?? '[]') as unknown[];
        return true;
      })
      .reply(200, { ok: true, channel: 'C1', ts: '1.2' });
    const tooLong = {
      text: 'x',
      blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'x'.repeat(3001) } }],
    };
    const sent = await postMessage(slack.app.client, 'C1', tooLong, { logger });

    expect(sent.ok).toBe(false);
    expect(blocks).toHaveLength(1);
    expect(JSON.stringify(blocks)).toContain(`ref ${sent.ref}`);
    expect(lines.find((l) => l.ref === sent.ref)?.msg).toBe('outgoing Slack message failed validation');
  });
});

describe('HTTP mode', () => {
  const url = testRedisUrl();
  const secret = 'test-signing-secret-0123456789';
  let slack: SlackApp;
  let base: string;
  let close: () => Promise<void>;
  let logLines: Record<string, unknown>[];

  beforeAll(async () => {
    const { logger, lines } = memoryLogger();
    logLines = lines;
    const config = parseConfig(configYaml({ systems: [bullmqSystem('pushizo', url, randomId('http'))] }), {});
    const services = createApp({ config, env: {}, logger });
    // No ids given: Bolt checks the token with auth.test at construction, as in production.
    nock('https://slack.com').post('/api/auth.test').reply(200, {
      ok: true,
      user_id: 'U0BOT',
      bot_id: 'B0BOT',
      team_id: 'T0TEAM',
    });
    slack = createSlackApp({
      env: { SLACK_BOT_TOKEN: 'xoxb-http-token', SLACK_SIGNING_SECRET: secret, PORT: '0' },
      logger,
    });
    registerSlackListeners(slack.app, { dispatcher: services.dispatcher, logger });
    const { port } = await slack.start();
    base = `http://127.0.0.1:${port}`;
    close = async () => {
      await slack.stop();
      await services.close();
    };
  });

  afterAll(async () => {
    await close?.();
  });

  const post = (rawBody: string, headers: Record<string, string>) =>
    fetch(`${base}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: rawBody,
    });

  it('accepts a correctly signed slash command, acks it and answers through response_url', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/signed`;
    const { bodies } = captureResponses(path);
    const raw = new URLSearchParams(slashCommand('help', path) as Record<string, string>).toString();
    const timestamp = Math.floor(Date.now() / 1000);
    const res = await post(raw, {
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': slackSignature(secret, timestamp, raw),
    });

    expect(res.status).toBe(200);
    await expect.poll(() => bodies.length, { timeout: 5_000 }).toBe(1);
    expect(bodies[0]?.response_type).toBe('ephemeral');
    expect(JSON.stringify(bodies[0])).toContain('status');
  });

  it('rejects a request whose signature was made with another secret, and runs nothing', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/forged`;
    const { bodies, scope } = captureResponses(path);
    const raw = new URLSearchParams(slashCommand('status', path) as Record<string, string>).toString();
    const timestamp = Math.floor(Date.now() / 1000);
    const before = logLines.filter((l) => l.msg === 'command answered').length;
    const res = await post(raw, {
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': slackSignature('not-the-secret', timestamp, raw),
    });

    expect(res.status).toBe(401);
    expect(scope.isDone()).toBe(false);
    expect(bodies).toHaveLength(0);
    expect(logLines.filter((l) => l.msg === 'command answered').length).toBe(before);
  });

  it('rejects a correctly signed request that is more than five minutes old (a replay)', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/replayed`;
    const { bodies } = captureResponses(path);
    const raw = new URLSearchParams(slashCommand('status', path) as Record<string, string>).toString();
    const timestamp = Math.floor(Date.now() / 1000) - 10 * 60;
    const res = await post(raw, {
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': slackSignature(secret, timestamp, raw),
    });

    expect(res.status).toBe(401);
    expect(bodies).toHaveLength(0);
  });

  it('answers GET /healthz without Slack or Redis', async () => {
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok\n');
  });
});

describe('Socket Mode', () => {
  it('opens its connection through SLACK_API_URL and reports a refused app token at start', async () => {
    const { logger } = memoryLogger();
    const slack = createSlackApp({
      env: {
        SLACK_BOT_TOKEN: 'xoxb-1',
        SLACK_APP_TOKEN: 'xapp-1-refused',
        SLACK_API_URL: 'https://api.gov.example.test/api/',
        PORT: '0',
      },
      logger,
      authorization: { botId: 'B0BOT', botUserId: 'U0BOT' },
      clientOptions: { retryConfig: { retries: 0 } },
    });
    const scope = nock('https://api.gov.example.test')
      .post('/api/apps.connections.open')
      .reply(200, { ok: false, error: 'invalid_auth' });

    expect(slack.settings.mode).toBe('socket');
    await expect(slack.start()).rejects.toThrow(/invalid_auth/);
    expect(scope.isDone()).toBe(true);
    await slack.stop().catch(() => undefined);
  });
});

describe("the Slack libraries' log lines", () => {
  it('keep only the origin of a URL quoted in them (an upload URL is a credential while it lives)', () => {
    const { logger, lines } = memoryLogger();
    const bolt = boltLogger(logger);
    bolt.warn(
      'A rate limit was exceeded (url: https://files.slack.com/upload/v1/CwABAAAAXAoAAZnpZ2xtb2RlbA, retry-after: 1)',
    );
    bolt.error(new Error('upload to https://files.slack.com/upload/v1/CwABAAAAXAoAAZnpZ2xtb2RlbA failed'));
    bolt.info('http request url: https://slack.com/api/chat.postMessage');
    const all = JSON.stringify(lines);
    expect(all).not.toContain('CwABAAAAXAoAAZnpZ2xtb2RlbA');
    expect(lines.map((l) => l.msg)).toEqual([
      'A rate limit was exceeded (url: https://files.slack.com/…, retry-after: 1)',
      'upload to https://files.slack.com/… failed',
      'http request url: https://slack.com/api/chat.postMessage',
    ]);
  });
});
