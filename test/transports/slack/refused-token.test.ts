import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomName } from '../../helpers/bullmq-jobs.js';
import { bullmqSystem, writeConfigFile } from '../../helpers/config-file.js';
import { type LoopbackSlack, spawnBot, startLoopbackSlack } from '../../helpers/loopback-slack.js';
import { testRedisUrl } from '../../helpers/test-redis.js';

/**
 * `npm start` (dist/main.js, a real process) with a token Slack refuses: it ends with exit 1 and one
 * line naming the variable and Slack's error, in both modes; no stack trace, no unhandled
 * rejection after "listening".
 */
describe('npm start with a token Slack refuses', () => {
  const dir = mkdtempSync(join(tmpdir(), 'qo-refused-'));
  let config: string;
  let slack: LoopbackSlack;
  const bots: Awaited<ReturnType<typeof spawnBot>>[] = [];

  beforeAll(() => {
    config = writeConfigFile(dir, {
      store: `sqlite:${join(dir, 'store.db')}`,
      systems: [bullmqSystem('pushizo', testRedisUrl(), randomName('refused'))],
    });
  });
  afterEach(async () => {
    for (const bot of bots.splice(0)) bot.child.kill('SIGKILL');
    await slack?.close();
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the bot to its end; its whole output, without blank lines. */
  async function runToExit(env: Record<string, string>) {
    const bot = await spawnBot(config, slack.url, env);
    bots.push(bot);
    const { code } = await bot.exited;
    return {
      code,
      lines: bot
        .output()
        .split('\n')
        .filter((l) => l.trim() !== ''),
    };
  }

  for (const error of ['invalid_auth', 'account_inactive', 'token_revoked']) {
    it(`HTTP mode, bot token answered ${error}: exit 1, one line naming SLACK_BOT_TOKEN and ${error}`, async () => {
      slack = await startLoopbackSlack();
      slack.refuse('auth.test', error);
      const { code, lines } = await runToExit({ LOG_LEVEL: 'info' });
      expect(code, lines.join('\n')).toBe(1);
      expect(lines, lines.join('\n')).toHaveLength(1);
      expect(lines[0]).toContain('SLACK_BOT_TOKEN');
      expect(lines[0]).toContain(error);
      expect(lines[0]).not.toContain('xoxb-fault');
      expect(lines[0]).not.toMatch(/WebAPIPlatformError|\bat \S+ \(/);
      // Refused before anything listens.
      expect(slack.calls.map((c) => c.method)).toEqual(['auth.test']);
    }, 30_000);
  }

  it('Socket Mode, bot token answered invalid_auth: exit 1, one line naming SLACK_BOT_TOKEN', async () => {
    slack = await startLoopbackSlack();
    slack.refuse('auth.test', 'invalid_auth');
    const { code, lines } = await runToExit({ SLACK_APP_TOKEN: 'xapp-fault', SLACK_SIGNING_SECRET: '' });
    expect(code, lines.join('\n')).toBe(1);
    expect(lines, lines.join('\n')).toHaveLength(1);
    expect(lines[0]).toContain('SLACK_BOT_TOKEN');
    expect(lines[0]).toContain('invalid_auth');
    expect(lines[0]).not.toMatch(/WebAPIPlatformError|\bat \S+ \(/);
  }, 30_000);

  for (const error of ['invalid_auth', 'token_revoked']) {
    it(`Socket Mode, app token answered ${error}: exit 1, one line naming SLACK_APP_TOKEN`, async () => {
      slack = await startLoopbackSlack();
      slack.refuse('apps.connections.open', error);
      const { code, lines } = await runToExit({ SLACK_APP_TOKEN: 'xapp-fault', SLACK_SIGNING_SECRET: '' });
      expect(code, lines.join('\n')).toBe(1);
      expect(lines, lines.join('\n')).toHaveLength(1);
      expect(lines[0]).toContain('SLACK_APP_TOKEN');
      expect(lines[0]).not.toContain('SLACK_BOT_TOKEN');
      expect(lines[0]).toContain(error);
      expect(lines[0]).not.toContain('xapp-fault');
      expect(lines[0]).not.toMatch(/WebAPIPlatformError|\bat \S+ \(/);
    }, 30_000);
  }
});
