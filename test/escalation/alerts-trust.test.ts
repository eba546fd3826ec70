import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { QueueOps } from '../../src/app.js';
import { configSchema } from '../../src/config/schema.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { backlogRule } from '../helpers/config-file.js';
import { onlyNockBeyondLoopback } from '../helpers/no-network.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { botProcesses } from './bot-processes.js';
import { fakeSlack, kindOf } from './fake-slack.js';

/**
 * Alerts people trust: paused queues, silences, `ack all`, per-system alert channels and grouped
 * messages, through real BullMQ queues, the monitor's tick and a nock'd Slack.
 */
const redisUrl = testRedisUrl();
const SLACK = 'https://slack.trust.test';
const T0 = Date.parse('2030-04-01T09:00:00.000Z');

const NAMES = ['dispatch-ios', 'dispatch-android', 'maintenance'];
let dir: string;
let prefix: string;
let queues: Record<string, Queue>;
let slack: ReturnType<typeof fakeSlack>;
const bots = botProcesses(SLACK);

onlyNockBeyondLoopback();

/** A store directory, the three queues under a prefix of their own, the clock at T0, Slack behind nock. */
async function openWorld() {
  dir = mkdtempSync(join(tmpdir(), 'queue-ops-trust-'));
  prefix = randomName('trust');
  queues = {};
  for (const name of NAMES) {
    queues[name] = new Queue(name, { connection: connectionFor(redisUrl), prefix });
    await queues[name].waitUntilReady();
  }
  bots.clock = T0;
  slack = fakeSlack(SLACK, { now: () => bots.clock });
}

async function closeWorld() {
  await bots.closeAll();
  for (const queue of Object.values(queues)) await queue.close();
  await deletePrefix(redisUrl, prefix);
  nock.cleanAll();
  rmSync(dir, { recursive: true, force: true });
}

/** The config under test; `escalation` and `slack` merge over a one-system default. */
const config = (
  options: {
    escalation?: Record<string, unknown>;
    system?: Record<string, unknown>;
    /** A second system, `billing`, on the same Redis under its own prefix (`invoices`). */
    billing?: boolean;
  } = {},
) =>
  configSchema.parse({
    slack: { incidentChannel: 'C0INCIDENT', allowedChannels: ['C0INCIDENT'] },
    store: `sqlite:${join(dir, 'queue-ops.db')}`,
    roles: { viewer: ['*'], operator: ['U0ALICE'] },
    systems: [
      { name: 'pushizo', type: 'bullmq', redis: redisUrl, prefix, queues: NAMES, ...options.system },
      ...(options.billing
        ? [{ name: 'billing', type: 'bullmq', redis: redisUrl, prefix: `${prefix}b`, queues: ['invoices'] }]
        : []),
    ],
    escalation: { intervalSeconds: 30, clearAfterSamples: 2, ...options.escalation },
  });

const start = (cfg: ReturnType<typeof config>) => bots.start(cfg);
const tick = bots.tick;

const add = (queue: string, n: number) =>
  queues[queue]!.addBulk(Array.from({ length: n }, (_, i) => ({ name: 'send-push', data: { n: i } })));
const s = (seconds: number) => T0 + seconds * 1000;
const msgs = () => slack.delivered().filter((c) => kindOf(c) !== 'chart');

const ask = (runtime: QueueOps, words: string[], user = 'U0ALICE') =>
  runtime.dispatcher.handle({ actor: { id: user }, via: 'cli', words, locale: 'en' });
const backlog = backlogRule(['pushizo/*']);

/** The alert ids an alert message's buttons carry, block by block (Ack's value). */
/** The alert ids of a message's per-alert button rows (its cause's row, Why? and fixes, is not one). */
const buttonIds = (call: { blocks: Record<string, unknown>[] }) =>
  call.blocks
    .filter((b) => b.type === 'actions')
    .map((b) => (b as { elements: { action_id: string; value: string }[] }).elements[0]!)
    .filter((first) => first.action_id === 'queue_ops.alert.ack')
    .map((first) => first.value);

