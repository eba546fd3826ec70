import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../../src/lib/redis-server.js';
import { BullmqScene } from '../commands/fixture.js';
import { jsonOf, runCli } from '../helpers/cli-run.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();

describe('the command line when the bot’s own store does not answer', () => {
  let scene: BullmqScene;
  let config: string;

  beforeEach(async () => {
    scene = new BullmqScene(redisUrl);
    await scene.queue('dispatch-ios').add('send', {});
    const closed = await freePort();
    config = scene.writeConfig(`store: postgres://postgres:pg-secret-pw@127.0.0.1:${closed}/test
roles: { viewer: [U0ALICE, U0CAROL], operator: [U0ALICE] }
systems:
  - name: pushizo
    type: bullmq
    redis: ${redisUrl}
    prefix: ${scene.prefix}
`);
  });

  afterEach(async () => {
    await scene.cleanup();
  });

  it('answers an action with one line saying it needs the store, exit 1, rather than calling the verb unknown', async () => {
    const run = await runCli(['--config', config, '--user', 'U0ALICE', 'pause', 'pushizo/dispatch-ios']);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('is not a /queue command');
    expect(run.stdout).toContain('without a store');
    const json = jsonOf(
      await runCli(['--config', config, '--user', 'U0ALICE', '--json', 'approve', 'r-abcdefgh']),
    );
    expect(json.error?.code).toBe('NotSupported');
    expect(`${run.stdout}${run.stderr}${JSON.stringify(json)}`).not.toContain('pg-secret-pw');
  });

  it('still checks roles for read-only commands', async () => {
    const allowed = await runCli(['--config', config, '--user', 'U0CAROL', 'status']);
    expect(allowed.code).toBe(0);
    const refused = await runCli(['--config', config, '--user', 'U0NOBODY', '--json', 'status']);
    expect(refused.code).toBe(1);
    expect(jsonOf(refused).error?.code).toBe('Forbidden');
  });

  it('audit export --json prints one JSON object saying why, exit 1', async () => {
    const run = await runCli(['--config', config, '--json', 'audit', 'export']);
    expect(run.code).toBe(1);
    expect(jsonOf(run).ok).toBe(false);
  });
});
