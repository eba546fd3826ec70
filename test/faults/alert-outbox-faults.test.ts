import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { configSchema } from '../../src/config/schema.js';
import { createEscalation, type Escalation } from '../../src/escalation/runtime.js';
import { createAlertWebClient, createSlackSender } from '../../src/transports/slack/alerts.js';
import { boltLogger } from '../../src/transports/slack/create-app.js';
import { fakeSlack, kindOf, type SlackCall } from '../escalation/fake-slack.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { memoryLogger } from '../transports/slack/harness.js';

/**
 * Slack failing the monitor, which nobody is watching when it happens: Slack answering 500, 429 with Retry-After, or hanging past the
 * client's timeout, on alert posts, resolve updates and chart uploads (into the alert's thread).
 * Real BullMQ queues on the test Redis, a real SQLite store, the real monitor and outbox; only
 * Slack's Web API and its upload URL are nock'd. The client's timeout is 300 ms here, so a hang
 * costs 300 ms, not 10 s.
 */
const redisUrl = testRedisUrl();
const SLACK = 'https://slack.outbox-faults.test';
const TOKEN = 'xoxb-outbox-faults-secret-token';
const T0 = Date.parse('2030-04-01T09:00:00.000Z');
// The client's timeout in these tests: short, so a hang costs little, but not so short that a
// loaded machine times out a call Slack answered (at 300 ms a post Slack took was retried).
const TIMEOUT_MS = 1500;
const HANG_MS = 3000;

/** One way Slack misbehaves, as the fake scripts it, and what the outbox makes of it. */
interface Fault {
  name: string;
  status: number;
  retryAfter?: number;
  hangMs?: number;
  /** The reason the log gives. */
  reason: RegExp;
  /** When the item is due again, in seconds after the failure (back-off or Retry-After). */
  dueAfterS: number;
}
const FAULTS: Fault[] = [
  { name: 'a 500', status: 500, reason: /^HTTP 500$/, dueAfterS: 2 },
  {
    name: 'a 429 with Retry-After: 30',
    status: 429,
    retryAfter: 30,
    reason: /^rate limited \(429\)$/,
    dueAfterS: 30,
  },
  { name: 'a hang past the client timeout', status: 200, hangMs: HANG_MS, reason: /./, dueAfterS: 2 },
];

