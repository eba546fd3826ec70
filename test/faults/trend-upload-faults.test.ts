import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { fakeSlack } from '../escalation/fake-slack.js';
import { appendDispatchIosSample } from '../escalation/sample-fixture.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import {
  captureResponses,
  memoryLogger,
  randomId,
  slashCommand,
  startWiredBot,
} from '../transports/slack/harness.js';

/**
 * Slack failing a file upload after the answer went out: `/queue trend` answers, then uploads its chart with
 * files.uploadV2 through Bolt's client, whose upload URL answers 500, 429 with Retry-After, or
 * hangs past the client's timeout. The real bot wiring over a real SQLite store holding the
 * monitor's samples; Slack's HTTP side nock'd; the client's timeout and retries shortened.
 */
const redisUrl = testRedisUrl();
const API_HOST = 'https://slack-api.trend-faults.test';
const TOKEN = 'xoxb-trend-faults-secret-token';
const MINUTE = 60_000;

const FAULTS = [
  { name: 'a 500', status: 500, reason: 'slack_webapi_http_error' },
  { name: 'a 429 with Retry-After: 1', status: 429, retryAfter: 1, reason: 'rate limited (429)' },
  {
    name: 'a hang past the client timeout',
    status: 200,
    hangMs: 1500,
    reason: 'no answer within the timeout',
  },
];

describe('a command’s chart upload while Slack fails', () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-trend-faults-'));
  const log = memoryLogger();
  let slack: ReturnType<typeof fakeSlack>;
  let bot: RunningBot;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    slack = fakeSlack(API_HOST);
    // The user's own locale, looked up once (users.info) before the first answer.
    nock(API_HOST)
      .persist()
      .post('/api/users.info')
      .reply(200, { ok: true, user: { id: 'U0ALICE', locale: 'en-US' } });
    const storeUrl = `sqlite:${join(dir, 'bot.db')}`;
    const store = await openStore(storeUrl);
    await store.migrate();
    const now = Date.now();
    for (let i = 0; i < 30; i++) {
      const at = now - (31 - i) * MINUTE;
      await appendDispatchIosSample(store, at, { waiting: i * 4, delayed: 0, failed: 1 });
    }
    await store.close();
    const configFile = writeConfigFile(dir, {
      systems: [bullmqSystem('pushizo', redisUrl, randomId('tuf'), { queues: ['dispatch-ios'] })],
      slack: { allowedChannels: ['C0OTHER'] },
      store: storeUrl,
      roles: { viewer: ['*'] },
      escalation: {
        groupBy: 'none',
        rules: [{ name: 'backlog', queues: ['pushizo/dispatch-*'], metric: 'waiting', above: 100 }],
      },
    });
    bot = await startWiredBot({
      dir,
      configFile,
      token: TOKEN,
      apiUrl: `${API_HOST}/api/`,
      seams: {
        clientOptions: { timeout: 300, retryConfig: { retries: 3, minTimeout: 50, maxTimeout: 50 } },
        respondPolicy: { timeoutMs: 300, backoffMs: 50 },
        logger: log.logger,
      },
    });
  });

  afterAll(async () => {
    await bot?.stop();
    nock.cleanAll();
    nock.enableNetConnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(FAULTS)('$name: the answer arrives once, then the chart, uploaded once', async (fault) => {
    const path = `/commands/T0TEAM/${randomId('')}/trend`;
    const { bodies } = captureResponses(path);
    slack.failUploadUrlNext(fault.status, {
      ...(fault.retryAfter ? { retryAfter: fault.retryAfter } : {}),
      ...(fault.hangMs ? { hangMs: fault.hangMs } : {}),
    });
    const uploadsBefore = slack.uploads.length;
    const postsBefore = slack.uploadPosts.length;
    const logBefore = log.lines.length;
    await bot.slack.app.processEvent({
      body: slashCommand('trend pushizo/dispatch-ios', path, { channel_id: 'C0OTHER' }),
      ack: async () => {},
    });

    expect(bodies).toHaveLength(1);
    expect(JSON.stringify(bodies[0])).toContain('pushizo/dispatch-ios');
    // One file asked for; its bytes POSTed twice (the fault, then the retry); shared once.
    const uploads = slack.uploads.slice(uploadsBefore);
    expect(uploads).toHaveLength(1);
    expect(slack.uploadPosts.slice(postsBefore).map((p) => p.status)).toEqual([
      fault.hangMs ? 0 : fault.status,
      200,
    ]);
    expect(uploads[0]!.png).toBeDefined();
    expect(uploads[0]!.completed).toMatchObject({ channel_id: 'C0OTHER' });
    expect(slack.calls.filter((c) => c.method === 'files.completeUploadExternal')).toHaveLength(
      FAULTS.indexOf(fault) + 1,
    );
    const lines = log.lines.slice(logBefore);
    expect(lines.filter((l) => l.msg === 'file upload failed')).toEqual([]);
    expect(lines.filter((l) => l.msg === 'Slack did not take a Web API call; trying again')).toEqual([
      expect.objectContaining({ attempt: 1, reason: fault.reason }),
    ]);
    const all = JSON.stringify(log.lines);
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(path);
    // Nor the upload URL (a credential while it lives), which the Slack library quotes on a 429.
    expect(all).not.toMatch(/\/upload\/F\d+/);
  });
});
