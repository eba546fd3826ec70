import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { Reply, Request } from '../../src/pipeline/types.js';
import type { AuditEntry } from '../../src/store/store.js';
import { bullmqSystem, configYaml } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { BullmqScene } from './fixture.js';

const redisUrl = testRedisUrl();

const shown = (reply: Reply) => `${reply.message.text}\n${JSON.stringify(reply.message.blocks)}`;

describe('pending and audit in Slack show only what was asked in that channel or on the command line', () => {
  let scene: BullmqScene;
  let ops: QueueOps;
  let secretId: string;

  // One request asked in a private channel, one on the command line; each test reads them.
  beforeAll(async () => {
    scene = new BullmqScene(redisUrl);
    const config = parseConfig(
      configYaml({
        slack: { allowedChannels: ['C0INCIDENT', 'C0PRIVATE'] },
        store: `sqlite:${scene.dir}/store.db`,
        roles: { viewer: ['*'], operator: ['U0ALICE'], admin: ['U0BOB'] },
        policies: { pause: { role: 'operator', approvals: 1 } },
        systems: [bullmqSystem('pushizo', redisUrl, scene.prefix)],
      }),
      {},
    );
    ops = await createQueueOps({ config, env: {}, logger: silentLogger() });
    await scene.queue('q-secret').add('send', {});
    await scene.queue('q-cli').add('send', {});
    const secret = await ops.dispatcher.handle(slack('U0ALICE', 'C0PRIVATE', ['pause', 'pushizo/q-secret']));
    expect(secret.ok).toBe(true);
    expect((await ops.dispatcher.handle(cli('U0ALICE', ['pause', 'pushizo/q-cli']))).ok).toBe(true);
    secretId = (secret.data as { request: { id: string } }).request.id;
  });
  afterAll(async () => {
    await ops?.close();
    await scene.cleanup();
  });

  function slack(actor: string, channel: string, words: string[]): Request {
    return { actor: { id: actor }, via: 'slack', channel, words, locale: 'en' };
  }
  function cli(actor: string, words: string[]): Request {
    return { actor: { id: actor }, via: 'cli', words, locale: 'en' };
  }
  const pendingIn = async (actor: string, channel: string) =>
    (
      (await ops.dispatcher.handle(slack(actor, channel, ['pending']))).data as {
        requests: { target: string }[];
      }
    ).requests.map((r) => r.target);
  const auditIn = async (request: Request) => {
    const reply = await ops.dispatcher.handle({ ...request, words: ['audit', '100'] });
    return { reply, entries: (reply.data as { entries: AuditEntry[] }).entries };
  };

  it('a viewer in another channel is shown the command-line request and not the private one', async () => {
    expect(await pendingIn('U0VIC', 'C0INCIDENT')).toEqual(['pushizo/q-cli']);
  });

  it('a viewer in another channel is shown no audit entry of the private request', async () => {
    const elsewhere = await auditIn(slack('U0VIC', 'C0INCIDENT', []));
    expect(elsewhere.entries.length).toBeGreaterThan(0);
    expect(elsewhere.entries.every((e) => e.via !== 'slack' || e.channel === 'C0INCIDENT')).toBe(true);
    expect(shown(elsewhere.reply)).not.toContain('q-secret');
    expect(shown(elsewhere.reply)).not.toContain(secretId);
    expect(shown(elsewhere.reply)).toContain('q-cli');
  });

  it('a viewer in the private channel itself is shown every request', async () => {
    expect((await pendingIn('U0VIC', 'C0PRIVATE')).sort()).toEqual(['pushizo/q-cli', 'pushizo/q-secret']);
  });

  it('an admin in any channel is shown every request and its audit entries', async () => {
    expect((await pendingIn('U0BOB', 'C0INCIDENT')).sort()).toEqual(['pushizo/q-cli', 'pushizo/q-secret']);
    expect(shown((await auditIn(slack('U0BOB', 'C0INCIDENT', []))).reply)).toContain('q-secret');
  });

  it('the command line is shown every audit entry', async () => {
    expect(shown((await auditIn(cli('U0VIC', []))).reply)).toContain('q-secret');
  });
});
