import { Worker } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/lib/logger.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { BullmqScene, connectionFor, waitFor } from './fixture.js';

const redisUrl = testRedisUrl();

/** Error texts as HTTP and database clients really write them, each carrying one secret. */
const SECRETS = {
  apiKey: 'AKIA-apikey-7f3k9q',
  token: 'tok-5d8e2a1c',
  urlPassword: 'pa/ss w0rd',
  queryPassword: 'hunter2-q',
};
const REASONS = [
  `HTTPError: GET https://push.example.com/v1/send?api_key=${SECRETS.apiKey}&device=9 answered 401`,
  `WebhookError: POST failed token=${SECRETS.token}`,
  `ReplyError: cannot connect to redis://svc:${SECRETS.urlPassword}@10.0.0.7:6379/2`,
  `Error: connect ECONNREFUSED redis://10.0.0.7:6379/0?password=${SECRETS.queryPassword}`,
];

describe('job error lines in dlq are scrubbed like the logs', () => {
  let scene: BullmqScene;
  let app: App | undefined;
  beforeEach(() => {
    scene = new BullmqScene(redisUrl);
  });
  afterEach(async () => {
    await app?.close();
    await scene.cleanup();
  });

  it('never shows an api_key, token= or URL password from a failed job, in the message or in --json data', async () => {
    const queue = scene.queue('webhooks');
    const worker = new Worker(
      'webhooks',
      async (job) => {
        throw new Error(job.data.reason);
      },
      { connection: connectionFor(redisUrl), prefix: scene.prefix },
    );
    await queue.addBulk(REASONS.map((reason) => ({ name: 'deliver', data: { reason } })));
    await waitFor('four failures', async () => (await queue.getFailedCount()) === REASONS.length);
    await worker.close();

    const config = parseConfig(
      `systems:\n  - name: pushizo\n    type: bullmq\n    redis: ${redisUrl}\n    prefix: ${scene.prefix}\n`,
      {},
    );
    app = createApp({ config, env: {}, logger: silentLogger() });
    const reply = await app.dispatcher.handle({
      actor: { id: 'U0VIEW' },
      via: 'slack',
      channel: 'C0ANY',
      words: ['dlq', 'pushizo/webhooks'],
      locale: 'en',
    });

    expect(reply.ok).toBe(true);
    const shown = JSON.stringify(reply.message);
    const data = JSON.stringify(reply.data);
    for (const secret of Object.values(SECRETS)) {
      expect(shown).not.toContain(secret);
      expect(data).not.toContain(secret);
    }
    // Still useful: what failed and where is kept, only the credential is starred out.
    expect(shown).toContain('push.example.com');
    expect(shown).toContain('api_key=***');
    expect(data).toContain('10.0.0.7:6379/2');
  });
});
