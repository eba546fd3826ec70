import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Reply, Request, Via } from '../../src/pipeline/types.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { BullmqScene } from './fixture.js';

const redisUrl = testRedisUrl();

/** Everything Slack would render of a reply, as one string. */
const shown = (reply: Reply) => `${reply.message.text}\n${JSON.stringify(reply.message.blocks)}`;

describe('mutating paths through the whole runtime (guards, approvals, audit) over a real BullMQ queue', () => {
  let scene: BullmqScene;
  let ops: QueueOps | undefined;

  beforeEach(() => {
    scene = new BullmqScene(redisUrl);
  });

  afterEach(async () => {
    await ops?.close();
    ops = undefined;
    await scene.cleanup();
  });

  async function start(): Promise<QueueOps> {
    const config = parseConfig(
      `slack: { allowedChannels: [C0INCIDENT] }
store: sqlite:${scene.dir}/store.db
roles: { viewer: ["*"], operator: [U0ALICE, U0CAROL] }
policies:
  pause: { role: operator, approvals: 1 }
systems:
  - name: pushizo
    type: bullmq
    redis: \${REDIS_URL}
    prefix: ${scene.prefix}
`,
      { REDIS_URL: redisUrl },
    );
    ops = await createQueueOps({ config, env: {}, logger: createLogger({ level: 'silent' }) });
    return ops;
  }

  const ask = (words: string[], actor: string, via: Via = 'cli', channel?: string): Request => ({
    actor: { id: actor },
    via,
    ...(channel ? { channel } : {}),
    words,
    locale: 'en',
  });

  it('refuses to approve or deny in a Slack channel outside allowedChannels, even a request made on the command line', async () => {
    const app = await start();
    const queue = scene.queue('dispatch-ios');
    await queue.add('send', {});
    const asked = await app.dispatcher.handle(ask(['pause', 'pushizo/dispatch-ios'], 'U0ALICE'));
    const id = (asked.data as { request: { id: string } }).request.id;

    const approved = await app.dispatcher.handle(ask(['approve', id], 'U0CAROL', 'slack', 'C0RANDOM'));
    expect(approved.ok).toBe(false);
    expect(approved.error?.code).toBe('WrongChannel');
    const denied = await app.dispatcher.handle(ask(['deny', id], 'U0CAROL', 'slack', 'C0RANDOM'));
    expect(denied.error?.code).toBe('WrongChannel');

    expect(await queue.isPaused()).toBe(false);
    expect((await app.approvals.get(id))?.status).toBe('pending');
  });

  it('records a command that failed (unknown queue, deny of a finished request) in the audit trail before answering', async () => {
    const app = await start();
    await scene.queue('dispatch-ios').add('send', {});
    const unknown = await app.dispatcher.handle(ask(['pause', 'pushizo/nope'], 'U0ALICE'));
    expect(unknown.error?.code).toBe('UnknownQueue');
    const asked = await app.dispatcher.handle(ask(['pause', 'pushizo/dispatch-ios'], 'U0ALICE'));
    const id = (asked.data as { request: { id: string } }).request.id;
    await app.dispatcher.handle(ask(['deny', id, 'not now'], 'U0CAROL'));
    const again = await app.dispatcher.handle(ask(['deny', id], 'U0CAROL'));
    expect(again.error?.code).toBe('RequestNotPending');

    const entries = (await app.audit.recent(50)).map((e) => [
      e.actorId,
      e.action,
      e.outcome,
      e.error ?? null,
    ]);
    expect(entries).toContainEqual(['U0ALICE', 'command.pause', 'error', 'UnknownQueue']);
    expect(entries).toContainEqual(['U0CAROL', 'command.deny', 'error', 'RequestNotPending']);
    expect((await app.audit.verify()).ok).toBe(true);
  });

  it('escapes a queue name in the fallback text of the posted request, so it cannot ping the channel', async () => {
    const app = await start();
    await scene.queue('evil<!channel>').add('send', {});
    const asked = await app.dispatcher.handle(ask(['pause', 'pushizo/evil<!channel>'], 'U0ALICE'));
    expect(asked.ok).toBe(true);
    expect(asked.message.text).toContain('evil&lt;!channel&gt;');
    expect(shown(asked)).not.toContain('<!channel>');
  });

  it('records the parsed target, not the raw words, in the command audit and in the denial audit', async () => {
    const app = await start();
    await scene.queue('dispatch-ios').add('send', {});
    // An empty word before the target, as `/queue pause "" pushizo/dispatch-ios` gives it.
    const asked = await app.dispatcher.handle(ask(['pause', '', 'pushizo/dispatch-ios'], 'U0ALICE'));
    expect(asked.ok).toBe(true);
    const refused = await app.dispatcher.handle(ask(['pause', '', 'pushizo/dispatch-ios'], 'U0VIC'));
    expect(refused.error?.code).toBe('Forbidden');

    const entries = await app.audit.recent(50);
    const command = entries.find((e) => e.action === 'command.pause');
    const denial = entries.find((e) => e.action === 'denied');
    expect(command?.target).toBe('pushizo/dispatch-ios');
    expect(command?.params).toMatchObject({ args: ['pushizo/dispatch-ios'] });
    expect(denial?.target).toBe('pushizo/dispatch-ios');
  });
});
