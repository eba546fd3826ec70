import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionId } from '../../src/blocks/action-ids.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix, waitFor } from '../helpers/bullmq-jobs.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { celerySystem } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import {
  botConfigInput,
  buttonClick,
  captureResponses,
  randomId,
  slashCommand,
  startWiredBot,
} from '../transports/slack/harness.js';

/**
 * Text built to break out of Slack mrkdwn, put where an attacker can put it: BullMQ job names,
 * failure reasons, job data, a queue's own name, a worker's name; a Celery worker's node name and
 * its tasks' exceptions; and through them into alerts, approval requests, the audit trail, the
 * timeline and the App Home tab. Every surface's final Block Kit JSON (what Slack would receive)
 * is then read back and must be inert.
 *
 * `ZQ` marks the spot right before each formatting character, so the check can tell a backtick,
 * asterisk or invisible character that came from the attacker from one the bot wrote itself.
 */
const INVISIBLE = '\u200b\u200c\u200d\u2060\ufeff\u202e\u2066';
const HOSTILE = `ZQ<!channel> ZQ<!here> ZQ<!everyone> ZQ<@U0EVIL> ZQ<#C0EVIL> ZQ<https://evil.example|click here> ZQ&amp; ZQ\`\`\` ZQ\`tick\` ZQ*bold* ZQ_it_ ZQ~st~ ZQ${INVISIBLE}end`;
/**
 * The same without whitespace (U+FEFF counts as one) or `:` (BullMQ refuses a `:` in a queue name,
 * so no URL): it has to fit in a typed target, a button value, a Redis client name and a Celery
 * node name.
 */
const HOSTILE_WORD = `ZQ<!channel>ZQ<@U0EVIL>ZQ<evil.example|c>ZQ&ZQ\`\`\`ZQ\`t\`ZQ*b*ZQ${INVISIBLE.replace('\ufeff', '')}q`;
const EVIL_QUEUE = `evil${HOSTILE_WORD}`;
/** Job data is never shown: if this appears anywhere, a payload leaked. */
const PAYLOAD_MARKER = 'PAYLOAD-MARKER-9f1c';

const API_HOST = 'https://slack-render.test.example';
const url = testRedisUrl();
const prefix = randomId('render');
const dir = mkdtempSync(join(tmpdir(), 'qo-hostile-render-'));

/** Everything the bot sent to Slack, as Slack would receive it, by surface. */
const surfaces: { surface: string; payload: Record<string, unknown> }[] = [];
let ts = 100;

