import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../../src/app.js';
import { parseConfig } from '../../../src/config/load.js';
import { createSqliteStore } from '../../../src/store/sqlite.js';
import type { Store } from '../../../src/store/store.js';
import { createSlackApp, type SlackApp } from '../../../src/transports/slack/create-app.js';
import { registerSlackListeners } from '../../../src/transports/slack/listeners.js';
import { createSeenSignatures } from '../../../src/transports/slack/replay.js';
import { testRedisUrl } from '../../helpers/test-redis.js';
import { captureResponses, memoryLogger, randomId, slackSignature, slashCommand } from './harness.js';

const secret = 'replay-signing-secret-0123456789';

/**
 * Two replicas of the HTTP bot on one SQLite store, each a real Bolt HTTP receiver on its own
 * port, verifying signatures with the signing secret.
 */
describe('a signed Slack request sent again within the five-minute window', () => {
  const url = testRedisUrl();
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-replay-'));
  const replicas: { slack: SlackApp; base: string; logLines: Record<string, unknown>[] }[] = [];
  const stores: Store[] = [];
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const { logger, lines } = memoryLogger();
      const config = parseConfig(
        `systems:\n  - name: pushizo\n    type: bullmq\n    redis: ${url}\n    prefix: ${randomId('replay')}\n`,
        {},
      );
      const services = createApp({ config, env: {}, logger });
      const store = createSqliteStore(join(dir, 'shared.db'));
      await store.migrate();
      stores.push(store);
      const slack = createSlackApp({
        env: { SLACK_BOT_TOKEN: 'xoxb-replay', SLACK_SIGNING_SECRET: secret, PORT: '0' },
        logger,
        authorization: { botId: 'B0BOT', botUserId: 'U0BOT' },
        seenSignatures: createSeenSignatures({ store, logger }),
      });
      registerSlackListeners(slack.app, { dispatcher: services.dispatcher, logger });
      const { port } = await slack.start();
      replicas.push({ slack, base: `http://127.0.0.1:${port}`, logLines: lines });
      closers.push(async () => {
        await slack.stop();
        await services.close();
        await store.close();
      });
    }
  });
  afterAll(async () => {
    for (const close of closers) await close();
    nock.cleanAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (base: string, raw: string, timestamp: number) =>
    fetch(`${base}/slack/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': slackSignature(secret, timestamp, raw),
      },
      body: raw,
    });
  const answered = (lines: Record<string, unknown>[]) =>
    lines.filter((l) => l.msg === 'command answered').length;

  it('runs the first delivery and refuses the identical second one, to the same replica or another', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/replayed`;
    const { bodies } = captureResponses(path);
    const raw = new URLSearchParams(slashCommand('help', path) as Record<string, string>).toString();
    const timestamp = Math.floor(Date.now() / 1000);
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];

    expect((await post(a.base, raw, timestamp)).status).toBe(200);
    await expect.poll(() => bodies.length, { timeout: 5_000 }).toBe(1);
    expect(answered(a.logLines)).toBe(1);

    // The same bytes, same headers: acknowledged (so nothing retries it) but not run again.
    expect((await post(a.base, raw, timestamp)).status).toBe(200);
    expect((await post(b.base, raw, timestamp)).status).toBe(200);
    await expect
      .poll(
        () =>
          [...a.logLines, ...b.logLines].filter((l) => String(l.msg).startsWith('replayed Slack request'))
            .length,
      )
      .toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(bodies).toHaveLength(1);
    expect(answered(a.logLines) + answered(b.logLines)).toBe(1);
  });

  it('refuses a correctly signed request stamped more than five minutes ahead (Slack: "from local time")', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/ahead`;
    const { bodies } = captureResponses(path);
    const raw = new URLSearchParams(slashCommand('help', path) as Record<string, string>).toString();
    const now = Math.floor(Date.now() / 1000);
    const before = replicas[0]!.logLines.length;
    expect((await post(replicas[0]!.base, raw, now + 10 * 60)).status).toBe(200);
    await expect
      .poll(
        () =>
          replicas[0]!.logLines
            .slice(before)
            .filter((l) => l.msg === 'Slack request stamped in the future refused').length,
      )
      .toBe(1);
    // A minute ahead (a clock that is a little off) is still run.
    expect((await post(replicas[0]!.base, raw, now + 60)).status).toBe(200);
    await expect.poll(() => bodies.length, { timeout: 5_000 }).toBe(1);
    expect(answered(replicas[0]!.logLines.slice(before))).toBe(1);
  });

  it('still runs a new request with the same text (a new timestamp is a new signature)', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/again`;
    const { bodies } = captureResponses(path);
    const raw = new URLSearchParams(slashCommand('help', path) as Record<string, string>).toString();
    const now = Math.floor(Date.now() / 1000);
    await post(replicas[0]!.base, raw, now - 1);
    await post(replicas[1]!.base, raw, now);
    await expect.poll(() => bodies.length, { timeout: 5_000 }).toBe(2);
  });
});