describe('alerts people trust (real BullMQ, monitor ticks, nock’d Slack)', () => {
  beforeEach(openWorld);
  afterEach(closeWorld);

  /** Five jobs wait in dispatch-ios and in maintenance, which is paused; nobody consumes either. */
  const pausedMaintenance = async () => {
    await add('dispatch-ios', 5);
    await add('maintenance', 5);
    await queues.maintenance!.pause();
  };

  it('the default no-workers rule skips a paused queue with jobs waiting', async () => {
    await pausedMaintenance();
    // The default rules (no `rules:`), nobody consuming either queue, for longer than `for: 1m`.
    const bot = await start(config({ escalation: { groupBy: 'none' } }));
    let last: Awaited<ReturnType<typeof tick>> | undefined;
    for (const at of [0, 30, 60, 90]) last = await tick(bot.escalation, s(at));
    const firing = last!.outcome.leader ? last!.outcome.firing : [];
    expect(firing.map((a) => `${a.rule} ${a.subject}`)).toEqual(['no-workers pushizo/dispatch-ios']);
    expect(JSON.stringify(msgs())).not.toContain('pushizo/maintenance');
  });

  it('a rule with includePaused: true watches a paused queue', async () => {
    await pausedMaintenance();
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
    const again = await tick(watching.escalation, s(400));
    expect(again.outcome.leader && again.outcome.opened.map((a) => a.subject)).toEqual([
      'pushizo/maintenance',
    ]);
  });

  it('an alertChannel that is not a channel id is refused, the config error naming its path', () => {
    expect(() => config({ system: { slack: { alertChannel: '#pushizo' } } })).toThrow(/alertChannel/);
  });

  it('by default alerts of one system and severity share one message, updated in place as alerts join, are acked and resolve', async () => {
    const bot = await start(config({ escalation: { renotifyMinutes: 2, rules: [backlog] } }));
    await add('dispatch-ios', 60);
    await add('dispatch-android', 60);
    const first = await tick(bot.escalation, s(0));
    const opened = first.outcome.leader ? first.outcome.opened : [];
    expect(opened).toHaveLength(2);
    // One post for both, listing each with its own buttons.
    expect(msgs().map(kindOf)).toEqual(['post']);
    const post = msgs()[0]!;
    const text = JSON.stringify(post.blocks);
    expect(text).toContain('CRITICAL · 2 alerts firing · pushizo');
    expect(text).toContain('pushizo/dispatch-ios');
    expect(text).toContain('pushizo/dispatch-android');
    expect(buttonIds(post).sort()).toEqual(opened.map((a) => a.id).sort());
    // Both alerts' charts go into the group's thread.
    expect(slack.uploads.map((u) => u.completed?.thread_ts)).toEqual([post.ts, post.ts]);

    // A third joins a tick later: the same message is updated, nothing new is posted.
    await add('maintenance', 60);
    await tick(bot.escalation, s(30));
    expect(msgs().map(kindOf)).toEqual(['post', 'update']);
    expect(msgs()[1]!.body.ts).toBe(post.ts);
    expect(JSON.stringify(msgs()[1]!.blocks)).toContain('CRITICAL · 3 alerts firing · pushizo');
    expect(buttonIds(msgs()[1]!)).toHaveLength(3);

    // A button's ack updates the group's message in place.
    const ios = opened.find((a) => a.subject === 'pushizo/dispatch-ios')!;
    await ask(bot.runtime, ['ack', ios.id]);
    await bot.escalation.outbox.drain();
    const acked = msgs().at(-1)!;
    expect([kindOf(acked), acked.body.ts]).toEqual(['update', post.ts]);
    expect(JSON.stringify(acked.blocks)).toContain('Acknowledged by <@U0ALICE>');

    // A reminder for the others goes into the group's thread, naming its alert.
    await tick(bot.escalation, s(150));
    const reminders = msgs().filter((c) => kindOf(c) === 'thread');
    expect(reminders.length).toBeGreaterThan(0);
    for (const r of reminders) expect(r.body.thread_ts).toBe(post.ts);
    expect(reminders.map((r) => r.body.text).join('\n')).toContain('backlog · pushizo/maintenance: ');
    expect(reminders.map((r) => r.body.text).join('\n')).not.toContain('pushizo/dispatch-ios');

    // One resolves: checked off in the same message; all resolve: a resolved message, no buttons.
    await queues['dispatch-ios']!.drain(true);
    await tick(bot.escalation, s(180));
    await tick(bot.escalation, s(210));
    const partly = msgs().at(-1)!;
    expect(partly.body.ts).toBe(post.ts);
    expect(JSON.stringify(partly.blocks)).toContain('CRITICAL · 2 alerts firing · pushizo');
    expect(JSON.stringify(partly.blocks)).toMatch(/backlog · pushizo\/dispatch-ios resolved after/);
    for (const q of ['dispatch-android', 'maintenance']) await queues[q]!.drain(true);
    await tick(bot.escalation, s(240));
    await tick(bot.escalation, s(270));
    const done = msgs().at(-1)!;
    expect([kindOf(done), done.body.ts]).toEqual(['update', post.ts]);
    expect(JSON.stringify(done.blocks)).toContain('RESOLVED · 3 alerts · pushizo');
    expect(done.blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(msgs().filter((c) => kindOf(c) === 'post')).toHaveLength(1);
  });

  it('grouped by severity (the default before causes), different severities get their own messages', async () => {
    const rules = [
      backlog,
      { name: 'big', queues: ['pushizo/dispatch-*'], metric: 'waiting', above: 10, severity: 'warning' },
    ];
    // The default is now `[cause, system]` (one cause, one message); the old default stays valid.
    const bot = await start(config({ escalation: { groupBy: ['system', 'severity'], rules } }));
    await add('dispatch-ios', 60);
    await add('dispatch-android', 60);
    await tick(bot.escalation, s(0));
    const posts = msgs().filter((c) => kindOf(c) === 'post');
    expect(posts.map((p) => String(p.body.text)).sort()).toEqual([
      'CRITICAL: 2 alerts firing on pushizo',
      'WARNING: 2 alerts firing on pushizo',
    ]);
  });

  it('a burst of more than maxAlertsPerMessage alerts in one tick is one summary message pointing to `alerts`', async () => {
    const bot = await start(config({ escalation: { maxAlertsPerMessage: 2, rules: [backlog] } }));
    for (const q of NAMES) await add(q, 60);
    await tick(bot.escalation, s(0));
    expect(msgs().map(kindOf)).toEqual(['post']);
    const summary = msgs()[0]!;
    const text = JSON.stringify(summary.blocks);
    // No worker consumes these queues: the storm is one cause's, and its message leads with it.
    expect(text).toContain('3 queues have no consumer');
    expect(text).toContain('CRITICAL · 3 alerts firing · pushizo');
    expect(text).toContain('*By cause*: No workers 3');
    expect(text).toContain('*By rule*: backlog 3');
    expect(text).toContain('`/queue alerts` lists them all');
    expect(text).toContain('/queue ack all pushizo');
    // No per-alert buttons in a storm's summary: only its cause's row (Why?).
    expect(buttonIds(summary)).toEqual([]);
    const rows = summary.blocks.filter((b) => b.type === 'actions') as {
      elements: { action_id: string }[];
    }[];
    expect(rows.flatMap((r) => r.elements.map((e) => e.action_id))).toEqual(['queue_ops.alert.why']);
    const listed = await ask(bot.runtime, ['alerts']);
    expect((listed.data as { alerts: unknown[] }).alerts).toHaveLength(3);
  });

  it('a silence is shown on the grouped message: its silenced alerts are counted, not listed', async () => {
    const bot = await start(config({ escalation: { rules: [backlog] } }));
    const made = await ask(bot.runtime, ['silence', 'pushizo/maintenance', '1h', 'planned', 'migration']);
    const id = (made.data as { silence: { id: string } }).silence.id;
    await add('dispatch-ios', 60);
    await add('maintenance', 60);
    await tick(bot.escalation, s(0));
    expect(msgs().map(kindOf)).toEqual(['post']);
    const text = JSON.stringify(msgs()[0]!.blocks);
    expect(text).toContain('CRITICAL · 1 alert firing · pushizo');
    expect(text).toContain('1 more alert is silenced and not listed.');
    expect(text).toContain(`Silenced by \`${id}\``);
    expect(text).toContain('planned migration');
    expect(buttonIds(msgs()[0]!)).toHaveLength(1);
    // Lifted: the next tick adds it to the same message.
    await ask(bot.runtime, ['unsilence', id]);
    await tick(bot.escalation, s(30));
    const after = msgs().at(-1)!;
    expect([kindOf(after), after.body.ts]).toEqual(['update', msgs()[0]!.ts]);
    expect(JSON.stringify(after.blocks)).toContain('CRITICAL · 2 alerts firing · pushizo');
    expect(JSON.stringify(after.blocks)).not.toContain('silenced and not listed');
  });
});

describe('alerts people trust: a silence over alerts not posted yet', () => {
  let bot: Awaited<ReturnType<typeof start>>;
  let id: string;
  beforeAll(async () => {
    await openWorld();
    bot = await start(config({ escalation: { groupBy: 'none', rules: [backlog] } }));
  });
  afterAll(closeWorld);

  it('silence answers with its id, its pattern and when it ends', async () => {
    const silenced = await ask(bot.runtime, ['silence', 'pushizo/dispatch-*', '2h', 'provider', 'outage']);
    expect(silenced.ok).toBe(true);
    id = (silenced.data as { silence: { id: string } }).silence.id;
    expect(id).toMatch(/^s-[0-9a-f]{8}$/);
    // `*` is kept from turning into bold by zero-width spaces around it.
    expect(silenced.message.text.replace(/\u200b/g, '')).toBe(
      `Silence \`${id}\` on \`pushizo/dispatch-*\` until 2030-04-01 11:00 UTC; 0 open alerts silenced now.`,
    );
  });

  it('the alerts it covers fire marked as silenced by it, the others unmarked', async () => {
    await add('dispatch-ios', 60);
    await add('maintenance', 60);
    const first = await tick(bot.escalation, s(0));
    expect(
      first.outcome.leader && first.outcome.firing.map((a) => [a.subject, a.silencedBy ?? null]),
    ).toEqual([
      ['pushizo/dispatch-ios', id],
      ['pushizo/maintenance', null],
    ]);
  });

  it('only the alerts no silence covers are posted', () => {
    expect(msgs().map(kindOf)).toEqual(['post']);
    expect(JSON.stringify(msgs()[0]!.blocks)).toContain('backlog · pushizo/maintenance');
  });

  it('silences lists it with who made it and why', async () => {
    const list = await ask(bot.runtime, ['silences']);
    expect(list.data).toEqual({
      silences: [
        expect.objectContaining({
          id,
          pattern: 'pushizo/dispatch-*',
          reason: 'provider outage',
          createdBy: 'U0ALICE',
        }),
      ],
    });
    expect(JSON.stringify(list.message.blocks)).toContain('provider outage');
  });

  it('silence and silences are written to the audit trail before they answer', async () => {
    const audit = await bot.runtime.store.listAudit({ newestFirst: true, limit: 10 });
    expect(audit.map((e) => [e.action, e.outcome])).toEqual(
      expect.arrayContaining([
        ['command.silence', 'ok'],
        ['command.silences', 'ok'],
      ]),
    );
  });

  it('a silenced alert has no reminder, many minutes later', async () => {
    await tick(bot.escalation, s(60 * 40));
    expect(
      msgs()
        .filter((c) => kindOf(c) !== 'update')
        .map((c) => c.body.thread_ts ?? 'post'),
    ).toEqual(['post', msgs()[0]!.ts]);
  });

  it('unsilence lifts it', async () => {
    const lifted = await ask(bot.runtime, ['unsilence', id]);
    expect(lifted.message.text.replace(/\u200b/g, '')).toContain(
      `Silence \`${id}\` on \`pushizo/dispatch-*\` lifted`,
    );
  });

  it('a second unsilence says it was already lifted or over', async () => {
    expect(await ask(bot.runtime, ['unsilence', id])).toMatchObject({
      message: { text: `Silence \`${id}\` was already lifted or over.` },
    });
  });

  it('once lifted, the next tick posts the alert', async () => {
    await tick(bot.escalation, s(60 * 40 + 30));
    const posts = msgs().filter((c) => kindOf(c) === 'post');
    expect(posts).toHaveLength(2);
    expect(JSON.stringify(posts[1]!.blocks)).toContain('backlog · pushizo/dispatch-ios');
  });

  it('unsilence is audited with the silence’s id', async () => {
    const entries = await bot.runtime.store.listAudit({ newestFirst: true, limit: 10 });
    expect(entries.find((e) => e.action === 'command.unsilence')?.params).toMatchObject({ args: [id] });
  });
});

describe('alerts people trust: a silence over a posted alert', () => {
  let bot: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    await openWorld();
    bot = await start(config({ escalation: { groupBy: 'none', renotifyMinutes: 2, rules: [backlog] } }));
    await add('dispatch-ios', 60);
    await tick(bot.escalation, s(0));
  });
  afterAll(closeWorld);

  it('counts the posted alert in its answer', async () => {
    expect(msgs().map(kindOf)).toEqual(['post']);
    const answer = await ask(bot.runtime, ['silence', 'backlog@pushizo', '30m']);
    expect(answer.message.text).toContain('1 open alert silenced now');
  });

  it('the alert’s message then says it is silenced', async () => {
    await bot.escalation.outbox.drain();
    expect(msgs().map(kindOf)).toEqual(['post', 'update']);
    expect(JSON.stringify(msgs()[1]!.blocks)).toContain('Silenced by');
  });

  it('stops its reminders', async () => {
    // Past renotifyMinutes: no reminder while silenced.
    await tick(bot.escalation, s(600));
    expect(msgs().filter((c) => kindOf(c) === 'thread')).toEqual([]);
  });
});

