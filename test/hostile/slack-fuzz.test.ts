import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import fc from 'fast-check';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionId } from '../../src/blocks/action-ids.js';
import type { Message } from '../../src/blocks/message.js';
import { validateMessage } from '../../src/blocks/validate.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { connectionFor, randomName } from '../commands/fixture.js';
import {
  buttonClick,
  captureResponses,
  HOOKS,
  memoryLogger,
  slashCommand,
  startWiredBot,
} from '../transports/slack/harness.js';
import { brief, isPidboxKey, keyOf, type RedisWatch, watchRedis } from './redis-watch.js';

/**
 * Every Bolt listener of the real bot (`startBot`: the guards, request delivery, Home tab) fed
 * forged and malformed Slack payloads: block_actions with any action id, any value (real request
 * ids of another channel included), missing or extra fields; view submissions and other payload
 * types queue-ops never asked for; slash commands with any text. For each: acknowledged once,
 * answered with a valid message or not at all, an error never replacing a shared message, nothing
 * logged as an unexpected failure, and no approval moved nor Redis written unless the click was an
 * Approve or Deny that its clicker may make, in the channel of the request.
 */

const API_HOST = 'https://slack-api.fuzz.example';
const QUEUES = ['dispatch-ios', 'we*rd', 'weXrd', 'events'] as const;
const USERS = {
  alice: { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: 'T0TEAM' },
  bob: { id: 'U0BOB', username: 'bob', name: 'bob', team_id: 'T0TEAM' },
  vic: { id: 'U0VIEW', username: 'vic', name: 'vic', team_id: 'T0TEAM' },
} as const;
const OPERATORS = new Set(['U0ALICE', 'U0BOB']);

let redis: PrivateRedis;
let watch: RedisWatch;
let bot: RunningBot;
let dir: string;
const prefix = randomName('sf');
const queues: Queue[] = [];
/** The bot's log lines (pino, parsed). */
let logLines: Record<string, unknown>[] = [];
const apiCalls: { method: string; body: Record<string, string> }[] = [];
/** Requests waiting in C0INCIDENT and C0OTHER (made by alice), the values forged clicks aim at. */
const requests: { id: string; channel: string; queue: string }[] = [];
let tsCounter = 0;

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  nock(API_HOST)
    .persist()
    .post(/^\/api\//)
    .reply((uri, raw) => {
      const method = uri.replace(/^\/api\//, '');
      const body = Object.fromEntries(new URLSearchParams(typeof raw === 'string' ? raw : ''));
      apiCalls.push({ method, body });
      if (method === 'chat.postMessage') {
        tsCounter += 1;
        return [
          200,
          { ok: true, channel: body.channel, ts: `1700000200.${String(tsCounter).padStart(6, '0')}` },
        ];
      }
      if (method === 'chat.update') return [200, { ok: true, channel: body.channel, ts: body.ts }];
      if (method === 'users.info') return [200, { ok: true, user: { id: body.user, locale: 'en-US' } }];
      return [200, { ok: false, error: 'unknown_method' }];
    });

  redis = await startPrivateRedis();
  const connection = connectionFor(redis.url);
  for (const name of QUEUES) {
    const queue = new Queue(name, { connection, prefix });
    queues.push(queue);
    await queue.addBulk([{ name: 'push', data: { secret: 'JOB-PAYLOAD-MARKER' } }]);
  }
  watch = await watchRedis(redis.url);

  dir = mkdtempSync(join(tmpdir(), 'queue-ops-slack-fuzz-'));
  const configFile = join(dir, 'queue-ops.yml');
  writeFileSync(
    configFile,
    `systems:
  - { name: pushizo, type: bullmq, redis: "${redis.url}", prefix: ${prefix} }
slack: { allowedChannels: [C0INCIDENT, C0OTHER] }
store: sqlite:${join(dir, 'bot.db')}
roles: { viewer: ["*"], operator: [U0ALICE, U0BOB] }
policies: { pause: { role: operator, approvals: 1 }, resume: { role: operator, approvals: 1 } }
rateLimit: { perUserPerMinute: 10000 }
`,
  );
  const { logger, lines } = memoryLogger();
  bot = await startWiredBot({
    dir,
    configFile,
    token: 'xoxb-fuzz',
    apiUrl: `${API_HOST}/api/`,
    seams: { logger, homeMinIntervalMs: 0 },
  });
  logLines = lines;

  // Alice asks to pause three queues, in two channels; bob's and vic's clicks are the fuzz.
  for (const [queue, channel] of [
    ['dispatch-ios', 'C0INCIDENT'],
    ['we*rd', 'C0INCIDENT'],
    ['events', 'C0OTHER'],
  ] as const) {
    const path = `/commands/${randomName('')}`;
    captureResponses(path);
    await bot.slack.app.processEvent({
      body: slashCommand(`pause pushizo/${queue}`, path, { channel_id: channel }),
      ack: async () => {},
    });
    const pending = (await bot.runtime.approvals.pending()).find((r) => r.target === `pushizo/${queue}`);
    if (!pending) throw new Error(`no request for ${queue}`);
    requests.push({ id: pending.id, channel, queue });
  }
  await bot.idle();
  await watch.settle();
}, 120_000);

