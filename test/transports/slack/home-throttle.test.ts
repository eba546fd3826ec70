import { webApi } from '@slack/bolt';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackendRegistry } from '../../../src/backends/registry.js';
import type { Config } from '../../../src/config/schema.js';
import { createHomeTab } from '../../../src/transports/slack/home.js';
import { memoryLogger } from './harness.js';

const API_HOST = 'https://slack-home-throttle.test.example';
const publishedFor: string[] = [];

beforeAll(() => {
  nock.disableNetConnect();
  nock(API_HOST)
    .persist()
    .post('/api/views.publish')
    .reply((_uri, raw) => {
      publishedFor.push(new URLSearchParams(String(raw)).get('user_id') ?? '');
      return [200, { ok: true }];
    });
});
afterAll(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

/** A tab with nothing in it: the throttle and the bound are what is under test. */
function tab(options: { minIntervalMs?: number; maxUsers?: number }) {
  return createHomeTab({
    client: new webApi.WebClient('xoxb-throttle', {
      slackApiUrl: `${API_HOST}/api/`,
      retryConfig: { retries: 0 },
    }),
    // No request is pending, so no policy is ever looked up.
    config: { policies: {} as Config['policies'] },
    backends: createBackendRegistry([]),
    approvals: { pending: async () => [] },
    alerts: { open: async () => [] },
    store: { listAudit: async () => [] },
    roles: { has: async () => false },
    logger: memoryLogger().logger,
    ...options,
  });
}

describe('Home tab refreshes: at most once per interval per user, bounded in memory', () => {
  describe('within one interval, in order', () => {
    let home: ReturnType<typeof tab>;
    beforeAll(() => {
      publishedFor.length = 0;
      home = tab({});
    });
    afterAll(() => home.stop());

    it('opens and changes publish once', async () => {
      home.opened('U1');
      await home.idle();
      home.opened('U1');
      home.changed();
      home.changed();
      await home.idle();
      expect(publishedFor).toEqual(['U1']);
    });

    it('an answer to a click is never held back', async () => {
      await home.notice('U1', 'Approved r-abc.');
      expect(publishedFor).toEqual(['U1', 'U1']);
    });
  });

  it('remembers only the most recent users: a change refreshes those, not everyone ever seen', async () => {
    publishedFor.length = 0;
    const home = tab({ minIntervalMs: 0, maxUsers: 3 });
    for (const user of ['U1', 'U2', 'U3', 'U4', 'U5']) home.opened(user);
    await home.idle();
    expect(publishedFor).toHaveLength(5);
    publishedFor.length = 0;
    home.changed();
    await home.idle();
    expect(publishedFor.sort()).toEqual(['U3', 'U4', 'U5']);
    home.stop();
  });
});