/**
 * The replay check is a store write (an fsync on SQLite): under a burst of commands, each waiting
 * for it before its ack made the last ones miss Slack's 3 s (`npm run bench -- load`). The ack
 * goes back first; the command still runs only once the check says it is new.
 */
describe('a signed Slack request while the replay check is still writing', () => {
  const url = testRedisUrl();
  let slack: SlackApp;
  let base: string;
  let release: (first: boolean) => void = () => {};
  let checks = 0;
  const log = memoryLogger();

  beforeAll(async () => {
    const config = parseConfig(
      `systems:\n  - name: pushizo\n    type: bullmq\n    redis: ${url}\n    prefix: ${randomId('slow')}\n`,
      {},
    );
    const services = createApp({ config, env: {}, logger: log.logger });
    slack = createSlackApp({
      env: { SLACK_BOT_TOKEN: 'xoxb-replay', SLACK_SIGNING_SECRET: secret, PORT: '0' },
      logger: log.logger,
      authorization: { botId: 'B0BOT', botUserId: 'U0BOT' },
      // A store that answers only when the test says so.
      seenSignatures: {
        firstSeen: () => {
          checks++;
          return new Promise<boolean>((resolve) => {
            release = resolve;
          });
        },
      },
    });
    registerSlackListeners(slack.app, { dispatcher: services.dispatcher, logger: log.logger });
    const { port } = await slack.start();
    base = `http://127.0.0.1:${port}`;
    return async () => {
      await slack.stop();
      await services.close();
    };
  });

  const send = (raw: string) => {
    const timestamp = Math.floor(Date.now() / 1000);
    return fetch(`${base}/slack/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': slackSignature(secret, timestamp, raw),
      },
      body: raw,
    });
  };

  it('is acknowledged at once, answered after the check, and acknowledged only once', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/slow`;
    const { bodies } = captureResponses(path);
    const raw = new URLSearchParams(slashCommand('help', path) as Record<string, string>).toString();
    const response = await send(raw);
    expect(response.status).toBe(200);
    expect(checks).toBe(1);
    // Not run before the check says the request is new.
    expect(bodies).toHaveLength(0);
    release(true);
    await expect.poll(() => bodies.length, { timeout: 5_000 }).toBe(1);
    // The listener's own ack() after the early one is a no-op, not Bolt's "multiple ack" error.
    expect(log.lines.filter((l) => Number(l.level) >= 50 || /ack/i.test(String(l.msg)))).toEqual([]);
  });

  it('is acknowledged and never run when the check finds it replayed', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/replay`;
    const { bodies } = captureResponses(path);
    const raw = new URLSearchParams(slashCommand('help', path) as Record<string, string>).toString();
    expect((await send(raw)).status).toBe(200);
    release(false);
    await expect
      .poll(() => log.lines.filter((l) => String(l.msg).startsWith('replayed Slack request')).length)
      .toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(bodies).toHaveLength(0);
  });
});
