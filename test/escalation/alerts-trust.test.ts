import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { configSchema } from '../../src/config/schema.js';
import { createEscalation, type Escalation } from '../../src/escalation/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { createAlertWebClient, createSlackSender } from '../../src/transports/slack/alerts.js';
import { connectionFor, deletePrefix, randomName } from '../backends/bullmq/helpers.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { fakeSlack, kindOf } from './fake-slack.js';

const redisUrl = testRedisUrl();
const SLACK = 'https://slack.trust.test';
const T0 = Date.parse('2030-04-01T09:00:00.000Z');
const logger = createLogger({ level: 'silent' });

/**
 * Issue 25, "alerts people trust": paused queues, silences, `ack all`, per-system alert channels
 * and grouped messages, through real BullMQ queues, the monitor's tick and a nock'd Slack.
 */
describe('alerts people trust (real BullMQ, monitor ticks, nock’d Slack)', () => {
  let dir: string;
  let prefix: string;
  let queues: Record<string, Queue>;
  let clock: number;
  let slack: ReturnType<typeof fakeSlack>;
  const running: QueueOps[] = [];
  const NAMES = ['dispatch-ios', 'dispatch-android', 'maintenance'];

  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
  });
  afterAll(() => {
    nock.enableNetConnect();
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-trust-'));
    prefix = randomName('trust');
    queues = {};
    for (const name of NAMES) {
      queues[name] = new Queue(name, { connection: connectionFor(redisUrl), prefix });
      await queues[name].waitUntilReady();
    }
    clock = T0;
    slack = fakeSlack(SLACK, { now: () => clock });
  });

  afterEach(async () => {
    for (const runtime of running.splice(0)) await runtime.close();
    for (const queue of Object.values(queues)) await queue.close();
    await deletePrefix(redisUrl, prefix);
    nock.cleanAll();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The config under test; `escalation` and `slack` merge over a one-system default. */
  const config = (options: { escalation?: Record<string, unknown>; system?: Record<string, unknown> } = {}) =>
    configSchema.parse({
      slack: { incidentChannel: 'C0INCIDENT', allowedChannels: ['C0INCIDENT'] },
      store: `sqlite:${join(dir, 'queue-ops.db')}`,
      roles: { viewer: ['*'], operator: ['U0ALICE'] },
      systems: [
        { name: 'pushizo', type: 'bullmq', redis: redisUrl, prefix, queues: NAMES, ...options.system },
      ],
      escalation: { intervalSeconds: 30, clearAfterSamples: 2, ...options.escalation },
    });

  async function start(
    cfg: ReturnType<typeof config>,
  ): Promise<{ runtime: QueueOps; escalation: Escalation }> {
    const runtime = await createQueueOps({ config: cfg, env: {}, logger, now: () => new Date(clock) });
    running.push(runtime);
    const sender = createSlackSender(
      createAlertWebClient('xoxb-test', { apiUrl: `${SLACK}/api/` }),
      logger,
      'en',
    );
    const escalation = createEscalation({ runtime, logger, slack: sender, label: 'test' });
    return { runtime, escalation };
  }

  async function tick(escalation: Escalation, at: number) {
    clock = at;
    const outcome = await escalation.monitor.tick();
    const drained = await escalation.outbox.drain();
    return { outcome, drained };
  }

  const add = (queue: string, n: number) =>
    queues[queue]!.addBulk(Array.from({ length: n }, (_, i) => ({ name: 'send-push', data: { n: i } })));
  const s = (seconds: number) => T0 + seconds * 1000;
  const msgs = () => slack.delivered().filter((c) => kindOf(c) !== 'chart');

  it('the default no-workers rule skips a paused queue with jobs waiting; includePaused: true watches it', async () => {
    await add('dispatch-ios', 5);
    await add('maintenance', 5);
    await queues.maintenance!.pause();
    // The default rules (no `rules:`), nobody consuming either queue, for longer than `for: 1m`.
    const bot = await start(config({ escalation: { groupBy: 'none' } }));
    let last: Awaited<ReturnType<typeof tick>> | undefined;
    for (const at of [0, 30, 60, 90]) last = await tick(bot.escalation, s(at));
    const firing = last!.outcome.leader ? last!.outcome.firing : [];
    expect(firing.map((a) => `${a.rule} ${a.subject}`)).toEqual(['no-workers pushizo/dispatch-ios']);
    expect(JSON.stringify(msgs())).not.toContain('pushizo/maintenance');

    // A rule that asks for paused queues sees it.
    const watching = await start(
      config({
        escalation: {
          groupBy: 'none',
          rules: [
            {
              name: 'paused-idle',
              queues: ['pushizo/maintenance'],
              metric: 'workers',
              below: 1,
              includePaused: true,
            },
          ],
        },
      }),
    );
    await watching.escalation.monitor.stop();
    await bot.escalation.monitor.stop();
    const again = await tick(watching.escalation, s(400));
    expect(again.outcome.leader && again.outcome.opened.map((a) => a.subject)).toEqual([
      'pushizo/maintenance',
    ]);
  });
});
