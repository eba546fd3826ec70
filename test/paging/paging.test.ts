import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectSecrets } from '../../src/app.js';
import { wordsForAction } from '../../src/blocks/action-ids.js';
import { homeView } from '../../src/blocks/home.js';
import { parseConfig } from '../../src/config/load.js';
import { type ConfigInput, configSchema } from '../../src/config/schema.js';
import { alertJson } from '../../src/escalation/alerts.js';
import { createLogger } from '../../src/lib/logger.js';
import { handlePagerDutyWebhook } from '../../src/transports/http/pagerduty.js';
import { readiness } from '../../src/transports/http/routes.js';
import { botProcesses } from '../escalation/bot-processes.js';
import { fakeSlack, kindOf } from '../escalation/fake-slack.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { backlogRule, envRef } from '../helpers/config-file.js';
import { onlyNockBeyondLoopback } from '../helpers/no-network.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { type PagerStandIn, pagerDutyDelivery, startPagerStandIn } from './pager-stand-in.js';

/**
 * Paging against real BullMQ queues (the alert's condition), a real SQLite store shared by the bot
 * processes, Slack behind nock, and PagerDuty and JSM as a loopback stand-in that counts what
 * arrives and folds triggers by key as the services do.
 */
const redisUrl = testRedisUrl();
const SLACK = 'https://slack.paging.test';
const T0 = Date.parse('2030-03-01T09:00:00.000Z');
const ROUTING_KEY = 'R0UTINGKEY0123456789abcdef012345';
const API_KEY = 'genie-0000-1111';
const SECRET = 'whsec-paging-test';
const logger = createLogger({ level: 'silent' });

let dir: string;
let prefix: string;
let queues: Queue[];
let slack: ReturnType<typeof fakeSlack>;
let pd: PagerStandIn;
const bots = botProcesses(SLACK);

onlyNockBeyondLoopback();

const s = (seconds: number) => T0 + seconds * 1000;
const iso = (seconds: number) => new Date(s(seconds)).toISOString();
const textOf = (value: unknown) => JSON.stringify(value);
const msgs = () => slack.calls.filter((c) => kindOf(c) !== 'chart');
const threads = () => msgs().filter((c) => kindOf(c) === 'thread');

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'queue-ops-paging-'));
  prefix = randomName('page');
  queues = ['dispatch-ios', 'dispatch-android'].map(
    (name) => new Queue(name, { connection: connectionFor(redisUrl), prefix }),
  );
  await Promise.all(queues.map((q) => q.waitUntilReady()));
  bots.clock = T0;
  slack = fakeSlack(SLACK, { now: () => bots.clock });
  pd = await startPagerStandIn({ routingKey: ROUTING_KEY, apiKey: API_KEY });
});

afterEach(async () => {
  await bots.closeAll();
  await Promise.all(queues.map((q) => q.close()));
  await deletePrefix(redisUrl, prefix);
  await pd.close();
  nock.cleanAll();
  rmSync(dir, { recursive: true, force: true });
});

type PagingInput = NonNullable<ConfigInput['paging']>;

const config = (paging: PagingInput, escalation: Partial<NonNullable<ConfigInput['escalation']>> = {}) =>
  configSchema.parse({
    slack: { incidentChannel: 'C0INCIDENT', allowedChannels: ['C0INCIDENT'] },
    store: `sqlite:${join(dir, 'queue-ops.db')}`,
    roles: { viewer: ['*'], operator: ['U0ALICE', 'U0BOB'] },
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
      renotifyMinutes: 2,
      escalateAfterMinutes: 3,
      escalateTo: ['S0PLATFORM'],
      clearAfterSamples: 2,
      rules: [backlogRule(['pushizo/dispatch-*'])],
      ...escalation,
    },
    paging,
  });

