import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps } from '../../src/app.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createEscalation } from '../../src/escalation/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { type RunningBot, startBot } from '../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix, randomName, waitFor } from '../helpers/bullmq-jobs.js';
import { backlogRule, bullmqSystem, envRef, writeConfigFile } from '../helpers/config-file.js';
import { type LoopbackSlack, spawnBot, startLoopbackSlack } from '../helpers/loopback-slack.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { type PagerStandIn, pagerDutyDelivery, startPagerStandIn } from './pager-stand-in.js';

/**
 * Paging from real bot processes: one killed (SIGKILL) between PagerDuty taking the trigger and
 * the store hearing so, then the one after it; and the webhook and `/readyz` on the bot's own
 * HTTP server. Real Redis and BullMQ for the alert's condition, Slack and PagerDuty on loopback.
 */
const redisUrl = testRedisUrl();
const ROUTING_KEY = 'R0UTINGKEY0123456789abcdef099999';
const SECRET = 'whsec-bot-process';
const logger = createLogger({ level: 'silent' });

let dir: string;
let prefix: string;
let queue: Queue;
let slack: LoopbackSlack;
let pd: PagerStandIn;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'queue-ops-paging-bot-'));
  prefix = randomName('pbot');
  queue = new Queue('dispatch-ios', { connection: connectionFor(redisUrl), prefix });
  await queue.waitUntilReady();
  slack = await startLoopbackSlack();
  pd = await startPagerStandIn({ routingKey: ROUTING_KEY, apiKey: 'unused' });
});

afterAll(async () => {
  await queue.close();
  await deletePrefix(redisUrl, prefix);
  await slack.close();
  await pd.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The routing key is an environment reference, as a config file would have it. */
function configFile(name: string): string {
  return writeConfigFile(
    dir,
    {
      slack: { incidentChannel: 'C0INCIDENT', allowedChannels: ['C0INCIDENT'] },
      store: `sqlite:${join(dir, `${name}.db`)}`,
      systems: [bullmqSystem('pushizo', redisUrl, prefix, { queues: ['dispatch-ios'] })],
      escalation: { groupBy: 'none', intervalSeconds: 1, renotifyMinutes: 60, rules: [backlogRule()] },
      paging: [
        {
          name: 'infra-oncall',
          type: 'pagerduty',
          routingKey: envRef('PD_ROUTING_KEY'),
          url: pd.pagerDutyUrl,
          match: { rules: ['backlog'] },
        },
      ],
    },
    `${name}.yml`,
  );
}

describe('paging from bot processes', () => {
  afterEach(async () => {
    await queue.drain();
  });

  it('a bot killed between the send and the record: the next one sends the same key, one incident', async () => {
    const file = configFile('killed');
    const held = pd.holdNext();
    await queue.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: 'send-push', data: { n: i } })));
    const bot = await spawnBot(file, slack.url, { PD_ROUTING_KEY: ROUTING_KEY });
    try {
      await held;
      // PagerDuty has the trigger; the bot never hears so.
      bot.child.kill('SIGKILL');
      expect((await bot.exited).signal).toBe('SIGKILL');
    } finally {
      if (bot.child.exitCode === null) bot.child.kill('SIGKILL');
    }
    expect(pd.pagerDuty('trigger')).toHaveLength(1);
    const key = String(pd.pagerDuty('trigger')[0]!.body.dedup_key);

    // The next process on the same store, after the dead one's claim (30 s) has lapsed.
    const config = loadConfigFile(file, { PD_ROUTING_KEY: ROUTING_KEY });
    const later = () => new Date(Date.now() + 60_000);
    const runtime = await createQueueOps({ config, env: {}, logger, now: later });
    try {
      const escalation = createEscalation({ runtime, logger, label: 'next' });
      await escalation.monitor.tick();
      await escalation.outbox.drain();
      await escalation.outbox.drain();
      const triggers = pd.pagerDuty('trigger');
      expect(triggers.map((r) => r.body.dedup_key)).toEqual([key, key]);
      // The resend is harmless: the service folds it into the page it has.
      expect([...pd.incidents.values()]).toEqual([
        { service: 'pagerduty', key, status: 'triggered', triggers: 1 },
      ]);
      const [alert] = await runtime.alerts.open();
      expect(`queue-ops-${alert!.id}`).toBe(key);
      expect(alert!.pages?.map((p) => p.pager)).toEqual(['infra-oncall']);
      // The page is recorded as sent: nothing of it waits any more.
      expect(await runtime.store.escalation.nextOutbox('pages', later().toISOString())).toBeUndefined();
    } finally {
      await runtime.close();
    }
  });

  describe('the webhook and /readyz on the bot’s HTTP server', () => {
    let bot: RunningBot;

    beforeAll(async () => {
      const started = await startBot(
        {
          SLACK_BOT_TOKEN: 'xoxb-paging-test',
          SLACK_SIGNING_SECRET: 'paging-signing-secret',
          SLACK_API_URL: slack.url,
          PORT: '0',
          QUEUE_OPS_CONFIG: configFile('webhook'),
          PD_ROUTING_KEY: ROUTING_KEY,
          PAGERDUTY_WEBHOOK_SECRET: SECRET,
        },
        { stderr: () => {}, stdout: () => {} },
        { logger },
      );
      if (typeof started === 'number') throw new Error(`bot did not start: ${started}`);
      bot = started;
    });

    afterAll(async () => {
      await bot?.stop();
    });

    it('answers PagerDuty’s deliveries: 401 unless signed, an ack acknowledges once, /readyz names the pager', async () => {
      const before = pd.pagerDuty('trigger').length;
      await queue.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: 'send-push', data: { n: i } })));
      await waitFor('the page', async () => pd.pagerDuty('trigger').length > before);
      const key = String(pd.pagerDuty('trigger').at(-1)!.body.dedup_key);
      const base = `http://127.0.0.1:${bot.port}`;
      const ready = await fetch(`${base}/readyz`);
      expect(((await ready.json()) as { pagers: unknown }).pagers).toEqual({ 'infra-oncall': 'ok' });

      const delivery = pagerDutyDelivery('incident.acknowledged', key, SECRET);
      const post = (signature?: string) =>
        fetch(`${base}/pagerduty/webhook`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            ...(signature ? { 'X-PagerDuty-Signature': signature } : {}),
          },
          body: delivery.raw,
        });
      expect((await post()).status).toBe(401);
      expect((await post('v1=00')).status).toBe(401);
      const [alert] = await bot.runtime.alerts.open();
      expect(alert!.ackedBy).toBeUndefined();

      const accepted = await post(delivery.signature);
      expect(accepted.status).toBe(200);
      expect(await accepted.json()).toEqual({ ok: true, found: true, changed: true });
      const replayed = await post(delivery.signature);
      expect(await replayed.json()).toEqual({ ok: true, found: true, changed: false });
      expect((await bot.runtime.store.escalation.getAlert(alert!.id))!.ackedBy).toBe('pagerduty:PJANE01');
      // The message was updated to say so.
      await waitFor('the update', async () =>
        slack.calls.some(
          (c) =>
            c.method === 'chat.update' &&
            (c.body.blocks ?? '').includes('acknowledged in PagerDuty by Jane Doe'),
        ),
      );
      const audited = (await bot.runtime.store.listAudit({ limit: 100 })).filter(
        (e) => e.action === 'alert.ack',
      );
      expect(audited).toHaveLength(1);
    });
  });
});
