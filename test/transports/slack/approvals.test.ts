import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps } from '../../../src/app.js';
import { ActionId } from '../../../src/blocks/action-ids.js';
import type { Message } from '../../../src/blocks/message.js';
import { validateMessage } from '../../../src/blocks/validate.js';
import { loadConfigFile } from '../../../src/config/load.js';
import { createSqliteStore } from '../../../src/store/sqlite.js';
import { RequestStatus } from '../../../src/store/store.js';
import { type RunningBot, startBot } from '../../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix } from '../../helpers/bullmq-jobs.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../../helpers/config-file.js';
import { testRedisUrl } from '../../helpers/test-redis.js';
import {
  botConfigInput,
  buttonClick,
  captureResponses,
  fakeReceiver,
  memoryLogger,
  randomId,
  slashCommand,
  startWiredBot,
} from './harness.js';

/** Slack's Web API, reached through SLACK_API_URL: every call is recorded with its parsed form body. */
const API_HOST = 'https://slack-api.test.example';
const API_URL = `${API_HOST}/api/`;

interface WebCall {
  method: string;
  body: Record<string, string>;
  blocks: Record<string, unknown>[];
  /** The `ts` the fake Slack gave a posted message. */
  ts?: string;
}

const calls: WebCall[] = [];
/** Every body any Slack endpoint received (Web API and response_url), for the leak checks. */
const everything: string[] = [];
/** Channels the bot is not a member of: chat.postMessage answers `not_in_channel` there. */
const notMember = new Set(['C0NOBOT']);
let tsCounter = 100;

