import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { createEscalation } from '../../src/escalation/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { createAlertWebClient, createSlackSender } from '../../src/transports/slack/alerts.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { backlogRule } from '../helpers/config-file.js';
import { withTimersFrozen } from '../helpers/frozen-timers.js';
import { onlyNockBeyondLoopback } from '../helpers/no-network.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { botProcesses } from './bot-processes.js';
import { fakeSlack, kindOf } from './fake-slack.js';

const redisUrl = testRedisUrl();
const SLACK = 'https://slack.escalation.test';
const T0 = Date.parse('2030-03-01T09:00:00.000Z');
const logger = createLogger({ level: 'silent' });

let dir: string;
let prefix: string;
let queue: Queue;
let slack: ReturnType<typeof fakeSlack>;
const bots = botProcesses(SLACK);

onlyNockBeyondLoopback();

/** A store directory, a queue under a prefix of its own, the clock at T0 and Slack behind nock. */
async function openWorld() {
  dir = mkdtempSync(join(tmpdir(), 'queue-ops-escalation-'));
  prefix = randomName('esc');
  queue = new Queue('dispatch-ios', { connection: connectionFor(redisUrl), prefix });
  await queue.waitUntilReady();
  bots.clock = T0;
  slack = fakeSlack(SLACK, { now: () => bots.clock });
}

async function closeWorld() {
  await bots.closeAll();
  await queue.close();
  await deletePrefix(redisUrl, prefix);
  nock.cleanAll();
  rmSync(dir, { recursive: true, force: true });
}

const config = () =>
  configSchema.parse({
    slack: { incidentChannel: 'C0INCIDENT', allowedChannels: ['C0INCIDENT'] },
    store: `sqlite:${join(dir, 'queue-ops.db')}`,
    roles: { viewer: ['*'], operator: ['U0ALICE'] },
    systems: [{ name: 'pushizo', type: 'bullmq', redis: redisUrl, prefix, queues: ['dispatch-ios'] }],
    escalation: {
      // One message per alert: what this file tests (alerts are grouped by default).
      groupBy: 'none',
      intervalSeconds: 30,
      renotifyMinutes: 2,
      escalateAfterMinutes: 3,
      escalateTo: ['S0PLATFORM'],
      clearAfterSamples: 2,
      rules: [backlogRule(['pushizo/dispatch-*'])],
    },
  });

/** A bot process: its own runtime and monitor on the shared SQLite file (see botProcesses). */
const start = (options: { slackTimeoutMs?: number } = {}) => bots.start(config(), options);
const tick = bots.tick;

const add = (n: number) =>
  queue.addBulk(
    Array.from({ length: n }, (_, i) => ({ name: 'send-push', data: { secret: `payload-${i}` } })),
  );
const s = (seconds: number) => T0 + seconds * 1000;
const textOf = (value: unknown) => JSON.stringify(value);
const alertIdOf = (call: { blocks: Record<string, unknown>[] }) =>
  (call.blocks.find((b) => b.type === 'actions') as { elements: { value: string }[] }).elements[0]!.value;