const pagerDuty = (extra: Record<string, unknown> = {}) => ({
  name: 'infra-oncall',
  type: 'pagerduty' as const,
  routingKey: ROUTING_KEY,
  url: pd.pagerDutyUrl,
  match: { rules: ['backlog'] },
  ...extra,
});
const jsm = (extra: Record<string, unknown> = {}) => ({
  name: 'jsm-oncall',
  type: 'jsm' as const,
  apiKey: API_KEY,
  url: pd.jsmUrl,
  match: { severities: ['critical' as const] },
  ...extra,
});

const add = (n: number, queue = 0) =>
  queues[queue]!.addBulk(
    Array.from({ length: n }, (_, i) => ({ name: 'send-push', data: { secret: `payload-${i}` } })),
  );
const drainQueue = (queue = 0) => queues[queue]!.drain();

describe('paging: a page per alert message, sent once, acknowledged and resolved with it', () => {
  it('triggers after afterMinutes, acknowledges when acked in Slack, resolves when the alert does: one key', async () => {
    const bot = await bots.start(config([pagerDuty({ afterMinutes: 1 }), jsm()]));
    await bots.tick(bot.escalation, s(0));
    await add(60);
    await bots.tick(bot.escalation, s(30));
    const [alert] = await bot.runtime.alerts.open();
    const key = `queue-ops-${alert!.id}`;
    // JSM pages at once (afterMinutes 0); PagerDuty waits a minute from openedAt.
    expect(pd.jsm().map((r) => [r.path, r.body.alias])).toEqual([['/jsm/v2/alerts', key]]);
    expect(pd.jsm()[0]!.authorization).toBe(`GenieKey ${API_KEY}`);
    expect(pd.pagerDuty()).toHaveLength(0);

    await bots.tick(bot.escalation, s(60));
    expect(pd.pagerDuty()).toHaveLength(0);
    await bots.tick(bot.escalation, s(90));
    expect(pd.pagerDuty().map((r) => r.body.event_action)).toEqual(['trigger']);
    const trigger = pd.pagerDuty()[0]!.body as {
      payload: { summary: string };
      links: { href: string }[];
    };
    expect(trigger).toMatchObject({
      routing_key: ROUTING_KEY,
      dedup_key: key,
      payload: {
        source: 'pushizo/dispatch-ios',
        severity: 'critical',
        custom_details: { value: 60, threshold: 50, since: iso(30) },
      },
    });
    // The page names the cause the alert opened with (issue 37 §2, issue 36 §3): no worker consumes it.
    expect(trigger.payload.summary).toBe(
      'A queue has no consumer: 60 waiting on dispatch-ios with no worker consuming it',
    );
    expect(trigger.links[0]!.href).toMatch(/^https:\/\/slack\.com\/archives\/C0INCIDENT\/p\d+$/);
    expect(textOf(trigger)).not.toContain('payload-');
    // The message says who was paged: both pagers.
    const shown = textOf(msgs().at(-1)!.blocks);
    expect(shown).toContain('Paged infra-oncall at 2030-03-01 09:01 UTC');
    expect(shown).toContain('Paged jsm-oncall at 2030-03-01 09:00 UTC');
    // A pager matches: the alert has a Page button, its value the alert id.
    expect(shown).toContain(`"action_id":"queue_ops.alert.page","value":"${alert!.id}"`);

    // Acknowledged in Slack (the ack command's service): both pages are acknowledged, once.
    await bot.runtime.alerts.ack(alert!.id, 'U0ALICE');
    await bot.escalation.outbox.drain();
    expect(pd.pagerDuty().map((r) => [r.body.event_action, r.body.dedup_key])).toEqual([
      ['trigger', key],
      ['acknowledge', key],
    ]);
    expect(pd.jsm().map((r) => r.path)).toEqual([
      '/jsm/v2/alerts',
      `/jsm/v2/alerts/${key}/acknowledge?identifierType=alias`,
    ]);
    await bots.tick(bot.escalation, s(120));
    expect(pd.pagerDuty()).toHaveLength(2);

    // The queue drains: the monitor resolves the alert, and with it both pages.
    await drainQueue();
    await bots.tick(bot.escalation, s(150));
    await bots.tick(bot.escalation, s(180));
    expect(pd.pagerDuty().map((r) => [r.body.event_action, r.body.dedup_key])).toEqual([
      ['trigger', key],
      ['acknowledge', key],
      ['resolve', key],
    ]);
    expect(
      pd
        .jsm()
        .map((r) => r.path)
        .at(-1),
    ).toBe(`/jsm/v2/alerts/${key}/close?identifierType=alias`);
    expect([...pd.incidents.values()]).toEqual([
      { service: 'jsm', key, status: 'resolved', triggers: 1 },
      { service: 'pagerduty', key, status: 'resolved', triggers: 1 },
    ]);
    await bots.tick(bot.escalation, s(210));
    expect(pd.requests).toHaveLength(6);

    const stored = await bot.runtime.store.escalation.getAlert(alert!.id);
    expect(alertJson(stored!).pages).toEqual([
      { pager: 'jsm-oncall', at: iso(30), acknowledgedBy: 'U0ALICE', acknowledgedAt: expect.any(String) },
      { pager: 'infra-oncall', at: iso(90), acknowledgedBy: 'U0ALICE', acknowledgedAt: expect.any(String) },
    ]);

    // Paged by hand once resolved: the answer is about paging, not about acknowledging.
    const late = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0ALICE' },
      via: 'slack',
      channel: 'C0INCIDENT',
      words: ['page', alert!.id],
      locale: 'en',
    });
    expect(late.message.text).toBe(`Alert \`${alert!.id}\` is resolved; there is nobody to page for it.`);
    expect(pd.requests).toHaveLength(6);
  });

  it('never pages while the alert is acknowledged, snoozed or silenced; `page` pages at once', async () => {
    const bot = await bots.start(config([pagerDuty({ afterMinutes: 2 })]));
    await add(60);
    await add(60, 1);
    await bots.tick(bot.escalation, s(0));
    const [ios, android] = await bot.runtime.alerts.open();
    await bot.runtime.alerts.snooze(ios!.id, 'U0ALICE', 60 * 60_000);
    await bot.runtime.alerts.ack(android!.id, 'U0BOB');
    await bots.tick(bot.escalation, s(150));
    await bots.tick(bot.escalation, s(300));
    expect(pd.pagerDuty()).toHaveLength(0);

    // By hand, without waiting: `page <alert-id>` (every matching pager).
    const paged = await bot.runtime.alerts.page(ios!.id, undefined, 'U0ALICE');
    expect(paged).toMatchObject({ paged: ['infra-oncall'], already: [] });
    await bot.escalation.outbox.drain();
    expect(pd.pagerDuty().map((r) => r.body.dedup_key)).toEqual([`queue-ops-${ios!.id}`]);
    // Again: already paged, nothing sent.
    expect(await bot.runtime.alerts.page(ios!.id, 'infra-oncall', 'U0BOB')).toMatchObject({
      paged: [],
      already: ['infra-oncall'],
    });
    await expect(bot.runtime.alerts.page(ios!.id, 'nobody', 'U0BOB')).rejects.toMatchObject({
      code: 'UnknownPager',
    });
    await bot.escalation.outbox.drain();
    expect(pd.pagerDuty()).toHaveLength(1);
  });

  it('`/queue page`: an operator in an allowed channel, audited; `alerts --json` and the list show the page', async () => {
    const bot = await bots.start(config([pagerDuty({ afterMinutes: 60 })]));
    await add(60);
    await bots.tick(bot.escalation, s(0));
    const [alert] = await bot.runtime.alerts.open();
    const ask = (actor: string, channel: string, words = ['page', alert!.id]) =>
      bot.runtime.dispatcher.handle({ actor: { id: actor }, via: 'slack', channel, words, locale: 'en' });
    const viewer = await ask('U0VIEWER', 'C0INCIDENT');
    expect(viewer.ok).toBe(false);
    const elsewhere = await ask('U0ALICE', 'C0RANDOM');
    expect(elsewhere.ok).toBe(false);
    const typo = await ask('U0ALICE', 'C0INCIDENT', ['page', alert!.id, 'infra-oncal']);
    expect(typo.message.text).toContain('There is no pager `infra-oncal`. Valid: `infra-oncall`.');
    await bot.escalation.outbox.drain();
    expect(pd.requests).toHaveLength(0);

    const paged = await ask('U0ALICE', 'C0INCIDENT');
    expect(paged.ok).toBe(true);
    expect(paged.message.text).toBe(`Alert \`${alert!.id}\` paged: infra-oncall.`);
    await bot.escalation.outbox.drain();
    expect(pd.pagerDuty('trigger')).toHaveLength(1);
    const entries = (await bot.runtime.store.listAudit({ limit: 50 })).map((e) => [
      e.action,
      e.actorId,
      e.outcome,
    ]);
    expect(entries).toEqual([
      ['denied', 'U0VIEWER', 'denied'],
      ['denied', 'U0ALICE', 'denied'],
      ['command.page', 'U0ALICE', 'error'],
      ['command.page', 'U0ALICE', 'ok'],
    ]);
    expect(viewer.message.text).toContain('You need the `operator` role to page.');

    const listed = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0VIEWER' },
      via: 'cli',
      words: ['alerts'],
      locale: 'en',
    });
    expect((listed.data as { alerts: { pages: unknown[] }[] }).alerts[0]!.pages).toEqual([
      { pager: 'infra-oncall', at: iso(0), acknowledgedBy: null, acknowledgedAt: null },
    ]);
    expect(textOf(listed.message.blocks)).toContain(':pager: Paged infra-oncall at 2030-03-01 09:00 UTC');

    // The App Home tab, in both languages.
    const open = await bot.runtime.alerts.open();
    const home = (locale: 'en' | 'tr') =>
      textOf(
        homeView({ systems: [], alerts: open, waiting: [], recent: [], now: new Date(bots.clock) }, locale)
          .blocks,
      );
    expect(home('en')).toContain(':pager: Paged infra-oncall at 2030-03-01 09:00 UTC');
    expect(home('tr')).toContain('infra-oncall çağrıldı');

    // The timeline: who paged, through which pager.
    const timeline = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0VIEWER' },
      via: 'cli',
      words: ['timeline', '--since', '1h'],
      locale: 'en',
    });
    expect((timeline.data as { events: unknown[] }).events).toContainEqual(
      expect.objectContaining({
        kind: 'alert.paged',
        alert: alert!.id,
        pager: 'infra-oncall',
        by: 'U0ALICE',
      }),
    );
    expect(timeline.message.text + textOf(timeline.message.blocks)).toContain(
      'paged infra-oncall for alert backlog on pushizo/dispatch-ios',
    );
    // The button stands for the same words.
    expect(wordsForAction('queue_ops.alert.page', alert!.id)).toEqual(['page', alert!.id]);
  });

  it('`/queue page` with no pager configured says how to add one, also when a pager is named (en, tr)', async () => {
    const bot = await bots.start(config([]));
    await add(60);
    await bots.tick(bot.escalation, s(0));
    const [alert] = await bot.runtime.alerts.open();
    const ask = (words: string[], locale: 'en' | 'tr' = 'en') =>
      bot.runtime.dispatcher.handle({
        actor: { id: 'U0ALICE' },
        via: 'slack',
        channel: 'C0INCIDENT',
        words,
        locale,
      });
    const noPager = 'No pager is configured: add one under `paging:` in the config (docs/configuration.md).';
    for (const words of [
      ['page', alert!.id],
      ['page', alert!.id, 'pagerduty'],
    ]) {
      const answer = await ask(words);
      expect(answer.ok).toBe(false);
      expect(answer.message.text).toBe(noPager);
    }
    const tr = await ask(['page', alert!.id, 'pagerduty'], 'tr');
    expect(tr.message.text).toContain('Ayarlı bir çağrı cihazı yok');
    expect(tr.message.text).not.toContain('Geçerli: yok');
    expect(pd.requests).toHaveLength(0);
  });

  it('a silenced alert is tracked but never paged', async () => {
    const bot = await bots.start(config([pagerDuty()]));
    await bot.runtime.alerts.silence('pushizo', 60 * 60_000, 'U0ALICE', 'maintenance');
    await add(60);
    await bots.tick(bot.escalation, s(0));
    await bots.tick(bot.escalation, s(600));
    expect(await bot.runtime.alerts.open()).toHaveLength(1);
    expect(pd.requests).toHaveLength(0);
  });

  it('a 429 with Retry-After is tried again after it, then succeeds: one trigger, one incident', async () => {
    const bot = await bots.start(config([pagerDuty()]));
    pd.answerNext(429, { 'Retry-After': '120' });
    await add(60);
    await bots.tick(bot.escalation, s(0));
    expect(pd.pagerDuty()).toHaveLength(1);
    expect(pd.incidents.size).toBe(0);
    // Before Retry-After is over: nothing is sent, the Slack messages go on.
    await bots.tick(bot.escalation, s(60));
    await bots.tick(bot.escalation, s(90));
    expect(pd.pagerDuty()).toHaveLength(1);
    await bots.tick(bot.escalation, s(121));
    expect(pd.pagerDuty().map((r) => r.body.event_action)).toEqual(['trigger', 'trigger']);
    expect([...pd.incidents.values()]).toEqual([
      { service: 'pagerduty', key: expect.stringMatching(/^queue-ops-a-/), status: 'triggered', triggers: 1 },
    ]);
    // A 503 is retried too, with the back-off.
    const [alert] = await bot.runtime.alerts.open();
    pd.answerNext(503);
    await bot.runtime.alerts.ack(alert!.id, 'U0ALICE');
    await bot.escalation.outbox.drain();
    expect(pd.pagerDuty('acknowledge')).toHaveLength(1);
    await bots.tick(bot.escalation, s(200));
    expect(pd.pagerDuty('acknowledge')).toHaveLength(2);
    expect([...pd.incidents.values()][0]!.status).toBe('acknowledged');
    await bots.tick(bot.escalation, s(300));
    expect(pd.pagerDuty()).toHaveLength(4);
  });

  it('two replicas page once, also when both are asked to page by hand at the same moment', async () => {
    const a = await bots.start(config([pagerDuty()]));
    const b = await bots.start(config([pagerDuty()]));
    await add(60);
    await Promise.all([bots.tick(a.escalation, s(0)), bots.tick(b.escalation, s(0))]);
    await Promise.all([a.escalation.outbox.drain(), b.escalation.outbox.drain()]);
    await Promise.all([bots.tick(a.escalation, s(30)), bots.tick(b.escalation, s(30))]);
    expect(pd.pagerDuty('trigger')).toHaveLength(1);

    await add(60, 1);
    await Promise.all([bots.tick(a.escalation, s(60)), bots.tick(b.escalation, s(60))]);
    const android = (await a.runtime.alerts.open()).find((x) => x.subject === 'pushizo/dispatch-android')!;
    // The monitor paged it already this tick; both replicas' `page` find it paged.
    const both = await Promise.all([
      a.runtime.alerts.page(android.id, undefined, 'U0ALICE'),
      b.runtime.alerts.page(android.id, undefined, 'U0BOB'),
    ]);
    expect(both.flatMap((x) => x.paged)).toEqual([]);
    await Promise.all([a.escalation.outbox.drain(), b.escalation.outbox.drain()]);
    expect(
      pd
        .pagerDuty('trigger')
        .map((r) => r.body.dedup_key)
        .sort(),
    ).toEqual((await a.runtime.alerts.open()).map((x) => `queue-ops-${x.id}`).sort());
    // Acknowledged on one replica while the other ticks: one acknowledgement each.
    await Promise.all([
      a.runtime.alerts.ack(android.id, 'U0ALICE'),
      b.runtime.alerts.ack(android.id, 'U0BOB'),
      bots.tick(b.escalation, s(90)),
    ]);
    await Promise.all([a.escalation.outbox.drain(), b.escalation.outbox.drain()]);
    expect(pd.pagerDuty('acknowledge').map((r) => r.body.dedup_key)).toEqual([`queue-ops-${android.id}`]);
  });

  it('a pager that refuses its key: one line in the thread, not tried again, refused on /readyz', async () => {
    const bot = await bots.start(
      config([pagerDuty({ routingKey: 'WRONG-KEY' }), jsm({ apiKey: 'WRONG-GENIE' })]),
    );
    await add(60);
    await bots.tick(bot.escalation, s(0));
    expect(pd.pagerDuty()).toHaveLength(1);
    expect(pd.jsm()).toHaveLength(1);
    await bots.tick(bot.escalation, s(30));
    await bots.tick(bot.escalation, s(300));
    expect(pd.requests).toHaveLength(2);
    const refused = threads().filter((c) => textOf(c.body).includes('refused'));
    expect(refused).toHaveLength(2);
    expect(refused.map((c) => c.body.text).join('\n')).toContain(
      'Pager jsm-oncall refused the page (HTTP 401: Could not authenticate)',
    );
    expect(refused[0]!.body.text).toContain(
      'Pager infra-oncall refused the page (HTTP 400: Event object is invalid); it is not tried again.',
    );
    expect(textOf(slack.calls)).not.toContain('WRONG-KEY');
    // Keys page people: the loggers scrub them, and the webhook's secret.
    expect(collectSecrets(config([pagerDuty(), jsm()]), { PAGERDUTY_WEBHOOK_SECRET: SECRET })).toEqual(
      expect.arrayContaining([ROUTING_KEY, API_KEY, SECRET]),
    );
    const ready = await readiness({
      pingStore: async () => {},
      slackConnected: () => true,
      metrics: { systemsUp: async () => ({ pushizo: true }) },
      pagers: () => bot.runtime.paging.health(),
    });
    expect(ready).toMatchObject({
      ready: true,
      pagers: { 'infra-oncall': 'refused', 'jsm-oncall': 'refused' },
    });
    expect(textOf(ready)).not.toContain('WRONG');
    // Another replica, which never sent a page, says so too: the refusal is on the alert's page.
    const other = await bots.start(
      config([pagerDuty({ routingKey: 'WRONG-KEY' }), jsm({ apiKey: 'WRONG-GENIE' })]),
    );
    expect(await other.runtime.paging.health()).toEqual({
      'infra-oncall': 'refused',
      'jsm-oncall': 'refused',
    });
  });
});

