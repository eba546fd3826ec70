import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webApi } from '@slack/bolt';
import { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps } from '../../src/app.js';
import { configSchema } from '../../src/config/schema.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { createLogger } from '../../src/lib/logger.js';
import { createProgressBar } from '../../src/transports/cli/progress.js';
import { createRequestMessageUpdater } from '../../src/transports/slack/requests.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const API_HOST = 'https://slack-progress.test.example';

describe('a long purge shows its progress', () => {
  const redisUrl = testRedisUrl();
  const prefix = randomName('qpr');
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-progress-'));
  const updates: string[] = [];

  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    nock(API_HOST)
      .persist()
      .post('/api/chat.update')
      .reply((_uri, raw) => {
        const body = Object.fromEntries(new URLSearchParams(String(raw)));
        updates.push(`${body.ts} ${body.blocks}`);
        return [200, { ok: true, channel: body.channel, ts: body.ts }];
      });
  });
  afterAll(async () => {
    nock.cleanAll();
    nock.enableNetConnect();
    await deletePrefix(redisUrl, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  it('in Slack: the request message is updated in place at most every 2 s, then with the outcome and the undo id', async () => {
    const redis = new Redis(redisUrl);
    await seedRawBullmqJobs(redis, { prefix, queue: 'events', count: 6000 });
    redis.disconnect();
    const config = configSchema.parse({
      store: `sqlite:${join(dir, 'q.db')}`,
      roles: { admin: ['U0BOB', 'U0ERIN'] },
      slack: { allowedChannels: ['C0OPS'] },
      archive: { dir: join(dir, 'archive') },
      systems: [{ name: 'hs', type: 'bullmq', redis: redisUrl, prefix }],
    });
    const ops = await createQueueOps({ config, env: {}, logger: createLogger({ level: 'silent' }) });
    // A clock that moves 1 s each time the updater looks at it: the throttle, not the test's speed, decides.
    let clock = Date.parse('2030-01-01T00:00:00Z');
    const updater = createRequestMessageUpdater({
      client: new webApi.WebClient('xoxb-test', {
        slackApiUrl: `${API_HOST}/api/`,
        retryConfig: { retries: 0 },
      }),
      logger: createLogger({ level: 'silent' }),
      now: () => {
        clock += 1000;
        return new Date(clock);
      },
    });
    let reports = 0;
    ops.approvals.onChange(updater.listener);
    ops.approvals.onProgress(updater.progress);
    ops.approvals.onProgress(() => {
      reports += 1;
    });
    try {
      const reply = await ops.dispatcher.handle({
        actor: { id: 'U0BOB' },
        via: 'slack',
        channel: 'C0OPS',
        words: ['purge', 'hs/events'],
        locale: 'en',
      });
      const id = (reply.data as { request: { id: string } }).request.id;
      await ops.approvals.attachMessage(id, '1700000000.000100');
      const done = await ops.approvals.approve(id, { id: 'U0ERIN', via: 'slack', channel: 'C0OPS' });
      expect(done.status).toBe('done');
      await updater.idle();
      const progress = updates.filter((u) => u.includes('Purging'));
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.length).toBeLessThan(reports);
      expect(progress[0]).toMatch(/Purging… [\d,]+ of 6,000, \d+ %/);
      const last = updates.at(-1)!;
      expect(last).toContain('Purged 6,000 of 6,000 archived jobs');
      expect(last).toContain(`/queue undo ${id}`);
      expect(last).not.toContain('Purging');
    } finally {
      await updater.idle();
      await ops.close();
    }
  }, 60_000);

  it('on a terminal: a bar on stderr, redrawn in place, ended with a newline', () => {
    const written: string[] = [];
    let t = 0;
    const bar = createProgressBar({
      write: (s) => written.push(s),
      locale: 'en',
      now: () => {
        t += 1000;
        return t;
      },
    });
    const request = { action: 'purge' } as Parameters<typeof bar.listener>[0];
    bar.listener(request, { done: 0, total: 1_000_000 });
    bar.listener(request, { done: 340_000, total: 1_000_000 });
    bar.end();
    expect(written[1]).toMatch(/^\r\[#{8}\.{16}\] Purging… 340,000 of 1,000,000, 34 %, ~2 s left/);
    expect(written.at(-1)).toBe('\n');
  });
});