describe('the alert outbox while Slack fails', () => {
  let dir: string;
  let prefix: string;
  let ios: Queue;
  let android: Queue;
  let clock: number;
  let slack: ReturnType<typeof fakeSlack>;
  let log: ReturnType<typeof memoryLogger>;
  const running: QueueOps[] = [];

  /**
   * Registers the hooks of one scenario (a describe, its steps in order): its own queues, store
   * directory, fake Slack and log, from its first step to its last.
   */
  function freshScenario() {
    beforeAll(async () => {
      nock.disableNetConnect();
      nock.enableNetConnect('127.0.0.1');
      dir = mkdtempSync(join(tmpdir(), 'queue-ops-outbox-faults-'));
      prefix = randomName('obf');
      ios = new Queue('dispatch-ios', { connection: connectionFor(redisUrl), prefix });
      android = new Queue('dispatch-android', { connection: connectionFor(redisUrl), prefix });
      await Promise.all([ios.waitUntilReady(), android.waitUntilReady()]);
      clock = T0;
      slack = fakeSlack(SLACK, { now: () => clock });
      log = memoryLogger();
    });

    afterAll(async () => {
      for (const runtime of running.splice(0)) await runtime.close();
      await Promise.all([ios.close(), android.close()]);
      await deletePrefix(redisUrl, prefix);
      nock.cleanAll();
      nock.enableNetConnect();
      rmSync(dir, { recursive: true, force: true });
    });
  }

  async function start(): Promise<{ runtime: QueueOps; escalation: Escalation }> {
    const config = configSchema.parse({
      slack: { incidentChannel: 'C0INCIDENT', allowedChannels: ['C0INCIDENT'] },
      store: `sqlite:${join(dir, 'queue-ops.db')}`,
      roles: { viewer: ['*'], operator: ['U0ALICE'] },
      systems: [
        {
          name: 'pushizo',
          type: 'bullmq',
          redis: redisUrl,
          prefix,
          queues: ['dispatch-ios', 'dispatch-android'],
        },
      ],
      escalation: {
        groupBy: 'none',
        intervalSeconds: 30,
        renotifyMinutes: 60,
        clearAfterSamples: 1,
        rules: [{ name: 'backlog', queues: ['pushizo/dispatch-*'], metric: 'waiting', above: 50 }],
      },
    });
    const runtime = await createQueueOps({ config, env: {}, logger: log.logger, now: () => new Date(clock) });
    running.push(runtime);
    const client = createAlertWebClient(TOKEN, {
      apiUrl: `${SLACK}/api/`,
      logger: boltLogger(log.logger),
      timeoutMs: TIMEOUT_MS,
    });
    const escalation = createEscalation({
      runtime,
      logger: log.logger,
      slack: createSlackSender(client, log.logger, 'en'),
      label: 'test',
    });
    return { runtime, escalation };
  }

  async function tick(escalation: Escalation, at: number) {
    clock = at;
    await escalation.monitor.tick();
    return await escalation.outbox.drain();
  }

  const add = (queue: Queue, n: number) =>
    queue.addBulk(Array.from({ length: n }, (_, i) => ({ name: 'send-push', data: { n: i } })));
  const s = (seconds: number) => T0 + seconds * 1000;
  const text = (call: SlackCall) => JSON.stringify(call.blocks);
  const posts = () => slack.delivered().filter((c) => kindOf(c) === 'post');
  const postOf = (queue: string) => posts().find((c) => text(c).includes(`pushizo/${queue}`));
  /** Charts completed into `ts`'s thread (a chart is shown once `files.completeUploadExternal` ran). */
  const chartsIn = (ts: string) => slack.uploads.filter((u) => u.completed?.thread_ts === ts);
  const warnings = (message: string) => log.lines.filter((l) => l.msg === message);

  function expectNoSecretsLogged() {
    const all = JSON.stringify(log.lines);
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain('send-push');
  }

  describe.each(FAULTS)('a chart upload meeting $name at its upload URL', (fault) => {
    freshScenario();
    let bot: Awaited<ReturnType<typeof start>>;
    let iosPost: SlackCall;
    const updates = () => slack.delivered().filter((c) => kindOf(c) === 'update' && c.body.ts === iosPost.ts);

    it('fails there once, after the alert is posted, sharing nothing', async () => {
      bot = await start();
      await add(ios, 60);
      slack.failUploadUrlNext(fault.status, {
        ...(fault.retryAfter ? { retryAfter: fault.retryAfter } : {}),
        ...(fault.hangMs ? { hangMs: fault.hangMs } : {}),
      });
      await tick(bot.escalation, s(0));
      iosPost = postOf('dispatch-ios')!;
      expect(iosPost).toBeDefined();
      // The bytes reached the upload URL once and failed there: nothing was shared.
      expect(slack.uploadPosts.map((p) => p.status)).toEqual([fault.hangMs ? 0 : fault.status]);
      expect(chartsIn(iosPost.ts!)).toEqual([]);
    });

    it('holds up neither the next alert’s post nor its chart', async () => {
      // A second alert a second later, while the first chart waits for its retry: posted now.
      await add(android, 60);
      const second = await tick(bot.escalation, s(1));
      const androidPost = postOf('dispatch-android');
      expect(androidPost, JSON.stringify(second)).toBeDefined();
      // Its own chart is not held by the other alert's either.
      expect(chartsIn(androidPost!.ts!)).toHaveLength(1);
    });

    it('holds up no resolve update', async () => {
      // The first alert resolves: its update goes out at once, the chart still waiting.
      await ios.drain(true);
      await tick(bot.escalation, s(2));
      expect(updates()).toHaveLength(1);
      expect(text(updates()[0]!)).toContain('RESOLVED');
    });

    it('goes later, in its thread, once its back-off (or Retry-After) is over, and the resolve chart too', async () => {
      await tick(bot.escalation, s(2 + fault.dueAfterS));
      const charts = chartsIn(iosPost.ts!);
      expect(charts).toHaveLength(2);
      for (const chart of charts) expect(chart.png).toBeDefined();
      expect(await bot.runtime.store.escalation.pendingOutbox()).toBe(0);
    });

    it('sends nothing twice: one post per alert, one resolve update, every chart completed once', () => {
      expect(posts()).toHaveLength(2);
      expect(updates()).toHaveLength(1);
      expect(slack.uploads.filter((u) => u.completed)).toHaveLength(3);
    });

    it('keeps the order per thread: the post, then its chart', () => {
      const completes = slack.calls.filter((c) => kindOf(c) === 'chart');
      expect(slack.calls.indexOf(completes[0]!)).toBeGreaterThan(slack.calls.indexOf(iosPost));
    });

    it('is logged once, with its reason and when it is tried again, and no secrets', () => {
      const failed = warnings('Slack did not take an alert chart; it is tried again on its own');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ kind: 'chart', retryInMs: fault.dueAfterS * 1000 });
      expect(String(failed[0]!.reason)).toMatch(fault.reason);
      expectNoSecretsLogged();
    });
  });

  describe('a chart refused for good (missing_scope)', () => {
    freshScenario();

    it('is dropped at once, and nothing behind it waits', async () => {
      const bot = await start();
      slack.failUploadNext('missing_scope');
      await add(ios, 60);
      const first = await tick(bot.escalation, s(0));
      expect(first).toMatchObject({ sent: 1, dropped: 1, pending: 0 });
      await add(android, 60);
      await tick(bot.escalation, s(1));
      expect(posts()).toHaveLength(2);
      // The second alert's chart (the refusal was answered once) goes as usual.
      expect(chartsIn(postOf('dispatch-android')!.ts!)).toHaveLength(1);
      expect(chartsIn(postOf('dispatch-ios')!.ts!)).toEqual([]);
      expect(warnings('Slack refused an alert message for good; dropped from the outbox')).toEqual([
        expect.objectContaining({ kind: 'chart', reason: 'missing_scope' }),
      ]);
      expectNoSecretsLogged();
    });
  });

  describe.each(FAULTS)('an alert post and its resolve update meeting $name', (fault) => {
    freshScenario();

    it('go out later, once each and in order: post, chart, resolve update, chart', async () => {
      const bot = await start();
      const failNext = () =>
        slack.failNext(fault.status, {
          ...(fault.retryAfter ? { retryAfter: fault.retryAfter } : {}),
          // A hang is the worst case: Slack kept the post, only its answer never came.
          ...(fault.hangMs ? { hangMs: fault.hangMs, posted: true } : {}),
        });
      await add(ios, 60);
      failNext();
      expect(await tick(bot.escalation, s(0))).toMatchObject({ sent: 0, stoppedBy: 'retry' });
      // Not before the back-off or Retry-After: nothing is tried early.
      clock = s(fault.dueAfterS - 1);
      expect(await bot.escalation.outbox.drain()).toMatchObject({ sent: 0, stoppedBy: 'not-before' });
      clock = s(fault.dueAfterS);
      expect(await bot.escalation.outbox.drain()).toMatchObject({ pending: 0 });

      // Slack holds exactly one message for the alert (after a hang: the one it kept, adopted).
      const [alert] = await bot.runtime.store.escalation.listAlerts({ status: 'firing' });
      const ts = alert!.messageTs!;
      const topLevel = slack.calls.filter((c) => kindOf(c) === 'post');
      if (fault.hangMs) {
        expect(topLevel).toHaveLength(1);
        expect(slack.lookups).toHaveLength(1);
      } else {
        expect(topLevel.map((c) => c.status)).toEqual([fault.status, 200]);
        expect(topLevel[1]!.ts).toBe(ts);
      }

      await ios.drain(true);
      failNext();
      const resolving = s(fault.dueAfterS + 10);
      expect(await tick(bot.escalation, resolving)).toMatchObject({ sent: 0, stoppedBy: 'retry' });
      clock = resolving + fault.dueAfterS * 1000;
      expect(await bot.escalation.outbox.drain()).toMatchObject({ sent: 2, pending: 0 });

      const shown = slack.delivered().filter((c) => c.ts === ts || c.body.ts === ts || kindOf(c) === 'chart');
      expect(shown.map(kindOf)).toEqual(
        fault.hangMs ? ['chart', 'update', 'chart'] : ['post', 'chart', 'update', 'chart'],
      );
      expect(text(shown.at(-2)!)).toContain('RESOLVED');
      expect(chartsIn(ts)).toHaveLength(2);
      // Every attempt said why it failed and when it will be tried again.
      const failed = warnings('Slack did not take an alert message; it stays in the outbox, in order');
      expect(failed.map((l) => [l.kind, l.retryInMs])).toEqual([
        ['post', fault.dueAfterS * 1000],
        ['update', fault.dueAfterS * 1000],
      ]);
      for (const line of failed) expect(String(line.reason)).toMatch(fault.reason);
      expectNoSecretsLogged();
    });
  });
});