describe('paging: the config', () => {
  const yaml = (key: string) => `systems: [{ name: pushizo, type: bullmq, redis: "redis://127.0.0.1:1" }]
paging:
  - { name: infra-oncall, type: pagerduty, routingKey: ${key}, afterMinutes: 15, match: { rules: [backlog] } }
  - { name: jsm-critical, type: jsm, apiKey: "${envRef('JSM_API_KEY')}" }
`;

  it('takes the keys from the environment, with the public endpoints by default', () => {
    const config = parseConfig(yaml(`"${envRef('PD_ROUTING_KEY')}"`), {
      PD_ROUTING_KEY: ROUTING_KEY,
      JSM_API_KEY: API_KEY,
    });
    expect(config.paging).toEqual([
      {
        name: 'infra-oncall',
        type: 'pagerduty',
        routingKey: ROUTING_KEY,
        afterMinutes: 15,
        match: { rules: ['backlog'] },
      },
      { name: 'jsm-critical', type: 'jsm', apiKey: API_KEY, afterMinutes: 0 },
    ]);
  });

  it('refuses a key written into the file, and a duplicate name, in one line each', () => {
    const problemsOf = (text: string, env: Record<string, string>) => {
      try {
        parseConfig(text, env);
      } catch (error) {
        return (error as { params: { problems: string[] } }).params.problems;
      }
      return [];
    };
    expect(problemsOf(yaml(ROUTING_KEY), { JSM_API_KEY: API_KEY })).toEqual([
      `paging[0].routingKey: write the key as an environment reference (\`"${envRef('PD_ROUTING_KEY')}"\`), never in the file`,
    ]);
    expect(
      problemsOf(yaml(`"${envRef('PD_ROUTING_KEY')}"`).replace('jsm-critical', 'infra-oncall'), {
        PD_ROUTING_KEY: ROUTING_KEY,
        JSM_API_KEY: API_KEY,
      }),
    ).toEqual(['paging[1].name: duplicate pager name "infra-oncall" (also paging[0])']);
  });
});