describe('alerts people trust: bad silence input gets one line', () => {
  let bot: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    await openWorld();
    bot = await start(config({ escalation: { groupBy: 'none', renotifyMinutes: 2, rules: [backlog] } }));
  });
  afterAll(closeWorld);

  it('a pattern with an unknown system names the valid ones', async () => {
    const bad = await ask(bot.runtime, ['silence', 'pushzio/dispatch-*', '2h']);
    expect(bad.ok).toBe(false);
    expect(bad.message.text).toContain('There is no system called `pushzio`');
    expect(bad.message.text).toContain('pushizo');
  });

  it('an unknown rule names the valid rules', async () => {
    const badRule = await ask(bot.runtime, ['silence', 'nope@pushizo', '2h']);
    expect(badRule.message.text).toBe('There is no rule `nope`. Valid: backlog.');
  });

  it('a word that is no duration says what a duration is', async () => {
    const badDuration = await ask(bot.runtime, ['silence', 'pushizo', 'soon']);
    expect(badDuration.message.text).toContain('`soon` is not a duration. Valid: a duration like 30m');
  });

  it('unsilence of an unknown id says where ids come from', async () => {
    const unknown = await ask(bot.runtime, ['unsilence', 's-00000000']);
    expect(unknown.message.text).toBe(
      'There is no silence `s-00000000`. Valid: an id from `/queue silences`.',
    );
  });

  it('only operators may silence', async () => {
    const viewer = await ask(bot.runtime, ['silence', 'pushizo', '2h'], 'U0VIEWER');
    expect(viewer.ok).toBe(false);
  });
});

