import { webApi } from '@slack/bolt';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Message } from '../../../src/blocks/message.js';
import { validateMessage } from '../../../src/blocks/validate.js';
import type { AuditEntry } from '../../../src/store/store.js';
import { createAuditChannelSink } from '../../../src/transports/slack/audit-channel.js';
import { memoryLogger } from './harness.js';

const API_HOST = 'https://slack-audit.test.example';

function entry(seq: number): AuditEntry {
  return {
    seq,
    at: new Date(Date.parse('2030-01-01T10:00:00.000Z') + seq * 1000).toISOString(),
    actorId: 'U0VIEW',
    actorName: 'vic',
    via: 'slack',
    channel: 'C0INCIDENT',
    action: 'command.status',
    target: 'pushizo',
    params: { args: ['pushizo'] },
    outcome: 'ok',
    prevHash: `${seq - 1}`.padStart(64, 'a'),
    hash: `${seq}`.padStart(64, 'f'),
  };
}

interface Post {
  text: string;
  blocks: Record<string, unknown>[];
}

describe('the audit channel under a flood of entries', () => {
  let posts: Post[];
  let failNext: number;

  beforeEach(() => {
    nock.disableNetConnect();
    posts = [];
    failNext = 0;
    nock(API_HOST)
      .persist()
      .post('/api/chat.postMessage')
      .delay(20)
      .reply((_uri, raw) => {
        const body = Object.fromEntries(new URLSearchParams(String(raw)));
        if (failNext > 0) {
          failNext -= 1;
          return [200, { ok: false, error: 'ratelimited' }];
        }
        posts.push({ text: body.text ?? '', blocks: JSON.parse(body.blocks ?? '[]') });
        return [200, { ok: true, channel: body.channel, ts: `1.${posts.length}` }];
      });
  });
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });

  const client = () =>
    new webApi.WebClient('xoxb-audit-test', { slackApiUrl: `${API_HOST}/api/`, retryConfig: { retries: 0 } });
  const seqsIn = (post: Post) =>
    [...JSON.stringify(post.blocks).matchAll(/#(\d+) · chain/g)].map((m) => Number(m[1]));

  it('batches entries, keeps at most 500 waiting, and says in the next post how many were left out', async () => {
    const { logger } = memoryLogger();
    const channel = createAuditChannelSink({
      client: client(),
      channel: 'C0AUDIT',
      logger,
      minIntervalMs: 0,
    });

    // `/queue status` in a loop: 1,200 entries faster than Slack takes posts.
    for (let seq = 1; seq <= 1200; seq++) await channel.sink(entry(seq));
    await channel.idle();

    const posted = posts.flatMap(seqsIn);
    // The first goes out at once; while it is in flight the rest pile up. The newest 500 are
    // posted, in order, 20 to a post; the 699 in between are counted, not lost silently.
    expect(posted).toEqual([1, ...Array.from({ length: 500 }, (_, i) => 701 + i)]);
    expect(posts).toHaveLength(1 + 25);
    expect(JSON.stringify(posts[1]?.blocks)).toContain(
      '699 entries were not posted here (between #2 and #700); they are in the store',
    );
    expect(posts.filter((p) => JSON.stringify(p.blocks).includes('not posted'))).toHaveLength(1);
    for (const post of posts) {
      expect(
        validateMessage({ text: post.text, blocks: post.blocks as unknown as Message['blocks'] }),
      ).toEqual([]);
    }
  });

  it('a post Slack refuses is counted in the next one that gets through', async () => {
    const { logger, lines } = memoryLogger();
    const channel = createAuditChannelSink({
      client: client(),
      channel: 'C0AUDIT',
      logger,
      minIntervalMs: 0,
    });
    failNext = 1;
    for (let seq = 1; seq <= 3; seq++) await channel.sink(entry(seq));
    await channel.idle();
    await channel.sink(entry(4));
    await channel.idle();

    // Entry 1 went out alone and was refused; 2 and 3 follow with the note; 4 is posted on its own.
    expect(posts.map(seqsIn)).toEqual([[2, 3], [4]]);
    expect(JSON.stringify(posts[0]?.blocks)).toContain(
      '1 entry was not posted here (#1); it is in the store',
    );
    expect(JSON.stringify(posts[1]?.blocks)).not.toContain('not posted');
    expect(
      lines.some((l) => l.msg === 'audit entries not posted to the audit channel; they are stored'),
    ).toBe(true);
  });

  it('a lone entry with nothing to report keeps the single-entry layout', async () => {
    const { logger } = memoryLogger();
    const channel = createAuditChannelSink({
      client: client(),
      channel: 'C0AUDIT',
      logger,
      minIntervalMs: 0,
    });
    await channel.sink(entry(7));
    await channel.idle();
    expect(posts).toHaveLength(1);
    expect(JSON.stringify(posts[0]?.blocks)).toContain('#7 · chain');
    expect(posts[0]?.text).toContain('Audit #7');
  });
});
