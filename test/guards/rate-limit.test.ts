import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { Request } from '../../src/pipeline/types.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { slackAround } from '../transports/slack/harness.js';
import { blockNetwork, restoreNetwork } from './slack-api.js';

// The limit counts actions that ran: the commands counted here are real pauses of
// BullMQ queues on the test Redis, one queue each.
const redis = testRedisUrl();
const QUEUES = Array.from({ length: 24 }, (_, i) => `q${i}`);
const configYaml = (dir: string, extra = '', prefix = 'unused') => `slack: { allowedChannels: [C0INCIDENT] }
store: sqlite:${dir}/store.db
roles: { viewer: ["*"], operator: [U0ALICE, U0BOB] }
systems:
  - name: pushizo
    type: bullmq
    redis: ${redis}
    prefix: ${prefix}
    queues: [${QUEUES.join(', ')}]
${extra}`;

describe('the rate limit on commands that change things', () => {
  let dir: string;
  let ops: QueueOps | undefined;
  let clock: number;
  let prefix: string;

  beforeEach(() => {
    prefix = randomName('rate');
    blockNetwork();
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-rate-'));
    clock = Date.parse('2030-01-01T10:00:00.000Z');
  });
  afterEach(async () => {
    await ops?.close();
    ops = undefined;
    await deletePrefix(redis, prefix);
    restoreNetwork();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(extra: string) {
    const config = parseConfig(configYaml(dir, extra, prefix), {});
    ops = await createQueueOps({
      config,
      env: {},
      logger: silentLogger(),
      now: () => new Date(clock),
    });
    return ops;
  }

  const cli = (actor: string, words: string[]): Request => ({
    actor: { id: actor },
    via: 'cli',
    words,
    locale: 'en',
  });

  it('is 10 a minute unless rateLimit.perUserPerMinute says otherwise', async () => {
    expect(parseConfig(configYaml(dir), {}).rateLimit.perUserPerMinute).toBe(10);
    expect(parseConfig(configYaml(dir, 'rateLimit: { perUserPerMinute: 3 }'), {}).rateLimit).toEqual({
      perUserPerMinute: 3,
    });
  });

  it('on the command line, refuses the next mutating command in one line, audits it as a denial, and lets it run again a minute later', async () => {
    const app = await start('rateLimit: { perUserPerMinute: 3 }');
    for (let i = 0; i < 3; i++) {
      const reply = await app.dispatcher.handle(cli('U0ALICE', ['pause', `pushizo/q${i}`]));
      expect(reply.ok, reply.message.text).toBe(true);
    }
    const refused = await app.dispatcher.handle(cli('U0ALICE', ['pause', 'pushizo/q9']));
    expect(refused.ok).toBe(false);
    expect(refused.error?.code).toBe('RateLimited');
    expect(refused.message.text).toBe(
      'You ran 3 commands that change things in the last minute, the most allowed; `pause` did not run. Try again in 60 s.',
    );
    const [denial] = await app.audit.recent(1);
    expect(denial).toMatchObject({
      actorId: 'U0ALICE',
      action: 'denied',
      outcome: 'denied',
      target: 'pushizo/q9',
      params: { command: 'pause', code: 'RateLimited' },
    });
    // The command itself never ran: no command.pause entry for q9.
    expect((await app.audit.recent(20)).filter((e) => e.action === 'command.pause')).toHaveLength(3);

    // Someone else, and read-only commands, are not held back.
    expect((await app.dispatcher.handle(cli('U0BOB', ['deny', 'r-x']))).error?.code).toBe('UnknownRequest');
    expect((await app.dispatcher.handle(cli('U0ALICE', ['pending']))).ok).toBe(true);

    clock += 60_001;
    expect((await app.dispatcher.handle(cli('U0ALICE', ['pause', 'pushizo/q9']))).ok).toBe(true);
  });

  it("one person firing 20 changes at once gets exactly 3 through and 17 one-line refusals, while another person's commands among them all run", async () => {
    const app = await start('rateLimit: { perUserPerMinute: 3 }');
    const alice = Array.from({ length: 20 }, (_, i) =>
      app.dispatcher.handle(cli('U0ALICE', ['pause', `pushizo/q${i}`])),
    );
    const bob = Array.from({ length: 3 }, (_, i) =>
      app.dispatcher.handle(cli('U0BOB', ['pause', `pushizo/q${20 + i}`])),
    );
    const [aliceReplies, bobReplies] = await Promise.all([Promise.all(alice), Promise.all(bob)]);
    const refused = aliceReplies.filter((r) => r.error?.code === 'RateLimited');
    expect(refused).toHaveLength(17);
    expect(aliceReplies.filter((r) => r.ok)).toHaveLength(3);
    for (const reply of refused) {
      expect(reply.message.text).toBe(
        'You ran 3 commands that change things in the last minute, the most allowed; `pause` did not run. Try again in 60 s.',
      );
    }
    expect(bobReplies.map((r) => r.ok)).toEqual([true, true, true]);
    // Each refusal is one audited denial; only the three that ran reached the command.
    const trail = await app.audit.recent(100);
    expect(trail.filter((e) => e.action === 'denied' && e.actorId === 'U0ALICE')).toHaveLength(17);
    expect(trail.filter((e) => e.action === 'command.pause' && e.actorId === 'U0ALICE')).toHaveLength(3);
  });

  it('in Slack, the same chain refuses the next one before the command runs, answers ephemerally and audits it', async () => {
    const app = await start('rateLimit: { perUserPerMinute: 2 }');
    const responses: Record<string, unknown>[] = [];
    nock('https://hooks.slack.com')
      .persist()
      .post(/.*/)
      .reply(200, (_uri, body) => {
        responses.push(body as Record<string, unknown>);
        return { ok: true };
      });
    const bolt = slackAround(app.dispatcher, { logger: silentLogger() });
    const slash = (text: string) =>
      bolt.send({
        command: '/queue',
        text,
        user_id: 'U0ALICE',
        user_name: 'alice',
        channel_id: 'C0INCIDENT',
        team_id: 'T0TEAM',
        response_url: 'https://hooks.slack.com/commands/T0TEAM/1/rate',
        trigger_id: '1.2.3',
      });

    await slash('pause pushizo/q0');
    await slash('status');
    await slash('pause pushizo/q1');
    await slash('pause pushizo/q2');
    // The first three ran (two pauses and a status), the fourth did not.
    expect(responses).toHaveLength(4);
    expect(responses.slice(0, 3).map((r) => String(r.text))).not.toContainEqual(
      expect.stringContaining('did not run'),
    );
    expect(responses[3]).toMatchObject({ response_type: 'ephemeral' });
    expect(String(responses[3]?.text)).toContain('`pause` did not run');
    expect((await app.audit.recent(20)).filter((e) => e.action === 'command.pause')).toHaveLength(2);
    const [denial] = await app.audit.recent(1);
    expect(denial).toMatchObject({ action: 'denied', target: 'pushizo/q2', params: { code: 'RateLimited' } });
  });
});
