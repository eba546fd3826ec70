import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postSlash, SIGNING_SECRET, type SlackStandIn, slackStandIn } from '../../bench/bot.js';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { startWiredBot } from '../transports/slack/harness.js';

/**
 * Fifty people typing `/queue status` at once into the HTTP bot (its real Bolt receiver on a
 * port, signed requests, a local Slack for the Web API and the response_urls): every one is
 * acknowledged, answered with the status on its own response_url, and audited. Latency is
 * `npm run bench -- load`'s business, never asserted here.
 */
describe('the HTTP bot under 50 concurrent /queue status', () => {
  const url = testRedisUrl();
  const prefix = randomName('burst');
  const dir = mkdtempSync(join(tmpdir(), 'qo-burst-'));
  const N = 50;
  let slack: SlackStandIn;
  let bot: RunningBot;
  let queue: Queue;

  beforeAll(async () => {
    queue = new Queue('dispatch-ios', { connection: connectionFor(url), prefix });
    await queue.add('send-push', { token: 'secret-device-token' });
    slack = await slackStandIn();
    const config = writeConfigFile(dir, {
      store: `sqlite:${join(dir, 'store.db')}`,
      roles: { viewer: ['*'] },
      systems: [bullmqSystem('pushizo', url, prefix, { queues: ['dispatch-ios'] })],
    });
    bot = await startWiredBot({
      dir,
      configFile: config,
      token: 'xoxb-burst',
      apiUrl: slack.apiUrl,
      http: { signingSecret: SIGNING_SECRET },
      stderr: () => {},
    });
  }, 30_000);

  afterAll(async () => {
    await bot?.stop();
    await slack?.close();
    await queue?.close();
    await deletePrefix(url, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  it('acknowledges, answers and audits every one of them, each on its own response_url', async () => {
    // postSlash throws unless the bot answered 200 (its ack).
    await Promise.all(Array.from({ length: N }, (_, i) => postSlash(bot.port!, slack.url, i + 1)));
    await expect.poll(() => slack.responses(), { timeout: 30_000, interval: 50 }).toBe(N);
    for (let n = 1; n <= N; n++) {
      const body = slack.answer(n)!.body;
      expect(body).toContain('dispatch-ios');
      expect(body).not.toContain('went wrong');
      // Job payloads are never shown.
      expect(body).not.toContain('secret-device-token');
    }
    const audited = await bot.runtime.store.listAudit({ limit: 500 });
    expect(audited.filter((e) => e.action === 'command.status')).toHaveLength(N);
  }, 60_000);
});
