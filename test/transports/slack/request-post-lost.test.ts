import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionId } from '../../../src/blocks/action-ids.js';
import type { RunningBot } from '../../../src/transports/slack/bot.js';
import { REQUEST_EVENT } from '../../../src/transports/slack/requests.js';
import { connectionFor, deletePrefix } from '../../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../../helpers/test-redis.js';
import {
  botConfigInput,
  buttonClick,
  captureResponses,
  randomId,
  slashCommand,
  startWiredBot,
} from './harness.js';

const API_HOST = 'https://slack-lost-answer.test.example';
const API_URL = `${API_HOST}/api/`;

/** A Slack message as the stand-in keeps it: what `conversations.history` gives back. */
interface Kept {
  channel: string;
  ts: string;
  text: string;
  blocks: unknown[];
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
}

const formOf = (raw: unknown): Record<string, string> =>
  typeof raw === 'string'
    ? Object.fromEntries(new URLSearchParams(raw))
    : Object.fromEntries(Object.entries(raw as Record<string, unknown>).map(([k, v]) => [k, String(v)]));

/**
 * Issue 34 §5 "Lost answer, two posts": Slack takes an approval request's `chat.postMessage` but
 * its answer never comes back (the socket hangs up after the request body reached Slack). The bot
 * looks for its earlier post by the message metadata before posting again, as alerts do: one
 * message in the channel, with live buttons, updated in place; no second copy through respond().
 */
describe('an approval request post whose answer is lost', () => {
  const url = testRedisUrl();
  const prefix = randomId('lost');
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-lost-answer-'));
  const channelMessages: Kept[] = [];
  const methods: string[] = [];
  let postsReceived = 0;
  let tsCounter = 0;
  let bot: RunningBot;
  let queue: Queue;

  /** Slack keeps a posted message: with its ts, its blocks and its metadata. */
  function keep(form: Record<string, string>): Kept {
    tsCounter += 1;
    const kept: Kept = {
      channel: form.channel ?? '',
      ts: `${Math.floor(Date.now() / 1000)}.${String(tsCounter).padStart(6, '0')}`,
      text: form.text ?? '',
      blocks: form.blocks ? (JSON.parse(form.blocks) as unknown[]) : [],
      ...(form.metadata ? { metadata: JSON.parse(form.metadata) as Kept['metadata'] } : {}),
    };
    channelMessages.push(kept);
    return kept;
  }

  beforeAll(async () => {
    nock.disableNetConnect();
    // The first post reaches Slack, which keeps it; its answer is lost on the way back.
    nock(API_HOST)
      .post('/api/chat.postMessage', (body) => {
        postsReceived += 1;
        methods.push('chat.postMessage');
        keep(formOf(body));
        return true;
      })
      .replyWithError({ code: 'ECONNRESET', message: 'socket hang up' });
    nock(API_HOST)
      .persist()
      .post(/^\/api\//)
      .reply((uri, raw) => {
        const method = uri.replace(/^\/api\//, '');
        methods.push(method);
        const form = formOf(raw);
        if (method === 'chat.postMessage') {
          postsReceived += 1;
          const kept = keep(form);
          return [200, { ok: true, channel: kept.channel, ts: kept.ts }];
        }
        if (method === 'chat.update') {
          const kept = channelMessages.find((m) => m.ts === form.ts && m.channel === form.channel);
          if (!kept) return [200, { ok: false, error: 'message_not_found' }];
          kept.blocks = form.blocks ? (JSON.parse(form.blocks) as unknown[]) : [];
          kept.text = form.text ?? '';
          return [200, { ok: true, channel: form.channel, ts: form.ts }];
        }
        if (method === 'conversations.history') {
          const withMetadata = form.include_all_metadata === 'true';
          const messages = channelMessages
            .filter((m) => m.channel === form.channel && Number(m.ts) >= Number(form.oldest ?? 0))
            .map(({ metadata, ...m }) => ({
              type: 'message',
              ...m,
              ...(withMetadata && metadata ? { metadata } : {}),
            }))
            .reverse();
          return [200, { ok: true, messages, has_more: false }];
        }
        return [200, { ok: false, error: 'unknown_method' }];
      });
    queue = new Queue('q-lost', { connection: connectionFor(url), prefix });
    await queue.add('push', {});
    bot = await startWiredBot({
      dir,
      config: botConfigInput({ redis: url, prefix, dir }),
      token: 'xoxb-lost-answer-test',
      apiUrl: API_URL,
    });
  });

  afterAll(async () => {
    await bot?.stop();
    await queue?.close();
    await deletePrefix(url, prefix);
    rmSync(dir, { recursive: true, force: true });
    nock.cleanAll();
    nock.enableNetConnect();
  });

  const deliver = (body: Record<string, unknown>) =>
    bot.slack.app.processEvent({ body, ack: async () => {} });
  const liveButtons = (m: Kept) => JSON.stringify(m.blocks).includes(ActionId.Approve);

  let id: string;
  let answered: Record<string, unknown>[];

  it('finds the post Slack kept by its metadata and does not post it again', async () => {
    const path = `/commands/T0TEAM/${randomId('')}/cmd`;
    answered = captureResponses(path).bodies;
    await deliver(slashCommand('pause pushizo/q-lost', path, { user_id: 'U0ALICE', user_name: 'alice' }));
    await bot.idle();
    expect(postsReceived).toBe(1);
    expect(methods).toContain('conversations.history');
    expect(channelMessages).toHaveLength(1);
    const [kept] = channelMessages;
    expect(kept!.metadata?.event_type).toBe(REQUEST_EVENT);
    id = String(kept!.metadata?.event_payload.request_id);
    const request = await bot.runtime.approvals.get(id);
    expect(request?.status).toBe('pending');
    // The bot knows where its message is: later changes update it in place.
    expect(request?.messageTs).toBe(kept!.ts);
    // No copy through response_url either.
    expect(answered.filter((b) => b.response_type === 'in_channel')).toHaveLength(0);
  });

  it('has one message with live buttons, which the approval updates in place', async () => {
    expect(channelMessages.filter(liveButtons)).toHaveLength(1);
    const ts = channelMessages[0]!.ts;
    const path = `/actions/T0TEAM/${randomId('')}/click`;
    captureResponses(path);
    await deliver(
      buttonClick(ActionId.Approve, id, path, {
        user: { id: 'U0BOB', username: 'bob', name: 'bob', team_id: 'T0TEAM' },
        channel: { id: 'C0INCIDENT', name: 'incident' },
        container: { type: 'message', message_ts: ts, channel_id: 'C0INCIDENT', is_ephemeral: false },
        message: { ts, type: 'message', text: 'request', blocks: [] },
      }),
    );
    await bot.idle();
    expect(await queue.isPaused()).toBe(true);
    expect((await bot.runtime.approvals.get(id))?.status).toBe('done');
    expect(postsReceived).toBe(1);
    expect(channelMessages).toHaveLength(1);
    expect(channelMessages.filter(liveButtons)).toHaveLength(0);
    expect(JSON.stringify(channelMessages[0]!.blocks)).toContain('Done');
  });
});