afterAll(async () => {
  await bot?.stop();
  watch?.close();
  for (const queue of queues) await queue.close();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  nock.cleanAll();
  nock.enableNetConnect();
});

/** What one delivery did: acks, answers posted to its response_url, Web API calls, error logs. */
async function deliver(body: unknown, path: string) {
  const answered = captureResponses(path);
  const callsBefore = apiCalls.length;
  const logsBefore = logLines.length;
  let acks = 0;
  let rejected: unknown;
  try {
    await bot.slack.app.processEvent({
      body: body as Record<string, unknown>,
      ack: async () => {
        acks += 1;
      },
    });
  } catch (error) {
    rejected = error;
  }
  await bot.idle();
  return {
    acks,
    rejected,
    answers: answered.bodies,
    calls: apiCalls.slice(callsBefore),
    errors: logLines.slice(logsBefore).filter((l) => Number(l.level) >= 50),
  };
}

/** An error thrown by Bolt's own payload parsing, before any listener ran (its stack is Bolt's). */
function boltRefused(error: unknown): boolean {
  // Bolt's listener matching (`action_id.match`) fails once per listener: all of them Bolt's.
  const originals = (error as { originals?: unknown[] })?.originals;
  if (Array.isArray(originals)) return originals.length > 0 && originals.every(boltRefused);
  const stack = String((error as Error)?.stack ?? '');
  const first = stack.split('\n').find((line) => line.trim().startsWith('at ')) ?? '';
  // Thrown in Bolt itself (the processEvent wrappers of create-app.ts and listeners.ts may stand
  // below it on the stack: they only hand the payload on).
  return first.includes('@slack/bolt');
}

const messageOf = (body: Record<string, unknown>): Message => ({
  text: String(body.text ?? ''),
  blocks: (body.blocks ?? []) as Message['blocks'],
});
/** `errorMessage`'s shape: one section, `:warning: ` and the line. */
const isError = (body: Record<string, unknown>) => {
  const blocks = (body.blocks ?? []) as { type?: string; text?: { text?: string } }[];
  return blocks.length === 1 && String(blocks[0]?.text?.text ?? '').startsWith(':warning: ');
};

async function statuses(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const r of requests) out.set(r.id, (await bot.runtime.approvals.get(r.id))?.status ?? 'missing');
  return out;
}