describe('alert lifecycle against real BullMQ queues and a nock’d Slack Web API', () => {
  beforeEach(openWorld);
  afterEach(closeWorld);

  it('fire → update → renotify → escalate → resolve: one message, updated in place, across a restart', async () => {
    let bot = await start();
    // The alert's messages; its charts (uploads into the thread) are checked on their own.
    const msgs = () => slack.calls.filter((c) => kindOf(c) !== 'chart');
    const charts = () => slack.calls.filter((c) => kindOf(c) === 'chart');
    await tick(bot.escalation, s(0));
    expect(msgs()).toHaveLength(0);

    await add(60);
    await tick(bot.escalation, s(30));
    expect(msgs().map(kindOf)).toEqual(['post']);
    const post = msgs()[0]!;
    expect(post.body.channel).toBe('C0INCIDENT');
    const blocks = textOf(post.blocks);
    expect(blocks).toContain('CRITICAL · backlog · pushizo/dispatch-ios');
    expect(blocks).toContain('*waiting*: *60 jobs* (above 50 jobs)');
    expect(blocks).toContain('Trend `');
    // Buttons carry ids only: the alert id, or system/queue.
    const buttons = (
      post.blocks.find((b) => b.type === 'actions') as { elements: { action_id: string; value: string }[] }
    ).elements;
    const alertId = buttons[0]!.value;
    expect(alertId).toMatch(/^a-[0-9a-f]{8}$/);
    expect(buttons.map((b) => [b.action_id, b.value])).toEqual([
      ['queue_ops.alert.ack', alertId],
      ['queue_ops.alert.snooze_half_hour', alertId],
      ['queue_ops.alert.snooze_two_hours', alertId],
      ['queue_ops.alert.dlq', 'pushizo/dispatch-ios'],
      ['queue_ops.alert.scale', 'pushizo/dispatch-ios'],
      // No worker consumes the queue: the alert carries that cause, and Why? asks about its queue.
      ['queue_ops.alert.why', 'pushizo/dispatch-ios'],
    ]);
    expect(blocks).toContain('*Cause:* A queue has no consumer');
    expect(textOf(msgs())).not.toContain('payload-');
    const ts = post.ts!;
    // The queue's chart follows the post, into its thread: the three steps of files.uploadV2.
    expect(slack.calls.map(kindOf)).toEqual(['post', 'chart']);
    const [chart] = slack.uploads;
    expect(chart!.requested.filename).toBe('trend-pushizo-dispatch-ios-1h.png');
    expect(chart!.png).toBeDefined();
    expect(Number(chart!.requested.length)).toBe(chart!.png!.length);
    expect(chart!.completed).toMatchObject({ channel_id: 'C0INCIDENT', thread_ts: ts });
    expect(JSON.parse(chart!.completed!.files!)).toEqual([
      { id: chart!.fileId, title: 'Depth of pushizo/dispatch-ios' },
    ]);

    await add(20);
    await tick(bot.escalation, s(60));
    expect(msgs().map(kindOf)).toEqual(['post', 'update']);
    expect(msgs()[1]!.body.ts).toBe(ts);
    expect(textOf(msgs()[1]!.blocks)).toContain('*waiting*: *80 jobs* (above 50 jobs)');

    // Same value: nothing to say.
    await tick(bot.escalation, s(90));
    expect(msgs()).toHaveLength(2);

    // A restart: a new process on the same store neither re-posts nor forgets the alert.
    await bot.escalation.monitor.stop();
    await bot.runtime.close();
    bot = await start();
    const restarted = await tick(bot.escalation, s(120));
    expect(restarted.outcome).toMatchObject({ leader: true, opened: [], firing: [{ id: alertIdOf(post) }] });
    expect(msgs()).toHaveLength(2);

    // renotifyMinutes (2) after the post, unacknowledged: a reminder in the thread.
    await tick(bot.escalation, s(150));
    expect(msgs().map(kindOf)).toEqual(['post', 'update', 'thread']);
    expect(msgs()[2]!.body.thread_ts).toBe(ts);
    expect(msgs()[2]!.body.text).toContain('Still firing and not acknowledged (now 80 jobs)');

    // escalateAfterMinutes (3) after opening: escalateTo is mentioned once, and the message says so.
    await tick(bot.escalation, s(210));
    expect(msgs().slice(3).map(kindOf)).toEqual(['update', 'thread']);
    expect(textOf(msgs()[3]!.blocks)).toContain('Escalated to <!subteam^S0PLATFORM>');
    expect(msgs()[4]!.body.text).toContain('<!subteam^S0PLATFORM>: not acknowledged after 3 min');

    // Drained: one sample under the threshold is "clearing", the second resolves it.
    await queue.drain(true);
    await tick(bot.escalation, s(240));
    expect(textOf(msgs().at(-1)!.blocks)).toContain('back under the threshold: 1 of 2 samples');
    await tick(bot.escalation, s(270));
    const resolved = msgs().at(-1)!;
    expect(kindOf(resolved)).toBe('update');
    expect(resolved.body.ts).toBe(ts);
    expect(textOf(resolved.blocks)).toContain('RESOLVED · backlog · pushizo/dispatch-ios');
    expect(textOf(resolved.blocks)).toContain('Lasted 4m');
    expect(resolved.blocks.some((b) => b.type === 'actions')).toBe(false);

    // Resolving sends the chart again, into the same thread, after the update.
    expect(kindOf(slack.calls.at(-1)!)).toBe('chart');
    expect(charts()).toHaveLength(2);
    expect(slack.uploads[1]!.completed).toMatchObject({ channel_id: 'C0INCIDENT', thread_ts: ts });

    // Exactly one alert message was ever posted.
    expect(msgs().filter((c) => kindOf(c) === 'post')).toHaveLength(1);
    const answer = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0ALICE' },
      via: 'cli',
      words: ['alerts'],
      locale: 'en',
    });
    expect(answer.data).toEqual({ alerts: [] });
  });

  it('a second monitor --once style process during a firing alert posts nothing new', async () => {
    const first = await start();
    await add(60);
    await tick(first.escalation, s(0));
    const second = await start();
    // The first still holds the lease: the second samples nothing and posts nothing.
    const { outcome } = await tick(second.escalation, s(10));
    expect(outcome.leader).toBe(false);
    await first.escalation.monitor.stop();
    const again = await tick(second.escalation, s(30));
    expect(again.outcome.leader).toBe(true);
    expect(slack.calls.filter((c) => kindOf(c) === 'post')).toHaveLength(1);
    if (again.outcome.leader)
      expect(again.outcome.firing.map((a) => a.subject)).toEqual(['pushizo/dispatch-ios']);
  });

  it('the outbox delivers in order after a 500 and a 429 with Retry-After, and the tick never waits on Slack', async () => {
    const bot = await start({ slackTimeoutMs: 0 });
    await add(60);
    slack.failNext(500);
    const first = await tick(bot.escalation, s(0));
    expect(first.drained).toMatchObject({ sent: 0, pending: 2, stoppedBy: 'retry' });

    // Meanwhile the value changes and a reminder falls due: queued behind the post, not before it.
    await add(20);
    bots.clock = s(1);
    await bot.escalation.monitor.tick();
    expect(await bot.runtime.store.escalation.pendingOutbox()).toBe(3);

    // Not yet due (2 s back-off): nothing is tried.
    expect(await bot.escalation.outbox.drain()).toMatchObject({ sent: 0, stoppedBy: 'not-before' });
    expect(slack.calls).toHaveLength(1);

    bots.clock = s(3);
    slack.failNext(429, { retryAfter: 7 });
    expect(await bot.escalation.outbox.drain()).toMatchObject({ sent: 0, stoppedBy: 'retry' });
    bots.clock = s(9);
    expect(await bot.escalation.outbox.drain()).toMatchObject({ sent: 0, stoppedBy: 'not-before' });
    expect(slack.calls.map((c) => c.status)).toEqual([500, 429]);

    // Slack answers again: post first, then its update, each once.
    bots.clock = s(11);
    expect(await bot.escalation.outbox.drain()).toMatchObject({ sent: 3, pending: 0 });
    // The chart goes on its own lane once the messages are out, into the post's thread.
    expect(slack.delivered().map(kindOf)).toEqual(['post', 'update', 'chart']);
    expect(slack.delivered()[1]!.body.ts).toBe(slack.delivered()[0]!.ts);
    expect(slack.uploads[0]!.completed?.thread_ts).toBe(slack.delivered()[0]!.ts);
    expect(textOf(slack.delivered()[1]!.blocks)).toContain('*80 jobs*');

    // Slack hanging does not hold a tick: the tick only queues. Slack answers nothing until the
    // tick is over and checked, this bot's client has no cut-off, and timers are stopped meanwhile,
    // so a tick that waited on Slack (or on a timer) would never end.
    nock.cleanAll();
    const held: (() => void)[] = [];
    nock(SLACK)
      .post(/.*/)
      .reply((_uri, _body, answer) => {
        held.push(() => answer(null, [200, { ok: true }]));
      })
      .persist();
    await add(30);
    bots.clock = s(40);
    await withTimersFrozen(() => bot.escalation.monitor.tick());
    expect(await bot.runtime.store.escalation.pendingOutbox()).toBe(1);
    for (const release of held) release();
  });

  it('with Slack unreachable (connection refused) the posts wait in the outbox, then go out in order', async () => {
    const bot = await start();
    // The same bot's store, with a sender whose Slack does not answer at all.
    const unreachable = createEscalation({
      runtime: bot.runtime,
      logger,
      label: 'test-down',
      slack: createSlackSender(
        createAlertWebClient('xoxb-test', { apiUrl: 'http://127.0.0.1:1/api/' }),
        logger,
        'en',
      ),
    });
    await add(60);
    bots.clock = s(0);
    await bot.escalation.monitor.tick();
    expect(await unreachable.outbox.drain()).toMatchObject({ sent: 0, stoppedBy: 'retry' });
    expect(slack.calls).toHaveLength(0);
    await add(20);
    bots.clock = s(30);
    await bot.escalation.monitor.tick();
    expect(await bot.runtime.store.escalation.pendingOutbox()).toBeGreaterThanOrEqual(2);

    // Slack is back: the post first, then what queued behind it, each once.
    bots.clock = s(40);
    expect(await bot.escalation.outbox.drain()).toMatchObject({ pending: 0 });
    const delivered = slack.delivered().filter((c) => c.method !== 'files.completeUploadExternal');
    expect(delivered.map(kindOf)[0]).toBe('post');
    expect(delivered.filter((c) => kindOf(c) === 'post')).toHaveLength(1);
    expect(textOf(delivered.at(-1)!.blocks)).toContain('*80 jobs*');
  });

  it('a post Slack took but whose answer was lost is found in the channel and adopted, not posted twice', async () => {
    const bot = await start();
    await add(60);
    // Slack keeps the message and answers 500 (a proxy in between, a timeout after the write).
    slack.failNext(500, { posted: true });
    const first = await tick(bot.escalation, s(0));
    expect(first.drained).toMatchObject({ sent: 0, stoppedBy: 'retry' });
    expect(slack.lookups).toHaveLength(0);

    bots.clock = s(3);
    expect(await bot.escalation.outbox.drain()).toMatchObject({ sent: 2, pending: 0 });
    // It looked (the bot's posts since the item was queued, with their metadata) and found it.
    expect(slack.lookups).toHaveLength(1);
    expect(slack.lookups[0]).toMatchObject({ channel: 'C0INCIDENT', include_all_metadata: 'true' });
    const posts = slack.calls.filter((c) => c.method === 'chat.postMessage' && !c.body.thread_ts);
    expect(posts).toHaveLength(1);
    expect(JSON.parse(posts[0]!.body.metadata!)).toMatchObject({
      event_type: 'queue_ops_alert',
      event_payload: { alert_id: expect.stringMatching(/^a-/) },
    });
    const [alert] = await bot.runtime.store.escalation.listAlerts({ status: 'firing' });
    // The message Slack kept at s(0), the first it holds.
    expect(alert!.messageTs).toBe(`${s(0) / 1000}.000001`);
    // What follows goes to that message: the next change updates it in place.
    await add(20);
    await tick(bot.escalation, s(30));
    const update = slack.delivered().find((c) => c.method === 'chat.update');
    expect(update!.body.ts).toBe(alert!.messageTs);
  });

  it('a post claimed by a process that died is looked for first, then posted once when Slack has none', async () => {
    const bot = await start();
    await add(60);
    bots.clock = s(0);
    await bot.escalation.monitor.tick();
    const item = await bot.runtime.store.escalation.nextOutbox();
    // Another replica claimed it and died mid-call; its claim has run out.
    await bot.runtime.store.escalation.claimOutbox(
      item!.seq,
      'replica-that-died',
      new Date(s(-1)).toISOString(),
      new Date(s(-2)).toISOString(),
    );
    expect(await bot.escalation.outbox.drain()).toMatchObject({ pending: 0 });
    expect(slack.lookups).toHaveLength(1);
    expect(slack.calls.filter((c) => c.method === 'chat.postMessage' && !c.body.thread_ts)).toHaveLength(1);
  });

  it('a chart Slack keeps refusing is dropped after 3 tries, and the alert’s update never waits for it', async () => {
    const bot = await start();
    await add(60);
    slack.failUploadNext(500, 3);
    const first = await tick(bot.escalation, s(0));
    expect(first.drained).toMatchObject({ sent: 1, pending: 1 });
    // The value changes while the chart waits for its retry: the update goes out at once.
    await add(20);
    bots.clock = s(1);
    await bot.escalation.monitor.tick();
    expect(await bot.escalation.outbox.drain()).toMatchObject({ sent: 1, pending: 1 });
    // Second try after its 2 s back-off, third after 4 s more: then it is given up.
    bots.clock = s(3);
    expect(await bot.escalation.outbox.drain()).toMatchObject({ sent: 0, pending: 1 });
    bots.clock = s(8);
    expect(await bot.escalation.outbox.drain()).toMatchObject({ sent: 0, dropped: 1, pending: 0 });
    expect(slack.delivered().map(kindOf)).toEqual(['post', 'update']);
    expect(slack.uploads).toHaveLength(0);
  });

  it('ack through the command (operator role, audited) stops the reminders and updates the message', async () => {
    const bot = await start();
    await add(60);
    await tick(bot.escalation, s(0));
    const alertId = (
      slack.calls[0]!.blocks.find((b) => b.type === 'actions') as { elements: { value: string }[] }
    ).elements[0]!.value;

    const viewer = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0BOB' },
      via: 'cli',
      words: ['ack', alertId],
      locale: 'en',
    });
    expect(viewer.ok).toBe(false);
    expect(viewer.message.text).toContain('You need the `operator` role');

    const acked = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0ALICE' },
      via: 'cli',
      words: ['ack', alertId],
      locale: 'en',
    });
    expect(acked.ok).toBe(true);
    expect(acked.data).toMatchObject({ alert: { id: alertId, ackedBy: 'U0ALICE' } });
    await bot.escalation.outbox.drain();
    const update = slack.calls.at(-1)!;
    expect(kindOf(update)).toBe('update');
    expect(textOf(update.blocks)).toContain('Acknowledged by <@U0ALICE>');
    const audit = await bot.runtime.audit.recent(5);
    expect(audit.map((e) => [e.action, e.actorId, e.outcome])).toContainEqual([
      'command.ack',
      'U0ALICE',
      'ok',
    ]);

    // Past renotify and escalation times: acknowledged, so no reminder and no mention.
    const before = slack.calls.length;
    await tick(bot.escalation, s(400));
    expect(slack.calls.slice(before).filter((c) => kindOf(c) === 'thread')).toEqual([]);

    const snoozed = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0ALICE' },
      via: 'cli',
      words: ['snooze', alertId, 'forever'],
      locale: 'en',
    });
    expect(snoozed.message.text).toContain(
      '`forever` is not a duration. Valid: a duration like 30m, 2h or 1d',
    );
    const unknown = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0ALICE' },
      via: 'cli',
      words: ['ack', 'a-00000000'],
      locale: 'en',
    });
    expect(unknown.message.text).toContain('There is no alert `a-00000000`');
  });
});

