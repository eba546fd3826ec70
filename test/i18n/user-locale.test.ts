import { webApi } from '@slack/bolt';
import { Queue } from 'bullmq';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSlackDirectory } from '../../src/guards/slack-directory.js';
import { createUserLocales } from '../../src/transports/slack/user-locale.js';
import { connectionFor, deletePrefix } from '../helpers/bullmq-jobs.js';
import { bullmqSystem } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import {
  type AppHarness,
  captureResponses,
  randomId,
  slashCommand,
  startHarness,
} from '../transports/slack/harness.js';

const API = 'https://slack.com';

/** Slack's users.info with include_locale, for one user; counts the calls. */
function serveLocale(userId: string, locale: string | { error: string }) {
  const calls = { count: 0, includeLocale: [] as string[] };
  nock(API)
    .persist()
    .post('/api/users.info', (body: Record<string, string>) => {
      if (body.user !== userId) return false;
      calls.includeLocale.push(String(body.include_locale));
      return true;
    })
    .reply(() => {
      calls.count++;
      if (typeof locale !== 'string') return [200, { ok: false, error: locale.error }];
      return [200, { ok: true, user: { id: userId, name: userId.toLowerCase(), locale } }];
    });
  return calls;
}

const client = () => new webApi.WebClient('xoxb-test-token', { retryConfig: { retries: 0 } });

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
});
afterAll(() => {
  nock.enableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});

describe("a user's own Slack locale", () => {
  it('asks users.info with include_locale once per user within the hour: tr-TR → tr, en-GB → en, de-DE → config', async () => {
    const tr = serveLocale('U0AYSE', 'tr-TR');
    const en = serveLocale('U0JOHN', 'en-GB');
    const de = serveLocale('U0HANS', 'de-DE');
    let now = 1_000_000;
    const userLocale = createUserLocales({
      lookup: async (id) => createSlackDirectory(client()).userLocale?.(id),
      now: () => now,
    });
    expect(await userLocale('U0AYSE')).toBe('tr');
    expect(await userLocale('U0AYSE')).toBe('tr');
    expect(await userLocale('U0JOHN')).toBe('en');
    expect(await userLocale('U0HANS')).toBeUndefined();
    expect(tr.count).toBe(1);
    expect(tr.includeLocale).toEqual(['true']);
    expect(en.count + de.count).toBe(2);
    now += 60 * 60_000 + 1;
    expect(await userLocale('U0AYSE')).toBe('tr');
    expect(tr.count).toBe(2);
  });

  it('a failed lookup answers undefined (the config locale) and is not retried for a minute', async () => {
    const calls = serveLocale('U0GONE', { error: 'user_not_found' });
    let now = 0;
    const userLocale = createUserLocales({
      lookup: async (id) => createSlackDirectory(client()).userLocale?.(id),
      now: () => now,
    });
    expect(await userLocale('U0GONE')).toBeUndefined();
    expect(await userLocale('U0GONE')).toBeUndefined();
    expect(calls.count).toBe(1);
    now += 60_001;
    await userLocale('U0GONE');
    expect(calls.count).toBe(2);
  });
});

describe('Slack answers each user in their own language over a config in English', () => {
  const url = testRedisUrl();
  const prefix = randomId('loc');
  let harness: AppHarness;
  let queue: Queue;

  beforeAll(async () => {
    queue = new Queue('dispatch-ios', { connection: connectionFor(url), prefix });
    await queue.addBulk(Array.from({ length: 1_200 }, (_, i) => ({ name: 'push', data: { i } })));
    harness = await startHarness(
      { systems: [bullmqSystem('pushizo', url, prefix)] },
      {
        userLocale: createUserLocales({
          lookup: async (id) => createSlackDirectory(client()).userLocale?.(id),
        }),
      },
    );
  });
  afterAll(async () => {
    await harness?.close();
    await queue.close();
    await deletePrefix(url, prefix);
  });

  const statusAs = async (user: string) => {
    const path = `/commands/T0TEAM/${randomId('')}/status`;
    const { bodies } = captureResponses(path);
    await harness.send(slashCommand('status', path, { user_id: user, user_name: user.toLowerCase() }));
    return JSON.stringify(bodies);
  };

  it('tr-TR gets Turkish with 1.200, en-US and an unknown locale get English with 1,200', async () => {
    serveLocale('U0AYSE', 'tr-TR');
    serveLocale('U0JOHN', 'en-US');
    serveLocale('U0HANS', 'de-DE');
    const ayse = await statusAs('U0AYSE');
    expect(ayse).toContain('Kuyruk durumu');
    expect(ayse).toContain('1.200');
    const john = await statusAs('U0JOHN');
    expect(john).toContain('Queue status');
    expect(john).toContain('1,200');
    const hans = await statusAs('U0HANS');
    expect(hans).toContain('Queue status');
    // An error line is in the user's language too.
    const path = `/commands/T0TEAM/${randomId('')}/status`;
    const { bodies } = captureResponses(path);
    await harness.send(slashCommand('status nosuch', path, { user_id: 'U0AYSE' }));
    expect(JSON.stringify(bodies)).toContain('adında bir sistem yok');
  });
});