const ACTION_IDS = Object.values(ActionId);
const actionId = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ACTION_IDS) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...ACTION_IDS), fc.nat(40)).map(([id, n]) => `${id}#${n}`),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'queue_ops.evil',
      'queue_ops.request.approve#',
      'queue_ops.request.approve#-1',
      'queue_ops.request.approve#1#2',
      'QUEUE_OPS.STATUS.REFRESH',
      'queue_ops.status.refresh\n',
      'queue_ops..',
      'other_app.button',
      '',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(5, null, {}, ['queue_ops.request.approve']) },
);
const value = fc.oneof(
  { weight: 4, arbitrary: fc.nat().map((i) => ({ request: i })) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      ...QUEUES.map((q) => `pushizo/${q}`),
      'pushizo',
      'pushizo/*',
      'pushizo/we?rd',
      '',
      ' ',
      'r-00000000',
      'a-00000000',
      'x'.repeat(255),
      'x'.repeat(256),
      'pushizo/events\n',
      'pushizo/ev\u0000ents',
      '<!channel>',
      'ｐｕｓｈｉｚｏ/events',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constantFrom(7, null, { id: 'r-1' }, ['r-1'], true, undefined) },
);
const user = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(USERS.alice, USERS.bob, USERS.vic) },
  { weight: 1, arbitrary: fc.constantFrom(null, 'U0BOB', {}, { id: 5 }, { id: '' }, { id: 'U0BOB\n' }) },
);
const channel = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('C0INCIDENT', 'C0OTHER', 'C0RANDOM').map((id) => ({ id, name: 'x' })),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, 'C0INCIDENT', { id: 5 }, {}) },
);
const container = fc.constantFrom(
  'message',
  'ephemeral',
  'home',
  'none',
  'forged-home-with-channel',
) as fc.Arbitrary<'message' | 'ephemeral' | 'home' | 'none' | 'forged-home-with-channel'>;
const extra = fc.dictionary(
  fc.constantFrom(
    'view',
    'state',
    'message',
    'response_url',
    'actions',
    'trigger_id',
    'enterprise',
    'is_enterprise_install',
    'team',
    'type',
    'api_app_id',
    '__proto__',
    'constructor',
  ),
  fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)),
  { maxKeys: 2 },
);

const click = fc.record({
  actionId,
  value,
  user,
  channel,
  container,
  extra,
  actions: fc.constantFrom('one', 'none', 'two', 'not-a-list'),
  responseUrl: fc.boolean(),
});
type Click = typeof click extends fc.Arbitrary<infer T> ? T : never;

function payloadOf(c: Click, path: string): { body: Record<string, unknown>; value: unknown } {
  const v =
    typeof c.value === 'object' && c.value !== null && 'request' in c.value
      ? requests[(c.value as { request: number }).request % requests.length]!.id
      : c.value;
  const base = buttonClick(String(c.actionId), String(v), path) as Record<string, unknown>;
  const action = { ...(base.actions as Record<string, unknown>[])[0]!, action_id: c.actionId, value: v };
  const channelId =
    typeof c.channel === 'object' && c.channel !== null ? (c.channel as { id?: unknown }).id : c.channel;
  const body: Record<string, unknown> = {
    ...base,
    user: c.user,
    channel: c.channel,
    actions:
      c.actions === 'one'
        ? [action]
        : c.actions === 'none'
          ? []
          : c.actions === 'two'
            ? [action, action]
            : action,
  };
  if (c.container === 'message' || c.container === 'ephemeral')
    body.container = {
      type: 'message',
      message_ts: '1700000000.000100',
      channel_id: channelId,
      is_ephemeral: c.container === 'ephemeral',
    };
  else if (c.container === 'home' || c.container === 'forged-home-with-channel') {
    body.container = { type: 'view', view_id: 'V0HOME' };
    body.view = { id: 'V0HOME', type: 'home' };
    if (c.container === 'home') delete body.channel;
    delete body.message;
  } else delete body.container;
  if (!c.responseUrl) delete body.response_url;
  for (const [key, val] of Object.entries(c.extra)) {
    if (key === 'type' || key === 'actions') continue;
    Object.defineProperty(body, key, { value: val, enumerable: true, writable: true, configurable: true });
  }
  return { body, value: v };
}