function fakeSlackApi() {
  nock(API_HOST)
    .persist()
    .post(/^\/api\//)
    .reply((uri, raw) => {
      const method = uri.replace(/^\/api\//, '');
      const form = Object.fromEntries(
        new URLSearchParams(typeof raw === 'string' ? raw : JSON.stringify(raw)),
      );
      const parsed: Record<string, unknown> = { ...form };
      for (const key of ['blocks', 'view']) if (form[key]) parsed[key] = JSON.parse(form[key] as string);
      if (method === 'views.publish') {
        surfaces.push({ surface: 'home', payload: parsed });
        return [200, { ok: true, view: { id: 'V0HOME' } }];
      }
      if (method === 'chat.postMessage' || method === 'chat.update') {
        ts += 1;
        const at = form.ts ?? `1700000300.${String(ts).padStart(6, '0')}`;
        surfaces.push({ surface: `${method} ${form.channel}`, payload: parsed });
        return [200, { ok: true, channel: form.channel, ts: at, message: { ts: at } }];
      }
      if (method === 'conversations.history') return [200, { ok: true, messages: [] }];
      return [200, { ok: true }];
    });
}

let bot: RunningBot;
let celeryRedis: PrivateRedis;
let celery: CeleryWorker | undefined;
const closers: (() => Promise<unknown>)[] = [];
let stuckJobRelease: () => void = () => {};

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  fakeSlackApi();
  const connection = connectionFor(url);

  // BullMQ: a queue named to break out, failed jobs whose names, reasons and data are hostile, a
  // worker whose name is hostile holding one active job (for `stuck`).
  const evil = new Queue(EVIL_QUEUE, { connection, prefix });
  const hooks = new Queue('webhooks', { connection, prefix });
  closers.push(
    () => evil.close(),
    () => hooks.close(),
  );
  for (const q of [evil, hooks]) {
    await q.addBulk(
      [0, 1, 2].map((i) => ({
        name: `${HOSTILE} #${i}`,
        data: { note: HOSTILE, marker: PAYLOAD_MARKER, fail: true },
        opts: { attempts: 1 },
      })),
    );
  }
  const failing = [evil, hooks].map(
    (q) =>
      new Worker(
        q.name,
        async (job) => {
          if (job.data.fail) throw new Error(`${HOSTILE}\nsecond line ${HOSTILE}`);
        },
        { connection: connectionFor(url), prefix, name: `w${HOSTILE_WORD}` },
      ),
  );
  await waitFor(
    'six failures',
    async () => (await evil.getFailedCount()) + (await hooks.getFailedCount()) === 6,
  );
  for (const w of failing) await w.close();
  // One job held active by a live, hostile-named worker.
  const held = new Promise<void>((resolve) => {
    stuckJobRelease = resolve;
  });
  const holder = new Worker(hooks.name, async () => held, {
    connection: connectionFor(url),
    prefix,
    name: `holder${HOSTILE_WORD}`,
  });
  closers.push(async () => {
    stuckJobRelease();
    await holder.close();
  });
  await hooks.add(`${HOSTILE} active`, { marker: PAYLOAD_MARKER });
  await waitFor('one active job', async () => (await hooks.getActiveCount()) === 1);

  // Celery on a Redis of its own: a worker whose node name is hostile, tasks failing with hostile
  // exception messages, one running long (for `stuck`).
  celeryRedis = await startPrivateRedis();
  const brokerUrl = `${celeryRedis.url}/0`;
  celery = await startCeleryWorker({
    brokerUrl,
    queues: ['alarm_processing'],
    name: `zq${HOSTILE_WORD.replace(/@/g, '')}@evil`,
    concurrency: 2,
  });
  await publishCelery(
    { brokerUrl },
    [0, 1].map(() => ({ task: 'tasks.boom', args: [HOSTILE], queue: 'alarm_processing', wait: true })),
  );
  await publishCelery({ brokerUrl }, [{ task: 'tasks.sleepy', args: [60], queue: 'alarm_processing' }]);

  bot = await startWiredBot({
    dir,
    config: botConfigInput({
      redis: url,
      prefix,
      dir,
      systems: [celerySystem('zeus', brokerUrl, { queues: ['alarm_processing'], inspectTimeoutMs: 1500 })],
      slack: { incidentChannel: 'C0INCIDENT', auditChannel: 'C0AUDIT', allowedChannels: ['C0INCIDENT'] },
      more: {
        escalation: {
          groupBy: 'none',
          intervalSeconds: 3600,
          rules: [{ name: 'failures', queues: ['*'], metric: 'failed', above: 0, severity: 'critical' }],
        },
      },
    }),
    token: 'xoxb-render-test',
    apiUrl: `${API_HOST}/api/`,
    seams: { auditChannelIntervalMs: 0, homeMinIntervalMs: 0 },
  });
}, 90_000);

afterAll(async () => {
  await bot?.stop();
  for (const close of closers) await close();
  await celery?.stop();
  await celeryRedis?.stop();
  await deletePrefix(url, prefix);
  nock.cleanAll();
  nock.enableNetConnect();
  rmSync(dir, { recursive: true, force: true });
});

const deliver = (body: Record<string, unknown>) => bot.slack.app.processEvent({ body, ack: async () => {} });

/** Runs `/queue <text>` as `user`; returns what was sent to its response_url. */
async function command(text: string, user = 'U0ALICE'): Promise<Record<string, unknown>> {
  const path = `/commands/T0TEAM/${randomId('')}/render`;
  const { bodies } = captureResponses(path);
  await deliver(slashCommand(text, path, { user_id: user, user_name: user.toLowerCase() }));
  await expect.poll(() => bodies.length, { timeout: 10_000, message: text }).toBeGreaterThan(0);
  const body = bodies[0] as Record<string, unknown>;
  surfaces.push({ surface: `/queue ${text}`, payload: body });
  return body;
}

