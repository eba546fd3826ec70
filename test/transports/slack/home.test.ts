import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionId } from '../../../src/blocks/action-ids.js';
import { validateMessage } from '../../../src/blocks/validate.js';
import { RequestStatus } from '../../../src/store/store.js';
import type { RunningBot } from '../../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix } from '../../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../../helpers/test-redis.js';
import { sampleAlert } from '../../store/escalation-contract.js';
import { botConfigInput, captureResponses, randomId, slashCommand, startWiredBot } from './harness.js';

const API_HOST = 'https://slack-home.test.example';
const API_URL = `${API_HOST}/api/`;

interface Published {
  user: string;
  view: { type: string; blocks: Record<string, unknown>[] };
}
const published: Published[] = [];
const posted: { channel: string; blocks: Record<string, unknown>[]; ts: string }[] = [];
let ts = 100;

/**
 * The channels Slack knows, as conversations.info and conversations.members answer for them:
 * C0INCIDENT is public (Bob is not in it, and may still answer its requests), the C0PRIV… ones are
 * private, and C0GONE is a private channel the bot is not in (Slack says `channel_not_found`).
 */
const CHANNELS: Record<string, { isPrivate: boolean; members: string[] }> = {
  C0INCIDENT: { isPrivate: false, members: ['U0ALICE'] },
  C0PRIVOUT: { isPrivate: true, members: ['U0ALICE', 'U0VIEW'] },
  C0PRIVIN: { isPrivate: true, members: ['U0ALICE', 'U0BOB'] },
  C0PRIVLEFT: { isPrivate: true, members: ['U0ALICE', 'U0BOB'] },
};
/** Every conversations.* call the bot made, as `method channel`. */
const conversationCalls: string[] = [];