function fakeSlackApi() {
  nock(API_HOST)
    .persist()
    .post(/^\/api\//)
    .reply((uri, raw) => {
      const method = uri.replace(/^\/api\//, '');
      const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
      everything.push(text);
      const body = Object.fromEntries(new URLSearchParams(text));
      const blocks = body.blocks ? (JSON.parse(body.blocks) as Record<string, unknown>[]) : [];
      const call: WebCall = { method, body, blocks };
      calls.push(call);
      if (method === 'chat.postMessage') {
        if (notMember.has(body.channel ?? '')) return [200, { ok: false, error: 'not_in_channel' }];
        tsCounter += 1;
        call.ts = `1700000100.${String(tsCounter).padStart(6, '0')}`;
        return [200, { ok: true, channel: body.channel, ts: call.ts }];
      }
      if (method === 'chat.update') return [200, { ok: true, channel: body.channel, ts: body.ts }];
      return [200, { ok: false, error: 'unknown_method' }];
    });
}

/** Every response_url body, for the leak checks. */
const answers: Record<string, unknown>[][] = [];

/** Records what respond() posts to one response_url. */
function responses(path: string) {
  const captured = captureResponses(path);
  answers.push(captured.bodies);
  return { bodies: captured.bodies };
}

const messageOf = (body: Record<string, unknown>): Message => ({
  text: String(body.text ?? ''),
  blocks: (body.blocks ?? []) as Message['blocks'],
});
const textOf = (value: unknown) => JSON.stringify(value);

interface Button {
  action_id: string;
  value: string;
  confirm?: unknown;
}
const buttonsOf = (blocks: Record<string, unknown>[]): Button[] =>
  blocks
    .filter((b) => b.type === 'actions')
    .flatMap((b) => (b.elements as Button[]).filter((e) => (e as { type?: string }).type === 'button'));

const users = {
  alice: { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: 'T0TEAM' },
  bob: { id: 'U0BOB', username: 'bob', name: 'bob', team_id: 'T0TEAM' },
  vic: { id: 'U0VIEW', username: 'vic', name: 'vic', team_id: 'T0TEAM' },
} as const;
type Who = keyof typeof users;

const QUEUES = [
  'q-posted',
  'q-approve',
  'q-viewer',
  'q-other',
  'q-double',
  'q-self',
  'q-wrong',
  'q-nobot',
  'q-typed',
  'q-deny',
  'q-expire-click',
  'q-expire-sweep',
] as const;
type QueueName = (typeof QUEUES)[number];

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  fakeSlackApi();
});
afterAll(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

describe('two-person approval through Slack, on the real bot wiring', () => {
  const url = testRedisUrl();
  const prefix = randomId('apr');
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-slack-approvals-'));
  const redisUser = randomId('qo');
  const redisPassword = randomId('pw-Secret');
  const jobMarker = randomId('JOBDATA-');
  const queues = new Map<QueueName, Queue>();
  let offsetMs = 0;
  let bot: RunningBot;
  let admin: Redis;

  beforeAll(async () => {
    // A Redis user with a password, so the bot's config carries a secret that must stay out of Slack.
    admin = new Redis(url);
    await admin.call('ACL', 'SETUSER', redisUser, 'on', `>${redisPassword}`, '~*', '&*', '+@all');
    const parsed = new URL(url);
    const botRedis = `redis://${redisUser}:${redisPassword}@${parsed.hostname}:${parsed.port}`;

    const connection = connectionFor(url);
    for (const name of QUEUES) {
      const queue = new Queue(name, { connection, prefix });
      await queue.addBulk([
        { name: 'push', data: { token: jobMarker, user: 'someone@example.com' } },
        { name: 'push', data: { token: jobMarker } },
      ]);
      queues.set(name, queue);
    }

    // Alice asks for many pauses within a minute here (botConfigInput's rate limit is out of reach).
    bot = await startWiredBot({
      dir,
      config: botConfigInput({
        redis: botRedis,
        prefix,
        dir,
        slack: { allowedChannels: ['C0INCIDENT', 'C0OTHER', 'C0NOBOT'], auditChannel: 'C0AUDIT' },
        more: { approvals: { ttlMinutes: 15 } },
      }),
      token: 'xoxb-approvals-test',
      apiUrl: API_URL,
      seams: {
        now: () => new Date(Date.now() + offsetMs),
        sweepIntervalMs: 100,
        // Slack's pace is 1 s; 50 ms keeps the test quick and still lets entries written while a
        // post is paced share the next one (an audit entry now commits with others a turn later).
        auditChannelIntervalMs: 50,
      },
    });
  });

  afterAll(async () => {
    await bot?.stop();
    for (const queue of queues.values()) await queue.close();
    await deletePrefix(url, prefix);
    await admin.call('ACL', 'DELUSER', redisUser);
    admin.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  const deliver = (body: Record<string, unknown>) =>
    bot.slack.app.processEvent({ body, ack: async () => {} });

  /** `/queue <text>` typed by `who` in `channel`; resolves once the listener has finished. */
  async function slash(text: string, who: Who = 'alice', channel = 'C0INCIDENT') {
    const path = `/commands/T0TEAM/${randomId('')}/cmd`;
    const answered = responses(path);
    const before = calls.length;
    await deliver(
      slashCommand(text, path, {
        user_id: users[who].id,
        user_name: users[who].username,
        channel_id: channel,
      }),
    );
    return { responses: answered.bodies, calls: calls.slice(before) };
  }

  /** A click on a request's button, as Slack sends it from the message with `ts`. */
  function click(
    id: string,
    ts: string,
    who: Who,
    channel = 'C0INCIDENT',
    actionId: string = ActionId.Approve,
  ) {
    const path = `/actions/T0TEAM/${randomId('')}/click`;
    const answered = responses(path);
    const body = buttonClick(actionId, id, path, {
      user: users[who],
      channel: { id: channel, name: 'some-channel' },
      container: { type: 'message', message_ts: ts, channel_id: channel, is_ephemeral: false },
      message: { ts, type: 'message', text: 'request', blocks: [] },
    });
    return { body, responses: answered.bodies, run: () => deliver(body) };
  }

  /** Alice asks to pause `queue`; returns the posted request's id and message ts. */
  async function requestPause(queue: QueueName, channel = 'C0INCIDENT') {
    const { responses: answered, calls: made } = await slash(`pause pushizo/${queue}`, 'alice', channel);
    const post = made.find((c) => c.method === 'chat.postMessage' && c.body.channel === channel);
    if (!post?.ts) throw new Error(`no request posted: ${textOf({ answered, made })}`);
    const approve = buttonsOf(post.blocks).find((b) => b.action_id === ActionId.Approve);
    if (!approve) throw new Error('posted request has no Approve button');
    return { id: approve.value, ts: post.ts, post, answered };
  }

  const updatesOf = (ts: string) => calls.filter((c) => c.method === 'chat.update' && c.body.ts === ts);
  const isPaused = (queue: QueueName) => (queues.get(queue) as Queue).isPaused();
  const executions = async (id: string) =>
    (await bot.runtime.audit.recent(1000)).filter(
      (e) => e.action === 'action.pause' && (e.params as { request?: string } | undefined)?.request === id,
    );

  it('posts a pause request with chat.postMessage, buttons carrying only the request id and a confirm on Approve', async () => {
    const { id, ts, post, answered } = await requestPause('q-posted');

    expect(id).toMatch(/^r-[a-z0-9]{8}$/);
    expect(post.body.channel).toBe('C0INCIDENT');
    // Posted by the bot itself, not through response_url, so it has a ts to update later.
    expect(answered).toHaveLength(0);
    expect(
      validateMessage({ text: post.body.text ?? '', blocks: post.blocks as unknown as Message['blocks'] }),
    ).toEqual([]);
    const buttons = buttonsOf(post.blocks);
    expect(buttons.map((b) => [b.action_id, b.value])).toEqual([
      [ActionId.Approve, id],
      [ActionId.Deny, id],
    ]);
    expect(buttons[0]?.confirm).toMatchObject({ title: { text: 'Approve this action?' } });
    expect(buttons[1]?.confirm).toBeUndefined();
    const shown = textOf(post.blocks);
    expect(shown).toContain('pause pushizo/q-posted: 2 waiting jobs stop being picked up');
    expect(shown).toContain('alice (U0ALICE)');
    expect((await bot.runtime.approvals.get(id))?.messageTs).toBe(ts);
    expect(await isPaused('q-posted')).toBe(false);

    // Asked again while it waits: one ephemeral line naming the request, no second post.
    const again = await slash('pause pushizo/q-posted', 'bob');
    expect(
      again.calls.filter((c) => c.method === 'chat.postMessage' && c.body.channel === 'C0INCIDENT'),
    ).toEqual([]);
    expect(textOf(again.responses)).toContain(`already waiting for approval as \`${id}\``);
    expect(
      (await bot.runtime.approvals.pending()).filter((r) => r.target === 'pushizo/q-posted'),
    ).toHaveLength(1);
  });

  it("runs the pause once on a second operator's Approve and updates the request message with who approved and the result", async () => {
    const { id, ts } = await requestPause('q-approve');
    const bobClicks = click(id, ts, 'bob');
    await bobClicks.run();
    await bot.idle();

    expect(await isPaused('q-approve')).toBe(true);
    expect(await executions(id)).toHaveLength(1);
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Done);

    // The click's own answer replaces the message that held the button …
    expect(bobClicks.responses).toHaveLength(1);
    const replaced = bobClicks.responses[0] as Record<string, unknown>;
    expect(replaced.replace_original).toBe(true);
    expect(validateMessage(messageOf(replaced))).toEqual([]);
    // … and chat.update brings the posted message to the same final state.
    const last = updatesOf(ts).at(-1);
    expect(last).toBeDefined();
    for (const shown of [textOf(replaced.blocks), textOf(last?.blocks)]) {
      expect(shown).toContain('Done');
      expect(shown).toContain('Approved by bob (U0BOB)');
      expect(shown).toContain('pushizo/q-approve is paused.');
      expect(shown).not.toContain(ActionId.Approve);
    }
  });

  it('runs a typed /queue approve from another operator and updates the posted request in place', async () => {
    const { id, ts } = await requestPause('q-typed');
    const { responses: answered } = await slash(`approve ${id}`, 'bob');
    await bot.idle();

    expect(await isPaused('q-typed')).toBe(true);
    expect(answered).toHaveLength(1);
    expect(answered[0]?.response_type).toBe('in_channel');
    expect(textOf(answered[0])).toContain('pushizo/q-typed is paused.');
    const last = textOf(updatesOf(ts).at(-1)?.blocks);
    expect(last).toContain('Approved by bob (U0BOB)');
    expect(last).toContain('pushizo/q-typed is paused.');
  });

  it('closes a request from its Deny button without running it, replacing the message', async () => {
    const { id, ts } = await requestPause('q-deny');
    const denied = click(id, ts, 'bob', 'C0INCIDENT', ActionId.Deny);
    await denied.run();
    await bot.idle();

    expect(denied.responses[0]).toMatchObject({ replace_original: true });
    expect(textOf(denied.responses[0])).toContain('Denied by U0BOB');
    expect(textOf(updatesOf(ts).at(-1)?.blocks)).toContain('Denied by U0BOB');
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Denied);
    expect(await isPaused('q-deny')).toBe(false);
  });

  it('answers a viewer pressing Approve with an ephemeral Forbidden and runs nothing', async () => {
    const { id, ts } = await requestPause('q-viewer');
    const vicClicks = click(id, ts, 'vic');
    await vicClicks.run();

    expect(vicClicks.responses).toHaveLength(1);
    expect(vicClicks.responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(String(vicClicks.responses[0]?.text)).toContain('You need the `operator` role');
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Pending);
    expect(await isPaused('q-viewer')).toBe(false);
  });

  it("answers an Approve button carrying another channel's request id as unknown in this channel and runs nothing", async () => {
    const { id, ts } = await requestPause('q-other', 'C0OTHER');
    const forged = click(id, ts, 'bob', 'C0INCIDENT');
    await forged.run();

    expect(forged.responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(String(forged.responses[0]?.text)).toContain(`There is no request \`${id}\` in this channel`);
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Pending);
    expect(await isPaused('q-other')).toBe(false);
  });

  it('executes once when the same click is delivered twice at the same time', async () => {
    const { id, ts } = await requestPause('q-double');
    const twice = click(id, ts, 'bob');
    await Promise.all([deliver(twice.body), deliver(twice.body)]);
    await bot.idle();

    expect(await isPaused('q-double')).toBe(true);
    expect(await executions(id)).toHaveLength(1);
    expect(twice.responses).toHaveLength(2);
    const replaced = twice.responses.filter((r) => r.replace_original === true);
    const ephemeral = twice.responses.filter((r) => r.response_type === 'ephemeral');
    expect(replaced).toHaveLength(1);
    expect(ephemeral).toHaveLength(1);
    expect(String(ephemeral[0]?.text)).toContain('already');
    expect(textOf(updatesOf(ts).at(-1)?.blocks)).toContain('pushizo/q-double is paused.');
  });

  it("refuses the requester's own Approve click as self-approval", async () => {
    const { id, ts } = await requestPause('q-self');
    const own = click(id, ts, 'alice');
    await own.run();

    expect(own.responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(String(own.responses[0]?.text)).toContain('someone else has to approve it');
    expect((await bot.runtime.approvals.get(id))?.status).toBe(RequestStatus.Pending);
    expect(await isPaused('q-self')).toBe(false);
  });

  it('answers a pause typed outside the allowed channels with an ephemeral WrongChannel naming them, and posts no request', async () => {
    const pendingBefore = (await bot.runtime.approvals.pending()).length;
    const { responses: answered, calls: made } = await slash('pause pushizo/q-wrong', 'alice', 'C0RANDOM');

    expect(answered).toHaveLength(1);
    expect(answered[0]?.response_type).toBe('ephemeral');
    const text = String(answered[0]?.text);
    expect(text).toContain('`pause` only runs in');
    expect(text).toContain('C0INCIDENT');
    expect(made.filter((c) => c.method === 'chat.postMessage' && c.body.channel === 'C0RANDOM')).toEqual([]);
    expect((await bot.runtime.approvals.pending()).length).toBe(pendingBefore);
    expect(await isPaused('q-wrong')).toBe(false);
  });

  it('falls back to respond() in the channel when the bot is not a member, and tells the requester to invite it', async () => {
    const { responses: answered, calls: made } = await slash('pause pushizo/q-nobot', 'alice', 'C0NOBOT');

    expect(made.filter((c) => c.method === 'chat.postMessage' && c.body.channel === 'C0NOBOT')).toHaveLength(
      1,
    );
    expect(answered).toHaveLength(2);
    const [posted, note] = answered as [Record<string, unknown>, Record<string, unknown>];
    expect(posted.response_type).toBe('in_channel');
    expect(validateMessage(messageOf(posted))).toEqual([]);
    const approve = buttonsOf(posted.blocks as Record<string, unknown>[]).find(
      (b) => b.action_id === ActionId.Approve,
    );
    expect(approve?.value).toMatch(/^r-/);
    expect(note).toMatchObject({ response_type: 'ephemeral' });
    expect(String(note.text)).toContain('/invite @queue-ops');

    // Its buttons still work, and the click's answer replaces the message in place.
    const bobClicks = click(approve?.value as string, '1700000000.999999', 'bob', 'C0NOBOT');
    await bobClicks.run();
    expect(bobClicks.responses[0]).toMatchObject({ replace_original: true });
    expect(textOf(bobClicks.responses[0])).toContain('pushizo/q-nobot is paused.');
    expect(await isPaused('q-nobot')).toBe(true);
  });

  it('posts every audit entry to the audit channel, several to a post, and the chain verifies afterwards', async () => {
    await bot.idle();
    const entries = await bot.runtime.audit.recent(1000);
    const posted = calls.filter((c) => c.method === 'chat.postMessage' && c.body.channel === 'C0AUDIT');

    expect(entries.length).toBeGreaterThan(10);
    expect(posted.length).toBeLessThan(entries.length);
    const seqs = posted.flatMap((c) =>
      [...textOf(c.blocks).matchAll(/#(\d+) · chain/g)].map((m) => Number(m[1])),
    );
    expect(seqs.sort((a, b) => a - b)).toEqual(entries.map((e) => e.seq).sort((a, b) => a - b));
    for (const action of [
      'request.created',
      'request.approved',
      'action.pause',
      'request.approve',
      'denied',
    ]) {
      expect(posted.some((c) => textOf(c.blocks).includes(`\`${action}\``))).toBe(true);
    }
    for (const call of posted) {
      expect(
        validateMessage({ text: call.body.text ?? '', blocks: call.blocks as unknown as Message['blocks'] }),
      ).toEqual([]);
    }
    expect(await bot.runtime.audit.verify()).toEqual({ ok: true, count: entries.length });
  });

  it('answers an Approve click on an expired request with an ephemeral expired line, and the sweep marks expired messages', async () => {
    const clicked = await requestPause('q-expire-click');
    const swept = await requestPause('q-expire-sweep');
    offsetMs = 16 * 60_000;

    // Nobody clicks this one: the 30 s timer (100 ms here) expires it and updates its message.
    await expect
      .poll(
        async () => {
          await bot.idle();
          return textOf(updatesOf(swept.ts).at(-1)?.blocks);
        },
        { timeout: 5_000 },
      )
      .toContain('Expired: nobody approved it in time');
    expect(textOf(updatesOf(swept.ts).at(-1)?.blocks)).not.toContain(ActionId.Approve);

    const late = click(clicked.id, clicked.ts, 'bob');
    await late.run();
    await bot.idle();
    expect(late.responses).toHaveLength(1);
    expect(late.responses[0]).toMatchObject({ response_type: 'ephemeral', replace_original: false });
    expect(String(late.responses[0]?.text)).toContain('expired');
    expect((await bot.runtime.approvals.get(clicked.id))?.status).toBe(RequestStatus.Expired);
    expect(textOf(updatesOf(clicked.ts).at(-1)?.blocks)).toContain('Expired');
    expect(await isPaused('q-expire-click')).toBe(false);
    expect(await isPaused('q-expire-sweep')).toBe(false);
  });

  it('never sends job data or the Redis password to Slack', async () => {
    await bot.runtime.audit.flush();
    const sent = [...everything, ...answers.flat().map((b) => textOf(b))].join('\n');

    expect(calls.length).toBeGreaterThan(20);
    expect(sent).not.toContain(redisPassword);
    expect(sent).not.toContain(jobMarker);
    expect(sent).not.toContain('someone@example.com');
  });
});

describe('the bot at start', () => {
  const url = testRedisUrl();
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-slack-start-'));
  const prefix = randomId('rst');
  afterAll(async () => {
    await deletePrefix(url, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (configFile: string) => ({
    SLACK_BOT_TOKEN: 'xoxb-start-test',
    SLACK_SIGNING_SECRET: 'unused-with-fake-receiver',
    SLACK_API_URL: API_URL,
    QUEUE_OPS_CONFIG: configFile,
  });
  const seams = {
    receiverOverride: fakeReceiver(),
    authorization: { botId: 'B0BOT', botUserId: 'U0BOT' },
    clientOptions: { retryConfig: { retries: 0 } },
    logger: memoryLogger().logger,
  };
  function capture() {
    const err: string[] = [];
    return { err, io: { stderr: (l: string) => err.push(l), stdout: () => {} } };
  }
  const writeConfig = (name: string, store: string): string =>
    writeConfigFile(
      dir,
      { systems: [bullmqSystem('pushizo', url, prefix)], slack: { allowedChannels: ['C0INCIDENT'] }, store },
      `${name}.yml`,
    );

  it('reports a request left executing as interrupted, updates its message, and does not run it again', async () => {
    const queue = new Queue('q-restart', { connection: connectionFor(url), prefix });
    await queue.add('push', { n: 1 });
    const dbPath = join(dir, 'restart.db');
    const store = createSqliteStore(dbPath);
    await store.migrate();
    // Started three minutes ago and never finished: its bot died (a fresh one may be a replica's).
    const at = new Date(Date.now() - 3 * 60_000).toISOString();
    await store.createRequest({
      id: 'r-interrupt',
      action: 'pause',
      target: 'pushizo/q-restart',
      params: { system: 'pushizo', queue: 'q-restart' },
      status: RequestStatus.Executing,
      requestedBy: 'U0ALICE',
      requestedByName: 'alice',
      via: 'slack',
      channel: 'C0INCIDENT',
      messageTs: '1700000000.777777',
      requiredApprovals: 1,
      approvals: [{ userId: 'U0BOB', userName: 'bob', at }],
      preview: 'pause pushizo/q-restart: 1 waiting job stop being picked up.',
      createdAt: at,
      expiresAt: new Date(Date.now() + 15 * 60_000).toISOString(),
      updatedAt: at,
      startedAt: at,
    });
    await store.close();

    const before = calls.length;
    const { io, err } = capture();
    const started = await startBot(env(writeConfig('restart', `sqlite:${dbPath}`)), io, seams);
    if (typeof started === 'number') throw new Error(`bot did not start: ${err.join(' ')}`);
    try {
      await started.idle();
      const updates = calls
        .slice(before)
        .filter((c) => c.method === 'chat.update' && c.body.ts === '1700000000.777777');
      expect(updates).toHaveLength(1);
      expect(updates[0]?.body.channel).toBe('C0INCIDENT');
      expect(textOf(updates[0]?.blocks)).toContain('Interrupted: it may have run');
      expect((await started.runtime.approvals.get('r-interrupt'))?.status).toBe(RequestStatus.Interrupted);
      const audit = await started.runtime.audit.recent(10);
      expect(audit.map((e) => [e.action, e.outcome])).toContainEqual(['request.interrupted', 'interrupted']);
      expect(await queue.isPaused()).toBe(false);
    } finally {
      await started.stop();
      await queue.close();
    }
  });

  it('redraws the message of a purge that recovery finished at start: Done, where it said Failed', async () => {
    const name = 'q-recover';
    const queue = new Queue(name, { connection: connectionFor(url), prefix });
    await queue.addBulk(Array.from({ length: 25_000 }, (_, i) => ({ name: 'push', data: { i } })));
    const configFile = writeConfigFile(
      dir,
      {
        systems: [bullmqSystem('pushizo', url, prefix)],
        slack: { allowedChannels: ['C0INCIDENT'] },
        store: `sqlite:${join(dir, 'recover.db')}`,
        roles: TEST_ROLES,
        policies: { purge: { role: 'admin', approvals: 0 } },
        archive: { dir: join(dir, 'archive') },
      },
      'recover.yml',
    );
    // A process stopped mid-purge: the purge halts at a safe point and is left to recovery; its
    // request says failed, and its Slack message too.
    const first = await createQueueOps({
      config: loadConfigFile(configFile, {}),
      env: {},
      logger: memoryLogger().logger,
    });
    first.approvals.onProgress(() => first.approvals.abortExecutions());
    const reply = await first.dispatcher.handle({
      actor: { id: 'U0BOB' },
      via: 'slack',
      channel: 'C0INCIDENT',
      words: ['purge', `pushizo/${name}`, 'waiting'],
      locale: 'en',
    });
    const id = (reply.data as { request: { id: string } }).request.id;
    expect((await first.store.getPurge(id))?.state).toBe('archiving');
    expect((await first.approvals.get(id))?.status).toBe(RequestStatus.Failed);
    await first.approvals.attachMessage(id, '1700000000.888888');
    await first.close();

    const before = calls.length;
    const { io, err } = capture();
    const started = await startBot(env(configFile), io, seams);
    if (typeof started === 'number') throw new Error(`bot did not start: ${err.join(' ')}`);
    try {
      await started.idle();
      expect((await started.runtime.approvals.get(id))?.status).toBe(RequestStatus.Done);
      expect(await queue.count()).toBe(0);
      const updates = calls
        .slice(before)
        .filter((c) => c.method === 'chat.update' && c.body.ts === '1700000000.888888');
      expect(updates.length).toBeGreaterThanOrEqual(1);
      expect(updates.at(-1)?.body.channel).toBe('C0INCIDENT');
      expect(textOf(updates.at(-1)?.blocks)).toContain('Done');
      expect(textOf(updates.at(-1)?.blocks)).not.toContain('Failed');
    } finally {
      await started.stop();
      await queue.close();
    }
  }, 60_000);

  it('stops with one line and exit code 1 when its store cannot be opened', async () => {
    // A directory where the database file should be.
    const { io, err } = capture();
    expect(await startBot(env(writeConfig('no-store', `sqlite:${dir}`)), io, seams)).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^queue-ops did not start: /);
    expect(err[0]).toContain('store');
  });

  it('keeps a PostgreSQL password out of the line that says the store is down', async () => {
    const { io, err } = capture();
    const code = await startBot(
      env(writeConfig('pg-down', 'postgres://postgres:pg-Secret-77@127.0.0.1:1/queue_ops')),
      io,
      seams,
    );
    expect(code).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^queue-ops did not start: /);
    expect(err[0]).not.toContain('pg-Secret-77');
  });
});