describe('alert lifecycle: the alerts list and a typed snooze', () => {
  let bot: Awaited<ReturnType<typeof start>>;
  let open: { id: string; subject: string; severity: string } | undefined;
  const ask = (actor: string, ...words: string[]) =>
    bot.runtime.dispatcher.handle({ actor: { id: actor }, via: 'cli', words, locale: 'en' });

  beforeAll(async () => {
    await openWorld();
    bot = await start();
    await add(60);
    await tick(bot.escalation, s(0));
  });
  afterAll(closeWorld);

  it('alerts lists what fires', async () => {
    const listed = await ask('U0BOB', 'alerts');
    expect(listed.ok).toBe(true);
    [open] = (listed.data as { alerts: { id: string; subject: string; severity: string }[] }).alerts;
    expect(open).toMatchObject({ subject: 'pushizo/dispatch-ios', severity: 'critical' });
    expect(listed.message.text + textOf(listed.message.blocks)).toContain('pushizo/dispatch-ios');
  });

  it('a typed snooze needs the operator role', async () => {
    expect((await ask('U0BOB', 'snooze', open!.id, '30m')).message.text).toContain(
      'You need the `operator` role',
    );
  });

  it('an operator’s typed snooze holds the alert for its duration', async () => {
    const snoozed = await ask('U0ALICE', 'snooze', open!.id, '30m');
    expect(snoozed.ok).toBe(true);
    expect(snoozed.data).toMatchObject({
      alert: { id: open!.id, snoozedUntil: new Date(s(30 * 60)).toISOString() },
    });
  });

  it('a typed snooze is audited', async () => {
    const audit = await bot.runtime.audit.recent(5);
    expect(audit.map((e) => [e.action, e.actorId, e.outcome])).toContainEqual([
      'command.snooze',
      'U0ALICE',
      'ok',
    ]);
  });

  it('a snooze holds the reminders until it runs out', async () => {
    // renotifyMinutes is 2 and escalation 3: snoozed for 30, nothing goes to the thread.
    await bot.escalation.outbox.drain();
    const before = slack.calls.length;
    await tick(bot.escalation, s(10 * 60));
    await tick(bot.escalation, s(29 * 60));
    expect(slack.calls.slice(before).filter((c) => kindOf(c) === 'thread')).toEqual([]);
    // Past it, the reminders come back.
    await tick(bot.escalation, s(31 * 60));
    expect(slack.calls.slice(before).filter((c) => kindOf(c) === 'thread').length).toBeGreaterThan(0);
  });
});