function fakeSlackApi() {
  nock(API_HOST)
    .persist()
    .post(/^\/api\//)
    .reply((uri, raw) => {
      const method = uri.replace(/^\/api\//, '');
      const body = Object.fromEntries(
        new URLSearchParams(typeof raw === 'string' ? raw : JSON.stringify(raw)),
      );
      if (method === 'views.publish') {
        published.push({ user: body.user_id ?? '', view: JSON.parse(body.view ?? '{}') });
        return [200, { ok: true, view: { id: 'V0HOME' } }];
      }
      if (method === 'chat.postMessage') {
        ts += 1;
        const at = `1700000200.${String(ts).padStart(6, '0')}`;
        posted.push({ channel: body.channel ?? '', blocks: JSON.parse(body.blocks ?? '[]'), ts: at });
        return [200, { ok: true, channel: body.channel, ts: at }];
      }
      if (method === 'chat.update') return [200, { ok: true, channel: body.channel, ts: body.ts }];
      if (method === 'conversations.members' || method === 'conversations.info') {
        conversationCalls.push(`${method} ${body.channel}`);
        const channel = CHANNELS[body.channel ?? ''];
        if (!channel) return [200, { ok: false, error: 'channel_not_found' }];
        return method === 'conversations.members'
          ? [200, { ok: true, members: channel.members, response_metadata: { next_cursor: '' } }]
          : [200, { ok: true, channel: { id: body.channel, is_private: channel.isPrivate } }];
      }
      // Vic set Slack to Turkish; nobody else's locale is known (the config's applies).
      if (method === 'users.info' && body.user === 'U0VIEW')
        return [200, { ok: true, user: { id: 'U0VIEW', locale: 'tr-TR' } }];
      return [200, { ok: false, error: 'unknown_method' }];
    });
}

const users = {
  alice: { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: 'T0TEAM' },
  bob: { id: 'U0BOB', username: 'bob', name: 'bob', team_id: 'T0TEAM' },
  vic: { id: 'U0VIEW', username: 'vic', name: 'vic', team_id: 'T0TEAM' },
} as const;
type Who = keyof typeof users;

const homeOpened = (who: Who) => ({
  token: 'unused',
  team_id: 'T0TEAM',
  api_app_id: 'A0QUEUEOPS',
  type: 'event_callback',
  event_id: randomId('Ev'),
  event_time: Math.floor(Date.now() / 1000),
  event: {
    type: 'app_home_opened',
    user: users[who].id,
    channel: 'D0HOME',
    tab: 'home',
    event_ts: '1700000000.1',
  },
});

/** A click on a button of the Home tab: no channel, no response_url, as Slack sends it. */
const homeClick = (who: Who, actionId: string, value: string) => ({
  type: 'block_actions',
  user: users[who],
  api_app_id: 'A0QUEUEOPS',
  token: 'unused',
  container: { type: 'view', view_id: 'V0HOME' },
  trigger_id: '111.222.333',
  team: { id: 'T0TEAM', domain: 'oncall' },
  view: { id: 'V0HOME', type: 'home', blocks: [], state: { values: {} } },
  actions: [
    {
      action_id: actionId,
      block_id: `home-request:${value}`,
      text: { type: 'plain_text', text: 'Approve' },
      value,
      type: 'button',
      action_ts: '1700000001.000200',
    },
  ],
});

const textOf = (view: Published['view']) => JSON.stringify(view.blocks);
const buttonsOf = (blocks: Record<string, unknown>[]) =>
  blocks
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements as { action_id: string; value: string }[]);

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  fakeSlackApi();
});
afterAll(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

describe('the App Home tab, on the real bot wiring', () => {
  const url = testRedisUrl();
  const prefix = randomId('home');
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-home-'));
  const queues = new Map<string, Queue>();
  let bot: RunningBot;

  beforeAll(async () => {
    for (const name of [
      'q-home',
      'q-forged',
      'q-refresh',
      'q-priv-out',
      'q-priv-in',
      'q-priv-left',
      'q-gone',
    ]) {
      const queue = new Queue(name, { connection: connectionFor(url), prefix });
      await queue.add('push', { token: 'JOB-PAYLOAD-MARKER' });
      queues.set(name, queue);
    }
    bot = await startWiredBot({
      dir,
      config: botConfigInput({
        redis: url,
        prefix,
        dir,
        slack: { allowedChannels: ['C0INCIDENT', 'C0PRIVOUT', 'C0PRIVIN', 'C0PRIVLEFT', 'C0GONE'] },
        more: { approvals: { ttlMinutes: 15 } },
      }),
      token: 'xoxb-home-test',
      apiUrl: API_URL,
      seams: {
        auditChannelIntervalMs: 0,
        // Every refresh goes out at once here; the throttle has its own test below.
        homeMinIntervalMs: 0,
      },
    });
  });

  afterAll(async () => {
    await bot?.stop();
    for (const queue of queues.values()) await queue.close();
    await deletePrefix(url, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  const deliver = (body: Record<string, unknown>) =>
    bot.slack.app.processEvent({ body, ack: async () => {} });
  const open = async (who: Who) => {
    const before = published.length;
    await deliver(homeOpened(who));
    await bot.home.idle();
    const mine = published.slice(before).filter((p) => p.user === users[who].id);
    const last = mine.at(-1);
    if (!last) throw new Error(`no Home tab published for ${who}`);
    return last.view;
  };
  async function requestPause(queue: string, channel = 'C0INCIDENT') {
    const path = `/commands/T0TEAM/${randomId('')}/cmd`;
    captureResponses(path);
    const before = posted.length;
    await deliver(
      slashCommand(`pause pushizo/${queue}`, path, {
        user_id: 'U0ALICE',
        user_name: 'alice',
        channel_id: channel,
      }),
    );
    const post = posted.slice(before).find((p) => p.channel === channel);
    const approve = post && buttonsOf(post.blocks).find((b) => b.action_id === ActionId.Approve);
    if (!approve) throw new Error('no request posted');
    return approve.value;
  }

  it('shows an approver the request waiting for them with Approve/Deny, and the Approve click pauses the real queue through the guards', async () => {
    const id = await requestPause('q-home');
    await bot.runtime.store.escalation.insertAlert(
      sampleAlert({
        key: 'backlog|pushizo/q-home',
        subject: 'pushizo/q-home',
        queue: 'q-home',
        openedAt: new Date().toISOString(),
      }),
      [],
    );

    const bobs = await open('bob');
    expect(bobs.type).toBe('home');
    expect(validateMessage({ text: 'home', blocks: bobs.blocks as never }, 'modal')).toEqual([]);
    expect(textOf(bobs)).toContain(`${id}: pause pushizo/q-home, asked by alice`);
    expect(buttonsOf(bobs.blocks)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action_id: ActionId.Approve, value: id }),
        expect.objectContaining({ action_id: ActionId.Deny, value: id }),
      ]),
    );
    expect(textOf(bobs)).toContain('backlog on pushizo/q-home');
    expect(textOf(bobs)).toMatch(/pushizo \(bullmq\): \d+ queues?, \d+ waiting/);
    expect(textOf(bobs)).not.toContain('JOB-PAYLOAD-MARKER');

    // The requester and a viewer have nothing to approve.
    const alices = await open('alice');
    expect(buttonsOf(alices.blocks)).toEqual([]);
    expect(textOf(alices)).toContain(`requested pause pushizo/q-home (${id})`);
    expect(buttonsOf((await open('vic')).blocks)).toEqual([]);

    const before = published.length;
    await deliver(homeClick('bob', ActionId.Approve, id));
    await bot.home.idle();
    expect(await (queues.get('q-home') as Queue).isPaused()).toBe(true);
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Done);
    // The answer is the tab itself, re-published for the clicker with the outcome on top.
    const answer = published
      .slice(before)
      .filter((p) => p.user === 'U0BOB')
      .at(-1);
    expect(answer).toBeDefined();
    expect(textOf(answer!.view)).toContain(id);
    expect(buttonsOf(answer!.view.blocks).filter((b) => b.value === id)).toEqual([]);
    const bobsNow = await open('bob');
    expect(textOf(bobsNow)).toContain(`approved pause pushizo/q-home (${id})`);
  });

  it('a user whose Slack is in Turkish gets a Turkish Home tab on an English config', async () => {
    const vic = textOf(await open('vic'));
    expect(vic).toContain('Sistemler');
    expect(vic).toContain('kuyruk');
    expect(vic).not.toContain('Systems');
  });

  it('a user whose Slack locale is not known keeps the English of the config', async () => {
    const alice = textOf(await open('alice'));
    expect(alice).toContain('Systems');
    expect(alice).not.toContain('Sistemler');
  });

  describe('silences on the tab, in order', () => {
    let silenceId: string;

    it('has no silences section while none is in force', async () => {
      expect(textOf(await open('bob'))).not.toContain('Silences in force');
    });

    it('lists a silence in force, with its pattern, end, author and reason', async () => {
      const { silence } = await bot.runtime.alerts.silence(
        'pushizo/q-*',
        2 * 3_600_000,
        'U0ALICE',
        'provider <!channel> outage',
      );
      silenceId = silence.id;
      const tab = textOf(await open('bob'));
      expect(tab).toContain('Silences in force');
      expect(tab).toContain(`${silence.id}: pushizo/q-`);
      expect(tab).toContain('by U0ALICE');
      // The reason was typed by someone: escaped, it never pings the channel.
      expect(tab).toContain('· provider &lt;!channel&gt; outage');
      expect(tab).not.toContain('<!channel>');
    });

    it('a lifted silence leaves the tab', async () => {
      await bot.runtime.alerts.unsilence(silenceId, 'U0BOB');
      expect(textOf(await open('bob'))).not.toContain(silenceId);
    });
  });

  it('a forged Home click by someone without the role changes nothing and learns nothing', async () => {
    const id = await requestPause('q-forged');
    const before = published.length;
    await deliver(homeClick('vic', ActionId.Approve, id));
    await bot.home.idle();
    expect(await (queues.get('q-forged') as Queue).isPaused()).toBe(false);
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Pending);
    const answer = published
      .slice(before)
      .filter((p) => p.user === 'U0VIEW')
      .at(-1);
    expect(answer).toBeDefined();
    expect(textOf(answer!.view)).not.toContain('pushizo/q-forged');
    // Another mutating verb never runs from the Home tab: only approve/deny are let through.
    const entries = await bot.runtime.audit.recent(20);
    expect(entries.some((e) => e.actorId === 'U0VIEW' && e.action === 'request.approved')).toBe(false);
  });

  it('a new request refreshes the tab of an approver who has it open, without their opening it again', async () => {
    await open('bob');
    const before = published.length;
    const id = await requestPause('q-refresh');
    const refreshed = async () =>
      published
        .slice(before)
        .filter((p) => p.user === users.bob.id)
        .some((p) => textOf(p.view).includes(`${id}: pause pushizo/q-refresh`));
    for (let i = 0; i < 50 && !(await refreshed()); i++) {
      await bot.home.idle();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await refreshed()).toBe(true);
  });

  /** Bob's Approve on his Home tab; resolves with the tab re-published for him afterwards. */
  async function bobApproves(id: string) {
    const before = published.length;
    await deliver(homeClick('bob', ActionId.Approve, id));
    await bot.home.idle();
    const answer = published
      .slice(before)
      .filter((p) => p.user === 'U0BOB')
      .at(-1);
    if (!answer) throw new Error('no Home tab re-published for bob');
    return textOf(answer.view);
  }

  describe('a request asked in a private channel Bob is not in, in order', () => {
    let calls: number;
    let id: string;

    beforeAll(async () => {
      calls = conversationCalls.length;
      id = await requestPause('q-priv-out', 'C0PRIVOUT');
    });

    it('is not on his tab', async () => {
      const bobs = await open('bob');
      expect(textOf(bobs)).not.toContain(id);
      expect(textOf(bobs)).not.toContain('pushizo/q-priv-out');
    });

    it('his forged Approve is refused in one line', async () => {
      const answer = await bobApproves(id);
      expect(answer).toContain(`${id}\` was asked in a private channel you are not in`);
    });

    it('nothing runs after his click', async () => {
      expect(await (queues.get('q-priv-out') as Queue).isPaused()).toBe(false);
      expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Pending);
      const entries = await bot.runtime.audit.recent(20);
      const about = entries.filter((e) => (e.params as { request?: string } | undefined)?.request === id);
      expect(about.map((e) => e.action)).toEqual(['request.created']);
    });

    it('his tabs asked Slack about the channel once per method, and his click asked again', () => {
      // The tabs kept fresh and Bob's open were served from the cache after the first lookup; the
      // click, which would change something, asked Slack itself.
      expect(conversationCalls.slice(calls)).toEqual([
        'conversations.members C0PRIVOUT',
        'conversations.info C0PRIVOUT',
        'conversations.members C0PRIVOUT',
        'conversations.info C0PRIVOUT',
      ]);
    });
  });

  it('a member of the private channel sees its request on his tab and approves it there', async () => {
    const id = await requestPause('q-priv-in', 'C0PRIVIN');
    expect(textOf(await open('bob'))).toContain(`${id}: pause pushizo/q-priv-in`);
    await bobApproves(id);
    expect(await (queues.get('q-priv-in') as Queue).isPaused()).toBe(true);
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Done);
  });

  it('someone removed from the private channel after his tab listed its request cannot approve it there, though the cache still vouched for him', async () => {
    const id = await requestPause('q-priv-left', 'C0PRIVLEFT');
    expect(textOf(await open('bob'))).toContain(`${id}: pause pushizo/q-priv-left`);
    // Bob leaves the channel (or is removed) a moment later, well within the 5 minutes' cache.
    CHANNELS.C0PRIVLEFT!.members = ['U0ALICE'];
    const answer = await bobApproves(id);
    expect(answer).toContain(`${id}\` was asked in a private channel you are not in`);
    expect(await (queues.get('q-priv-left') as Queue).isPaused()).toBe(false);
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Pending);
    expect(textOf(await open('bob'))).not.toContain(id);
  });

  it('when Slack will not say who is in the channel (channel_not_found), the request is not listed and a click is refused in one line, without a crash', async () => {
    const id = await requestPause('q-gone', 'C0GONE');
    expect(textOf(await open('bob'))).not.toContain(id);
    const answer = await bobApproves(id);
    expect(answer).toContain('channel_not_found');
    expect(answer).toContain('answer it in that channel');
    expect(await (queues.get('q-gone') as Queue).isPaused()).toBe(false);
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Pending);
  });
});
