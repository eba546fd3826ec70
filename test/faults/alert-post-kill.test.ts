import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { spawnBot, startLoopbackSlack, writeBacklogAlertConfig } from '../helpers/loopback-slack.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();

/**
 * The bot process (dist/main.js) SIGKILLed while Slack holds its alert post: Slack has the message,
 * the bot never heard its ts. The next bot must find that message and keep updating it, never post
 * the alert a second time.
 */
describe('a bot killed during an alert post', () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-alert-kill-'));
  const prefix = randomName('ak');
  let slack: Awaited<ReturnType<typeof startLoopbackSlack>>;
  let queue: Queue;
  const bots: Awaited<ReturnType<typeof spawnBot>>[] = [];

  beforeAll(async () => {
    slack = await startLoopbackSlack();
    queue = new Queue('dispatch-ios', { connection: connectionFor(redisUrl), prefix });
    await queue.waitUntilReady();
  });

  afterAll(async () => {
    for (const bot of bots) bot.child.kill('SIGKILL');
    await queue.close();
    await deletePrefix(redisUrl, prefix);
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not posted twice by the next bot: the next bot finds the post Slack took and updates it in place', async () => {
    const config = join(dir, 'queue-ops.yml');
    writeBacklogAlertConfig(config, {
      store: `sqlite:${join(dir, 'queue-ops.db')}`,
      redis: redisUrl,
      prefix,
    });
    await queue.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: 'send-push', data: { n: i } })));
    slack.holdNextPost();
    const first = await spawnBot(config, slack.url);
    bots.push(first);
    const dump = () => bots.map((b) => b.output()).join('\n---\n');

    // Slack took the post and is "slow" to answer; the bot dies before it hears the ts.
    await expect.poll(() => slack.held(), { timeout: 30_000 }).toBe(1);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const [post] = slack.posts();
    expect(post!.body.text).toContain('CRITICAL: backlog on pushizo/dispatch-ios is 60');

    await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: 'send-push', data: { n: i } })));
    const second = await spawnBot(config, slack.url);
    bots.push(second);
    // The dead bot's claim on the post lapses (30 s); then the next bot delivers what waits.
    const updated = () =>
      slack.calls.find((c) => c.method === 'chat.update' && (c.body.text ?? '').includes('is 80'));
    await expect.poll(updated, { timeout: 70_000, interval: 500 }).toBeDefined();
    const said = dump();
    // One message in the channel, found again through its metadata, and updated in place.
    expect(
      slack.posts().map((p) => p.ts),
      said,
    ).toEqual([post!.ts]);
    expect(updated()!.body.ts).toBe(post!.ts);
    expect(slack.calls.some((c) => c.method === 'conversations.history')).toBe(true);
    expect(slack.calls.every((c) => c.method !== 'chat.update' || c.body.ts === post!.ts)).toBe(true);

    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  }, 120_000);
});