/** May this click have moved `request` on? Only Approve/Deny by an operator (Deny also by alice who asked), in its channel. */
function mayDecide(c: Click, value: unknown, request: { id: string; channel: string }): boolean {
  const base = typeof c.actionId === 'string' ? c.actionId.replace(/#\d+$/, '') : '';
  const userId = typeof c.user === 'object' && c.user !== null ? (c.user as { id?: unknown }).id : undefined;
  const channelId =
    typeof c.channel === 'object' && c.channel !== null ? (c.channel as { id?: unknown }).id : undefined;
  return (
    (base === ActionId.Approve || base === ActionId.Deny) &&
    value === request.id &&
    typeof userId === 'string' &&
    OPERATORS.has(userId) &&
    // The requester (alice) may withdraw with Deny, never approve her own request.
    (userId !== 'U0ALICE' || base === ActionId.Deny) &&
    // A Home tab click has no channel check (only the role): a forged channel beside it changes nothing.
    (channelId === request.channel || c.container === 'home' || c.container === 'forged-home-with-channel')
  );
}

describe('every Bolt listener under forged and malformed payloads, on the real bot wiring', () => {
  it('acks each button payload once, answers it validly or not at all, and changes only what an allowed click asked for', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(click, async (c) => {
        n += 1;
        const path = `/actions/T0TEAM/${n}/${randomName('')}`;
        const { body, value: v } = payloadOf(c, path);
        const before = await statuses();
        const run = await deliver(body, path);
        const context = JSON.stringify(body).slice(0, 600);
        if (run.rejected) {
          // A payload outside Slack's own schema (`user: null`, a numeric action_id) is refused by
          // Bolt's parsing before any listener of ours (its receivers log it and answer 500); only
          // Slack can send one, signed. Then nothing at all happened.
          expect(boltRefused(run.rejected), `${context}: ${String(run.rejected)}`).toBe(true);
          expect(run.answers, context).toEqual([]);
        } else {
          // Every other payload is acked once; one without a usable action is routed to the
          // not-ours listener (routeActionlessClicks) and answered with its one line.
          expect(run.acks, context).toBe(1);
        }
        // Bolt logs its own refusal of a payload outside Slack's schema; nothing of ours may log an error.
        const ours = run.rejected ? [] : run.errors;
        expect(
          ours.map((l) => `${l.msg} ${JSON.stringify(l.err ?? '').slice(0, 400)}`),
          context,
        ).toEqual([]);
        for (const answer of run.answers) {
          expect(validateMessage(messageOf(answer)), context).toEqual([]);
          // An error is for the clicker alone; it never overwrites the shared message.
          if (isError(answer)) {
            expect(answer.response_type, context).toBe('ephemeral');
            expect(answer.replace_original, context).not.toBe(true);
          }
          expect(JSON.stringify(answer), context).not.toContain('JOB-PAYLOAD-MARKER');
          expect(JSON.stringify(answer), context).not.toMatch(/<!channel>/);
        }
        expect(run.answers.length, context).toBeLessThanOrEqual(1);
        // A click never posts a new message anywhere.
        expect(
          run.calls.filter((call) => call.method === 'chat.postMessage'),
          context,
        ).toEqual([]);

        const after = await statuses();
        const moved = requests.filter((r) => before.get(r.id) !== after.get(r.id));
        for (const r of moved) expect(mayDecide(c, v, r), `${context}: ${r.id} moved`).toBe(true);
        // Writes only to the queues of requests that were decided (now or in an earlier click whose
        // action finished late), never to another queue: not to weXrd beside we*rd.
        const decided = requests
          .filter((r) => after.get(r.id) !== 'pending')
          .map((r) => `${prefix}:${r.queue}:`);
        const writes = watch.writesIn(await watch.settle()).filter((w) => !isPidboxKey(keyOf(w)));
        expect(
          writes.filter((w) => !decided.some((p) => keyOf(w).startsWith(p))).map(brief),
          context,
        ).toEqual([]);
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it('answers a click whose response_url is not a URL (a Home tab click with a forged field) without an unexpected failure', async () => {
    for (const responseUrl of [{}, 5, 'not a url', ['x']]) {
      const path = `/actions/forged/${randomName('')}`;
      const { body } = payloadOf(
        {
          actionId: ActionId.AlertAck,
          value: 'a-00000000',
          user: USERS.bob,
          channel: null,
          container: 'home',
          extra: { response_url: responseUrl },
          actions: 'one',
          responseUrl: false,
        },
        path,
      );
      const run = await deliver(body, path);
      expect(run.rejected).toBeUndefined();
      expect(run.acks).toBe(1);
      expect(run.errors.map((l) => `${l.msg} ${JSON.stringify(l.err ?? '').slice(0, 400)}`)).toEqual([]);
    }
  });

  it('acks or ignores payload types queue-ops never asked for (views, shortcuts, options) without an error', async () => {
    const types = fc.constantFrom(
      'view_submission',
      'view_closed',
      'block_suggestion',
      'shortcut',
      'message_action',
      'interactive_message',
      'dialog_submission',
      'workflow_step_edit',
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        types,
        fc.string({ maxLength: 30 }),
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom(USERS.bob, USERS.vic, null),
        async (type, callbackId, state, who) => {
          n += 1;
          const path = `/views/${n}/${randomName('')}`;
          const before = await statuses();
          const run = await deliver(
            {
              type,
              team: { id: 'T0TEAM' },
              user: who,
              api_app_id: 'A0QUEUEOPS',
              token: 'unused',
              trigger_id: '1.2.3',
              callback_id: callbackId,
              action_id: callbackId,
              view: {
                id: 'V1',
                type: 'modal',
                callback_id: callbackId,
                state: { values: state },
                private_metadata: requests[0]!.id,
              },
              response_url: `${HOOKS}${path}`,
              actions: [{ action_id: ActionId.Approve, value: requests[0]!.id, name: 'approve' }],
            },
            path,
          );
          const context = `${type} ${callbackId}`;
          expect(
            run.errors.map((l) => `${l.msg} ${JSON.stringify(l.err ?? '').slice(0, 400)}`),
            context,
          ).toEqual([]);
          expect(
            run.calls.filter((call) => call.method.startsWith('chat.')),
            context,
          ).toEqual([]);
          for (const answer of run.answers) expect(validateMessage(messageOf(answer)), context).toEqual([]);
          expect(await statuses(), context).toEqual(before);
          expect(watch.writesIn(await watch.settle()).map(brief), context).toEqual([]);
          if (run.rejected)
            expect(boltRefused(run.rejected), `${context}: ${String(run.rejected)}`).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);

  it('answers a slash command of any text from anyone once, validly, without moving a request or writing Redis', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 80 }),
          fc.constantFrom(
            'approve',
            'deny " unterminated',
            'approve “curly',
            "deny r-x it's stale",
            'status pushizo/we*rd\u2028x',
            'dlq "pushizo/events" -1',
          ),
          fc.nat().map((i) => `deny ${requests[i % requests.length]!.id} because\nnewline`),
        ),
        fc.constantFrom('U0BOB', 'U0VIEW', '', 'U0BOB\n'),
        fc.constantFrom('C0INCIDENT', 'C0OTHER', 'C0RANDOM', ''),
        async (text, userId, channelId) => {
          n += 1;
          const path = `/commands/${n}/${randomName('')}`;
          const before = await statuses();
          const run = await deliver(
            slashCommand(text, path, { user_id: userId, channel_id: channelId }),
            path,
          );
          const context = JSON.stringify({ text, userId, channelId });
          expect(run.rejected, context).toBeUndefined();
          expect(run.acks, context).toBe(1);
          expect(
            run.errors.map((l) => `${l.msg} ${JSON.stringify(l.err ?? '').slice(0, 400)}`),
            context,
          ).toEqual([]);
          for (const answer of run.answers) expect(validateMessage(messageOf(answer)), context).toEqual([]);
          const after = await statuses();
          // Only bob's deny of a request in its own channel may move it.
          for (const r of requests) {
            if (before.get(r.id) !== after.get(r.id)) {
              expect(userId === 'U0BOB' && channelId === r.channel && text.includes(r.id), context).toBe(
                true,
              );
            }
          }
          expect(
            watch
              .writesIn(await watch.settle())
              .filter((w) => !isPidboxKey(keyOf(w)))
              .map(brief),
            context,
          ).toEqual([]);
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);
});
