import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker } from 'bullmq';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBot } from '../../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix, waitFor } from '../../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../../helpers/test-redis.js';
import { botConfigInput, captureResponses, randomId, slashCommand, startWiredBot } from './harness.js';

/**
 * A queue created after the bot's last discovery (issue 34 §5): docs/configuration.md promises
 * that a name the last discovery did not see is looked for at once. Before, the bot answered "no
 * queue called `ap`" for up to 5 minutes (its discovery's age) while the command line, a fresh
 * process, found it. The bot is the one `npm start` builds; only Slack is nock'd; the queues are
 * real BullMQ queues on the test Redis, discovered by SCAN (no `queues:` in the config).
 */
const API_HOST = 'https://slack-new-queue.test.example';
const STEP_MS = 120_000;
/** queue-names.ts: a name missing from a discovery younger than this is not scanned for again. */
const RESCAN_AFTER_MS = 5_000;

describe('a queue created after the last discovery, asked for in Slack', () => {
  const url = testRedisUrl();
  const prefix = randomId('newq');
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-new-queue-'));
  const queues: Queue[] = [];
  let bot: RunningBot;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    nock(API_HOST)
      .persist()
      .post(/^\/api\//)
      .reply(200, { ok: true, channel: 'C0INCIDENT', ts: '1700000300.000100' });
    const first = new Queue('dispatch-ios', { connection: connectionFor(url), prefix });
    await first.add('deliver.apns', { n: 1 });
    queues.push(first);
    bot = await startWiredBot({
      dir,
      config: botConfigInput({ redis: url, prefix, dir }),
      token: 'xoxb-new-queue-test',
      apiUrl: `${API_HOST}/api/`,
      seams: { auditChannelIntervalMs: 0 },
    });
  }, STEP_MS);

  afterAll(async () => {
    await bot?.stop();
    for (const queue of queues) await queue.close();
    await deletePrefix(url, prefix);
    rmSync(dir, { recursive: true, force: true });
    nock.cleanAll();
    nock.enableNetConnect();
  });

  /** `/queue <text>` typed by Alice in C0INCIDENT: the text of what she sees. */
  async function slash(text: string): Promise<string> {
    const path = `/commands/T0TEAM/${randomId('')}/cmd`;
    const answered = captureResponses(path);
    await bot.slack.app.processEvent({
      body: slashCommand(text, path, { user_id: 'U0ALICE', user_name: 'alice' }),
      ack: async () => {},
    });
    return answered.bodies.map((b) => `${String(b.text)}\n${JSON.stringify(b.blocks ?? [])}`).join('\n');
  }

  it(
    'is found by the first command that names it, status and dlq, with or without its system',
    async () => {
      // The bot has discovered its queues: `ap` does not exist yet.
      expect(await slash('status pushizo/dispatch-ios')).toContain('dispatch-ios');
      expect(await slash('status pushizo/ap')).toContain('has no queue called `ap`');

      const ap = new Queue('ap', { connection: connectionFor(url), prefix });
      queues.push(ap);
      // One job fails for real, by a worker, so that the dlq has something to show.
      const worker = new Worker(
        'ap',
        async () => {
          throw new Error('ledger timeout');
        },
        { connection: connectionFor(url), prefix },
      );
      await ap.add('invoice.post', { n: 1 });
      await waitFor('the job to fail', async () => (await ap.getFailedCount()) === 1);
      await worker.close();
      await ap.add('invoice.post', { n: 2 });
      // Past the typo throttle (a missing name is looked for again at most every 5 s), far inside
      // the discovery's 5 minutes.
      await sleep(RESCAN_AFTER_MS + 500);

      const status = await slash('status pushizo/ap');
      expect(status).not.toContain('has no queue called');
      expect(status).toContain('pushizo/ap');
      const dlq = await slash('dlq pushizo/ap');
      expect(dlq).not.toContain('has no queue called');
      expect(dlq).toContain('ledger timeout');
    },
    STEP_MS,
  );

  it(
    'named without its system, it is pointed at',
    async () => {
      const other = new Queue('payouts', { connection: connectionFor(url), prefix });
      queues.push(other);
      await other.add('payout.send', { n: 1 });
      await sleep(RESCAN_AFTER_MS + 500);
      expect(await slash('status payouts')).toContain('pushizo/payouts');
    },
    STEP_MS,
  );
});
