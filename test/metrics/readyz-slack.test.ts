import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { type LoopbackSlack, startLoopbackSlack } from '../helpers/loopback-slack.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { memoryLogger, startWiredBot } from '../transports/slack/harness.js';

/**
 * `/readyz` in HTTP mode says what Slack last answered: `auth.test` at start, then the latest Web
 * API call of any of the bot's clients. It used to answer 200 "connected" for as long as the HTTP
 * receiver listened, while every Slack call failed. The real bot (`startBot`) on a real port,
 * against the loopback Slack; no waiting on the clock: each step awaits the call or the recheck.
 */
const url = testRedisUrl();
const prefix = randomName('rdy');
const dir = mkdtempSync(join(tmpdir(), 'qo-readyz-slack-'));
const log = memoryLogger();
let slack: LoopbackSlack;
let bot: RunningBot;

async function readyz(): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${bot.port}/readyz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  slack = await startLoopbackSlack();
  const config = writeConfigFile(dir, {
    store: `sqlite:${join(dir, 'store.db')}`,
    systems: [bullmqSystem('pushizo', url, prefix, { queues: ['dispatch-ios'] })],
  });
  bot = await startWiredBot({
    dir,
    configFile: config,
    token: 'xoxb-readyz-secret',
    apiUrl: slack.url,
    http: { signingSecret: 'readyz-secret' },
    seams: {
      logger: log.logger,
      // One retry, at once: the retry log is what is looked at, not the back-off.
      clientOptions: { retryConfig: { retries: 1, factor: 1, minTimeout: 0, maxTimeout: 0 } },
    },
    stderr: () => {},
  });
});

afterAll(async () => {
  await bot?.stop();
  await slack?.close();
  await deletePrefix(url, prefix);
  rmSync(dir, { recursive: true, force: true });
});

describe('/readyz follows what Slack last answered (HTTP mode)', () => {
  it('is ready after auth.test at start was answered', async () => {
    expect(slack.calls[0]?.method).toBe('auth.test');
    const ready = await readyz();
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ ready: true, slack: 'connected' });
    expect(ready.body).not.toHaveProperty('slackCall');
  });

  it('is not ready once Slack refuses the bot’s calls, naming the method and Slack’s error', async () => {
    slack.refuse('*', 'token_revoked');
    await expect(bot.slack.app.client.chat.postMessage({ channel: 'C0OPS', text: 'hello' })).rejects.toThrow(
      /token_revoked/,
    );
    const failing = await readyz();
    expect(failing.status).toBe(503);
    expect(failing.body).toMatchObject({
      ready: false,
      store: 'ok',
      slack: 'failing',
      slackCall: { method: 'chat.postMessage', error: 'token_revoked' },
    });
    expect(JSON.stringify(failing.body)).not.toContain('xoxb');

    // The probe asked Slack again (auth.test); Slack still refuses.
    await bot.slackHealth.idle();
    expect(slack.calls.at(-1)?.method).toBe('auth.test');
    expect((await readyz()).body).toMatchObject({
      slack: 'failing',
      slackCall: { method: 'auth.test', error: 'token_revoked' },
    });
    // That probe asked again too; Slack refused again.
    await bot.slackHealth.idle();
  });

  it('is ready again once Slack answers again, even with no other call in between', async () => {
    slack.accept('*');
    // This probe still reports the last answer, and asks again.
    expect((await readyz()).status).toBe(503);
    await bot.slackHealth.idle();
    const ready = await readyz();
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ ready: true, slack: 'connected' });
  });

  it('a 500 from Slack on any call makes it unready, and the retry log names the method', async () => {
    const before = log.lines.length;
    slack.answerStatus('chat.update', 500);
    await expect(
      bot.slack.app.client.chat.update({ channel: 'C0OPS', ts: '1.000001', text: 'hello' }),
    ).rejects.toThrow();
    expect((await readyz()).body).toMatchObject({
      slack: 'failing',
      slackCall: { method: 'chat.update', error: 'http_500' },
    });
    const retries = log.lines.slice(before).filter((l) => String(l.msg).startsWith('Slack did not take'));
    expect(retries).toEqual([
      expect.objectContaining({ method: 'chat.update', attempt: 1, reason: 'slack_webapi_http_error' }),
      expect.objectContaining({ method: 'chat.update', attempt: 2 }),
    ]);
    // A call Slack answers (even with an error about the call itself) makes it ready again.
    slack.accept('chat.update');
    await bot.slack.app.client.chat.update({ channel: 'C0OPS', ts: '1.000001', text: 'hello' });
    expect((await readyz()).status).toBe(200);
  });
});