/** Every string Slack parses as mrkdwn, and every plain_text string, in one payload. */
function strings(payload: unknown): { mrkdwn: string[]; plain: string[] } {
  const mrkdwn: string[] = [];
  const plain: string[] = [];
  const walk = (node: unknown, key?: string): void => {
    if (Array.isArray(node)) {
      for (const n of node) walk(n);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const o = node as Record<string, unknown>;
    if (typeof o.text === 'string' && (o.type === 'mrkdwn' || o.type === 'plain_text')) {
      (o.type === 'mrkdwn' ? mrkdwn : plain).push(o.text);
    } else if (typeof o.text === 'string' && key === undefined) {
      // A message's top-level `text`: Slack parses it as mrkdwn for notifications.
      mrkdwn.push(o.text);
    }
    for (const [k, v] of Object.entries(o)) if (typeof v === 'object') walk(v, k);
  };
  walk(payload);
  return { mrkdwn, plain };
}

const BIDI_OR_INVISIBLE = /\u200c|\u200d|\u2060|\ufeff|\u200e|\u200f|[\u202a-\u202e]|[\u2066-\u2069]/;

/** What must never reach Slack from text an attacker controls. */
function expectInert(surface: string, payload: Record<string, unknown>): void {
  const json = JSON.stringify(payload);
  expect(json, `${surface}: job payload shown`).not.toContain(PAYLOAD_MARKER);
  const { mrkdwn, plain } = strings(payload);
  expect(mrkdwn.length + plain.length, `${surface}: nothing to check`).toBeGreaterThan(0);
  for (const s of mrkdwn) {
    const where = `${surface}: ${JSON.stringify(s.slice(0, 300))}`;
    // Mentions, broadcasts, links: only the bot's own `<@U…>` / `<#C…>` for real ids.
    expect(s, where).not.toMatch(/<!/);
    expect(s, where).not.toMatch(/<https?:/);
    expect(s, where).not.toContain('<@U0EVIL>');
    expect(s, where).not.toContain('<#C0EVIL>');
    // (A `>` opening a line is the bot's own quote of an error.)
    expect(s.replace(/<[@#][UWC][A-Z0-9]+>/g, '').replace(/^> /gm, ''), where).not.toMatch(/[<>]/);
    expect(s, where).not.toMatch(/&(?!amp;|lt;|gt;)/);
    // A run of the attacker's backticks never reaches mrkdwn (``` would open a code block over the
    // lines after it), nor any invisible or direction-changing character.
    expect(s, where).not.toMatch(/ZQ``/);
    expect(s, where).not.toMatch(BIDI_OR_INVISIBLE);
    // The only zero-width spaces are the ones the bot puts around a formatting character.
    expect(s.replace(/\u200b[`*_~]\u200b/g, ''), where).not.toContain('\u200b');
    // Fences balanced: a code block opened by the bot is closed by the bot.
    expect((s.match(/```/g) ?? []).length % 2, where).toBe(0);
  }
  for (const s of plain) {
    // plain_text is never parsed for mentions or links; still no invisible or bidi characters.
    expect(s, `${surface} (plain_text): ${JSON.stringify(s)}`).not.toMatch(BIDI_OR_INVISIBLE);
  }
}

describe('hostile names, errors and data render as inert text on every surface', () => {
  it('status, dlq, workers and stuck, BullMQ and Celery, typed and clicked', async () => {
    const status = await command('status');
    expect(JSON.stringify(status)).toContain('evil');
    expectInert('status', status);
    expectInert('status pushizo', await command('status pushizo'));

    const dlq = await command(`dlq pushizo/${EVIL_QUEUE}`);
    expectInert('dlq evil queue', dlq);
    expectInert('dlq webhooks', await command('dlq pushizo/webhooks'));
    const celeryDlq = await command('dlq zeus/alarm_processing');
    expect(JSON.stringify(celeryDlq)).toContain('ZQ');
    expectInert('dlq zeus', celeryDlq);

    // The Open DLQ button carries the hostile queue name as its value.
    const path = `/actions/T0TEAM/${randomId('')}/open`;
    const { bodies } = captureResponses(path);
    await deliver(buttonClick(ActionId.OpenDlq, `pushizo/${EVIL_QUEUE}`, path));
    await expect.poll(() => bodies.length).toBe(1);
    expect(JSON.stringify(bodies[0])).toContain('Failed jobs');
    expectInert('Open DLQ click', bodies[0] as Record<string, unknown>);

    const workers = await command('workers');
    // In a code span the attacker's backticks are quotes: they cannot end the span.
    expect(JSON.stringify(workers)).toContain("ZQ'''ZQ't'");
    expectInert('workers', workers);
    const stuckBull = await command('stuck pushizo 0');
    // The worker's name, cut to fit, still begins as it does in Redis (not a bare "…").
    expect(JSON.stringify(stuckBull)).toContain('worker holderZQ&lt;!channel&gt;ZQ');
    expectInert('stuck pushizo', stuckBull);
    await waitFor('the Celery task running', async () => {
      const reply = await bot.runtime.dispatcher.handle({
        actor: { id: 'U0ALICE' },
        via: 'cli',
        words: ['stuck', 'zeus', '0'],
        locale: 'en',
      });
      return ((reply.data as { work?: unknown[] } | undefined)?.work?.length ?? 0) > 0;
    });
    expectInert('stuck zeus', await command('stuck zeus 0'));
  }, 60_000);

  it('the alert the monitor posts, the alerts list, ack, approvals, audit, timeline and the Home tab', async () => {
    await bot.escalation.monitor.tick();
    await expect
      .poll(() => surfaces.filter((s) => s.surface === 'chat.postMessage C0INCIDENT').length, {
        timeout: 10_000,
      })
      .toBeGreaterThan(0);
    const alerts = await command('alerts');
    expectInert('alerts', alerts);
    const evilAlert = (await bot.runtime.store.escalation.listAlerts({ status: 'firing' })).find((a) =>
      a.subject.includes('evil'),
    );
    expect(evilAlert).toBeDefined();
    expectInert('ack', await command(`ack ${evilAlert?.id}`, 'U0BOB'));

    // An approval request on the hostile queue, denied with a hostile reason.
    // The request is posted to the channel with chat.postMessage (so it can be updated in place).
    const posts = () => surfaces.filter((s) => s.surface === 'chat.postMessage C0INCIDENT').length;
    const before = posts();
    const path = `/commands/T0TEAM/${randomId('')}/pause`;
    captureResponses(path);
    await deliver(
      slashCommand(`pause pushizo/${EVIL_QUEUE}`, path, { user_id: 'U0ALICE', user_name: 'alice' }),
    );
    await expect.poll(posts, { timeout: 10_000 }).toBeGreaterThan(before);
    const waiting = await bot.runtime.approvals.pending();
    expect(waiting.map((r) => r.target)).toEqual([`pushizo/${EVIL_QUEUE}`]);
    const id = waiting[0]?.id;
    expectInert('deny', await command(`deny ${id} "${HOSTILE}"`, 'U0BOB'));
    await bot.idle();

    expectInert('audit', await command('audit 30'));
    expectInert('timeline', await command('timeline --since 1h'));

    await deliver({
      token: 'unused',
      team_id: 'T0TEAM',
      api_app_id: 'A0QUEUEOPS',
      type: 'event_callback',
      event_id: randomId('Ev'),
      event_time: Math.floor(Date.now() / 1000),
      event: { type: 'app_home_opened', user: 'U0ALICE', channel: 'D0HOME', tab: 'home', event_ts: '1.1' },
    });
    await bot.home.idle();
    await bot.idle();

    const seen = new Set(surfaces.map((s) => s.surface.split(' ')[0]));
    for (const kind of ['home', 'chat.postMessage', 'chat.update'])
      expect(seen.has(kind), `${kind} in ${[...seen]}`).toBe(true);
    expect(surfaces.some((s) => s.surface === 'chat.postMessage C0AUDIT')).toBe(true);
    // The hostile text really reached each of them (so the checks below read it, not its absence).
    const shown = (surface: string) =>
      surfaces
        .filter((s) => s.surface.startsWith(surface))
        .map((s) => JSON.stringify(s.payload))
        .join('\n');
    for (const surface of [
      'home',
      'chat.postMessage C0INCIDENT',
      'chat.postMessage C0AUDIT',
      'chat.update',
      '/queue timeline',
      '/queue audit',
      '/queue alerts',
    ])
      expect(shown(surface), surface).toContain('ZQ');
    for (const { surface, payload } of surfaces) expectInert(surface, payload);
  }, 60_000);
});
