import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { Reply, Request } from '../../src/pipeline/types.js';
import type { AuditEntry } from '../../src/store/store.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { BullmqScene } from './fixture.js';

const redisUrl = testRedisUrl();

const shown = (reply: Reply) => `${reply.message.text}\n${JSON.stringify(reply.message.blocks)}`;

describe('pending and audit in Slack show only what was asked in that channel or on the command line', () => {
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
      `slack: { allowedChannels: [C0INCIDENT, C0PRIVATE] }
store: sqlite:${scene.dir}/store.db
roles: { viewer: ["*"], operator: [U0ALICE], admin: [U0BOB] }
policies:
  pause: { role: operator, approvals: 1 }
systems:
  - name: pushizo
    type: bullmq
    redis: ${redisUrl}
    prefix: ${scene.prefix}
`,
      {},
    );
    ops = await createQueueOps({ config, env: {}, logger: silentLogger() });
    return ops;
  }

  const slack = (actor: string, channel: string, words: string[]): Request => ({
    actor: { id: actor },
    via: 'slack',
    channel,
    words,
    locale: 'en',
  });
  const cli = (actor: string, words: string[]): Request => ({
    actor: { id: actor },
    via: 'cli',
    words,
    locale: 'en',
  });

  it('a viewer elsewhere sees neither the private request nor its audit entries; admins and the command line see all', async () => {
    const app = await start();
    await scene.queue('q-secret').add('send', {});
    await scene.queue('q-cli').add('send', {});
    const secret = await app.dispatcher.handle(slack('U0ALICE', 'C0PRIVATE', ['pause', 'pushizo/q-secret']));
    expect(secret.ok).toBe(true);
    expect((await app.dispatcher.handle(cli('U0ALICE', ['pause', 'pushizo/q-cli']))).ok).toBe(true);
    const secretId = (secret.data as { request: { id: string } }).request.id;

    const pendingIn = async (actor: string, channel: string) =>
      (
        (await app.dispatcher.handle(slack(actor, channel, ['pending']))).data as {
          requests: { target: string }[];
        }
      ).requests.map((r) => r.target);
    const auditIn = async (request: Request) => {
      const reply = await app.dispatcher.handle({ ...request, words: ['audit', '100'] });
      return { reply, entries: (reply.data as { entries: AuditEntry[] }).entries };
    };

    // A viewer in another channel: the command-line request only.
    expect(await pendingIn('U0VIC', 'C0INCIDENT')).toEqual(['pushizo/q-cli']);
    const elsewhere = await auditIn(slack('U0VIC', 'C0INCIDENT', []));
    expect(elsewhere.entries.length).toBeGreaterThan(0);
    expect(elsewhere.entries.every((e) => e.via !== 'slack' || e.channel === 'C0INCIDENT')).toBe(true);
    expect(shown(elsewhere.reply)).not.toContain('q-secret');
    expect(shown(elsewhere.reply)).not.toContain(secretId);
    expect(shown(elsewhere.reply)).toContain('q-cli');

    // In the private channel itself, and for an admin or the command line anywhere: everything.
    expect((await pendingIn('U0VIC', 'C0PRIVATE')).sort()).toEqual(['pushizo/q-cli', 'pushizo/q-secret']);
    expect((await pendingIn('U0BOB', 'C0INCIDENT')).sort()).toEqual(['pushizo/q-cli', 'pushizo/q-secret']);
    expect(shown((await auditIn(slack('U0BOB', 'C0INCIDENT', []))).reply)).toContain('q-secret');
    expect(shown((await auditIn(cli('U0VIC', []))).reply)).toContain('q-secret');
  });
});