describe('paging: PagerDuty’s webhook acknowledges in queue-ops', () => {
  const deps = (bot: Awaited<ReturnType<typeof bots.start>>) => ({
    secret: SECRET,
    alerts: bot.runtime.alerts,
    audit: bot.runtime.audit,
    logger,
  });

  it('an ack on the phone acknowledges the alert, stops its reminders and escalation, and is audited once', async () => {
    const bot = await bots.start(config([pagerDuty()]));
    await add(60);
    await bots.tick(bot.escalation, s(0));
    const [alert] = await bot.runtime.alerts.open();
    const key = `queue-ops-${alert!.id}`;
    expect(pd.pagerDuty('trigger')).toHaveLength(1);

    const delivery = pagerDutyDelivery('incident.acknowledged', key, SECRET);
    bots.clock = s(20);
    const first = await handlePagerDutyWebhook(deps(bot), delivery.raw, delivery.signature);
    expect(first).toEqual({ status: 200, body: { ok: true, found: true, changed: true } });
    await bot.escalation.outbox.drain();
    const acked = await bot.runtime.store.escalation.getAlert(alert!.id);
    expect(acked!.ackedBy).toBe('pagerduty:PJANE01');
    expect(textOf(msgs().at(-1)!.blocks)).toContain('acknowledged in PagerDuty by Jane Doe');
    // Not sent back to PagerDuty: it knows.
    expect(pd.pagerDuty('acknowledge')).toHaveLength(0);

    // A replay: nothing changes, nothing is audited twice.
    const replay = await handlePagerDutyWebhook(deps(bot), delivery.raw, delivery.signature);
    expect(replay.body).toMatchObject({ changed: false });
    const audited = (await bot.runtime.store.listAudit({ limit: 50 })).filter(
      (e) => e.action === 'alert.ack',
    );
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({
      actorId: 'pagerduty:PJANE01',
      actorName: 'Jane Doe',
      via: 'pagerduty',
    });

    // Past renotifyMinutes and escalateAfterMinutes: no reminder, no escalation.
    await bots.tick(bot.escalation, s(150));
    await bots.tick(bot.escalation, s(210));
    await bots.tick(bot.escalation, s(400));
    expect(threads()).toHaveLength(0);
  });

  it('resolved on the phone: recorded, the alert resolves only when the monitor sees the queue clear', async () => {
    const bot = await bots.start(config([pagerDuty()]));
    await add(60);
    await bots.tick(bot.escalation, s(0));
    const [alert] = await bot.runtime.alerts.open();
    const delivery = pagerDutyDelivery('incident.resolved', `queue-ops-${alert!.id}`, SECRET, {
      user: { id: 'PEVE0001', name: 'Jane Doe <!channel>' },
    });
    expect((await handlePagerDutyWebhook(deps(bot), delivery.raw, delivery.signature)).body).toMatchObject({
      changed: true,
    });
    await bots.tick(bot.escalation, s(30));
    expect((await bot.runtime.alerts.open()).map((a) => a.id)).toEqual([alert!.id]);
    expect(textOf(msgs().at(-1)!.blocks)).toContain(
      'page resolved in PagerDuty by Jane Doe &lt;!channel&gt;; the alert stays open until the monitor sees it clear',
    );
    // A name from PagerDuty is text, never a mention.
    expect(textOf(slack.calls)).not.toContain('<!channel>');
    await drainQueue();
    await bots.tick(bot.escalation, s(60));
    await bots.tick(bot.escalation, s(90));
    expect(await bot.runtime.alerts.open()).toEqual([]);
    // Resolved there already: queue-ops does not resolve it again, nor page it again.
    expect(pd.pagerDuty().map((r) => r.body.event_action)).toEqual(['trigger']);
  });

  it('unsigned and wrongly signed deliveries get 401 and change nothing', async () => {
    const bot = await bots.start(config([pagerDuty()]));
    await add(60);
    await bots.tick(bot.escalation, s(0));
    const [alert] = await bot.runtime.alerts.open();
    const delivery = pagerDutyDelivery('incident.acknowledged', `queue-ops-${alert!.id}`, SECRET);
    const wrong = pagerDutyDelivery('incident.acknowledged', `queue-ops-${alert!.id}`, 'another-secret');
    for (const signature of [undefined, wrong.signature, 'v1=zz', `v0=${delivery.signature.slice(3)}`])
      expect(await handlePagerDutyWebhook(deps(bot), delivery.raw, signature)).toEqual({
        status: 401,
        body: { ok: false, error: 'invalid signature' },
      });
    // No secret configured: nothing is accepted.
    expect(
      (await handlePagerDutyWebhook({ ...deps(bot), secret: undefined }, delivery.raw, delivery.signature))
        .status,
    ).toBe(401);
    expect((await bot.runtime.store.escalation.getAlert(alert!.id))!.ackedBy).toBeUndefined();
    // During a rotation PagerDuty signs with both secrets: one that matches is enough.
    const rotated = `${wrong.signature},${delivery.signature}`;
    expect((await handlePagerDutyWebhook(deps(bot), delivery.raw, rotated)).status).toBe(200);
    expect((await bot.runtime.store.escalation.getAlert(alert!.id))!.ackedBy).toBe('pagerduty:PJANE01');
  });

  it('a grouped message is one page: acknowledged when all its alerts are, and an ack there acks them all', async () => {
    const bot = await bots.start(config([pagerDuty()], { groupBy: ['system', 'severity'] }));
    await add(60);
    await add(60, 1);
    await bots.tick(bot.escalation, s(0));
    await bots.tick(bot.escalation, s(30));
    const open = await bot.runtime.alerts.open();
    expect(open).toHaveLength(2);
    const key = `queue-ops-${open[0]!.groupId}`;
    expect(pd.pagerDuty().map((r) => [r.body.event_action, r.body.dedup_key])).toEqual([['trigger', key]]);
    // Every alert of the group shows the group's page.
    expect(open.map((a) => alertJson(a).pages.map((p) => p.pager))).toEqual([
      ['infra-oncall'],
      ['infra-oncall'],
    ]);

    await bot.runtime.alerts.ack(open[0]!.id, 'U0ALICE');
    await bot.escalation.outbox.drain();
    expect(pd.pagerDuty('acknowledge')).toHaveLength(0);
    // A new alert of the group now would not page again; the phone acks the whole group.
    const delivery = pagerDutyDelivery('incident.acknowledged', key, SECRET);
    expect((await handlePagerDutyWebhook(deps(bot), delivery.raw, delivery.signature)).body).toMatchObject({
      changed: true,
    });
    const after = await bot.runtime.store.escalation.listGroup(open[0]!.groupId!);
    expect(after.map((a) => a.ackedBy)).toEqual(['U0ALICE', 'pagerduty:PJANE01']);
    await bot.escalation.outbox.drain();
    expect(pd.pagerDuty('acknowledge')).toHaveLength(0);
  });
});
