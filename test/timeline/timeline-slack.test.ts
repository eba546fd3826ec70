import { join } from 'node:path';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createLogger } from '../../src/lib/logger.js';
import { fakeSlack } from '../escalation/fake-slack.js';
import { tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import {
  captureResponses,
  type Harness,
  randomId,
  slackAround,
  slashCommand,
} from '../transports/slack/harness.js';

/**
 * `/queue timeline` in Slack, through Bolt, over a real SQLite audit trail, with Slack's Web API
 * nock'd: a long span answers with the first 40 events and sends the whole Markdown as a file to
 * the asker's direct messages; the channel never receives it (an admin's timeline holds entries
 * from private channels, and the answer itself is ephemeral).
 */
const SLACK = 'https://slack.timeline.test';
const logger = createLogger({ level: 'silent' });

describe('timeline in Slack', () => {
  const dir = tempDir('timeline-slack');
  let runtime: QueueOps;
  let slack: ReturnType<typeof fakeSlack>;
  let app: Harness['app'];

  beforeAll(async () => {
    nock.disableNetConnect();
    slack = fakeSlack(SLACK);
    const config = writeConfigFile(dir.dir, {
      store: `sqlite:${join(dir.dir, 'queue-ops.db')}`,
      roles: TEST_ROLES,
      systems: [bullmqSystem('pushizo', 'redis://127.0.0.1:1')],
    });
    runtime = await createQueueOps({ config: loadConfigFile(config, {}), env: {}, logger });
    const start = Date.now() - 60 * 60_000;
    // 45 status looks in the incident channel, a minute apart, then one in a private channel.
    for (let i = 0; i < 45; i++) {
      await runtime.audit.record({
        at: new Date(start + i * 60_000).toISOString(),
        actorId: 'U0ALICE',
        via: 'slack',
        channel: 'C0INCIDENT',
        action: 'command.status',
        target: 'pushizo',
        params: {},
        outcome: 'ok',
      });
    }
    await runtime.audit.record({
      at: new Date(start + 50 * 60_000).toISOString(),
      actorId: 'U0CAROL',
      via: 'slack',
      channel: 'C0PRIVATE',
      action: 'command.dlq',
      target: 'pushizo/secret-queue',
      params: {},
      outcome: 'ok',
    });
    app = slackAround(runtime.dispatcher, { logger, apiUrl: `${SLACK}/api` }).app;
  });

  afterAll(async () => {
    await runtime?.close();
    slack?.done();
    nock.cleanAll();
    nock.enableNetConnect();
    dir.remove();
  });

  async function ask(text: string, user: string) {
    const path = `/commands/T0TEAM/${randomId('')}/timeline`;
    const { bodies } = captureResponses(path);
    await app.processEvent({
      body: slashCommand(text, path, { channel_id: 'C0INCIDENT', user_id: user }),
      ack: async () => {},
    });
    return bodies;
  }

  it('a long span: 40 events in an ephemeral answer, the whole Markdown in the asker’s direct messages', async () => {
    const before = slack.uploads.length;
    const bodies = await ask('timeline --since 2h', 'U0BOB');
    expect(bodies).toHaveLength(1);
    expect(bodies[0]!.response_type).toBe('ephemeral');
    const shown = JSON.stringify(bodies[0]);
    expect(shown).toContain('Only the first 40 of');
    expect(shown).toContain('in your direct messages with queue-ops');

    const opened = slack.calls.filter((c) => c.method === 'conversations.open');
    expect(opened.at(-1)!.body.users).toBe('U0BOB');
    const [upload] = slack.uploads.slice(before);
    expect(upload!.requested.filename).toMatch(/^timeline-\d{4}-\d{2}-\d{2}-\d{4}\.md$/);
    // Shared into the direct-message channel only, never the channel the command was typed in.
    expect(upload!.completed!.channel_id).toBe('DU0BOB');
    expect(JSON.parse(upload!.completed!.files!)).toEqual([
      { id: upload!.fileId, title: 'Incident timeline (Markdown, for the postmortem)' },
    ]);
    const markdown = upload!.body!.toString('utf8');
    // Every event is in the file: 45 looks by Alice, the admin's view of the private channel's
    // look, and this very request's own look.
    expect(markdown.match(/U0ALICE/g)!.length).toBeGreaterThanOrEqual(45);
    expect(markdown).toContain('pushizo/secret-queue');
    expect(markdown).toContain('Audit chain verified');
    expect(slack.uploads.slice(before).every((u) => u.completed?.channel_id !== 'C0INCIDENT')).toBe(true);
  });

  it('a span that fits in the message uploads nothing', async () => {
    const before = slack.uploads.length;
    const bodies = await ask('timeline --since 5m', 'U0ALICE');
    expect(bodies[0]!.response_type).toBe('ephemeral');
    expect(JSON.stringify(bodies[0])).not.toContain('direct messages');
    expect(slack.uploads.length).toBe(before);
  });
});