describe('alerts people trust: ack all <system>', () => {
  let bot: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    await openWorld();
    bot = await start(config({ escalation: { groupBy: 'none', rules: [backlog] } }));
    await add('dispatch-ios', 60);
    await add('dispatch-android', 60);
    await tick(bot.escalation, s(0));
  });
  afterAll(closeWorld);

  it('acks every open alert of the system in one step', async () => {
    expect(msgs().map(kindOf)).toEqual(['post', 'post']);
    const acked = await ask(bot.runtime, ['ack', 'all', 'pushizo']);
    expect(acked.message.text).toBe('2 open alerts of `pushizo` acknowledged by U0ALICE.');
    expect((acked.data as { acked: { ackedBy: string }[] }).acked.map((a) => a.ackedBy)).toEqual([
      'U0ALICE',
      'U0ALICE',
    ]);
  });

  it('their messages then say who acknowledged them', async () => {
    await bot.escalation.outbox.drain();
    const updates = msgs().filter((c) => kindOf(c) === 'update');
    expect(updates.map((u) => u.body.ts).sort()).toEqual(
      msgs()
        .filter((c) => kindOf(c) === 'post')
        .map((p) => p.ts)
        .sort(),
    );
    for (const u of updates) expect(JSON.stringify(u.blocks)).toContain('Acknowledged by <@U0ALICE>');
  });

  it('again, with nothing left to acknowledge, says so', async () => {
    expect((await ask(bot.runtime, ['ack', 'all', 'pushizo'])).message.text).toBe(
      '`pushizo` has no unacknowledged open alert.',
    );
  });

  it('with an unknown system names it', async () => {
    expect((await ask(bot.runtime, ['ack', 'all', 'pushiz'])).message.text).toContain(
      'There is no system called `pushiz`',
    );
  });

  it('is audited', async () => {
    const audit = await bot.runtime.store.listAudit({ newestFirst: true, limit: 5 });
    expect(audit.some((e) => e.action === 'command.ack' && JSON.stringify(e.params).includes('all'))).toBe(
      true,
    );
  });
});

describe('alerts people trust: a system with its own alertChannel', () => {
  let bot: Awaited<ReturnType<typeof start>>;
  let invoices: Queue;
  let posts: ReturnType<typeof msgs>;
  beforeAll(async () => {
    await openWorld();
    invoices = new Queue('invoices', { connection: connectionFor(redisUrl), prefix: `${prefix}b` });
    bot = await start(
      config({
        billing: true,
        system: { slack: { alertChannel: 'C0PUSHIZO' } },
        escalation: { groupBy: 'none', renotifyMinutes: 2, rules: [{ ...backlog, queues: ['*'] }] },
      }),
    );
    await add('dispatch-ios', 60);
    await invoices.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: 'invoice', data: { i } })));
    await tick(bot.escalation, s(0));
  });
  afterAll(async () => {
    await invoices?.obliterate({ force: true });
    await invoices?.close();
    await closeWorld();
  });

  it('gets its alerts there, while the other system’s go to the incident channel', () => {
    posts = msgs().filter((c) => kindOf(c) === 'post');
    expect(
      posts.map((p) => [p.body.channel, JSON.stringify(p.blocks).includes('pushizo/dispatch-ios')]),
    ).toEqual(
      expect.arrayContaining([
        ['C0PUSHIZO', true],
        ['C0INCIDENT', false],
      ]),
    );
  });

  it('gets its alert’s reminder and update in the thread in its own channel', async () => {
    await add('dispatch-ios', 10);
    await tick(bot.escalation, s(150));
    const pushizoPost = posts.find((p) => p.body.channel === 'C0PUSHIZO')!;
    const followUps = msgs().filter(
      (c) => kindOf(c) !== 'post' && (c.body.ts ?? c.body.thread_ts) === pushizoPost.ts,
    );
    expect(followUps.map(kindOf).sort()).toEqual(['thread', 'update']);
    for (const c of followUps) expect(c.body.channel).toBe('C0PUSHIZO');
  });

  it('gets its alert’s chart in its own channel', () => {
    expect(slack.uploads.map((u) => u.completed?.channel_id).sort()).toEqual(['C0INCIDENT', 'C0PUSHIZO']);
  });
});
