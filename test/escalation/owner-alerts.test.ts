import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateMessage } from '../../src/blocks/validate.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { runCli } from '../../src/transports/cli/run.js';
import { waitFor } from '../commands/fixture.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { fakeSlack, kindOf, type SlackCall } from './fake-slack.js';

/**
 * Alerts on queues whose config names an owner and a runbook, over real BullMQ failed sets, a real
 * `monitor --once` and Slack's Web API behind nock: the owner is mentioned only where the rule
 * says `mentionOwner: true`, and failure alerts point on to the `job` view.
 */
const url = testRedisUrl();
const SLACK = 'https://slack.owner-alerts.test';
const RUNBOOK = 'https://runbooks.example.com/queue-backlog#webhooks';

describe('alerts name who owns their queue', () => {
  const root = mkdtempSync(join(tmpdir(), 'queue-ops-owner-alerts-'));
  const prefix = randomName('own');
  const connection = connectionFor(url);
  const queues: Queue[] = [];

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    for (const name of ['webhooks', 'dispatch-ios']) {
      const queue = new Queue(name, { connection, prefix });
      queues.push(queue);
      const worker = new Worker(
        name,
        async () => {
          throw new Error('provider timed out');
        },
        { connection, prefix },
      );
      await queue.addBulk([1, 2].map((i) => ({ name: 'deliver', data: { i } })));
      await waitFor(`failures in ${name}`, async () => (await queue.getFailedCount()) === 2);
      await worker.close();
    }
  }, 60_000);

  afterAll(async () => {
    for (const queue of queues) await queue.close();
    await deletePrefix(url, prefix);
    nock.cleanAll();
    nock.enableNetConnect();
    rmSync(root, { recursive: true, force: true });
  });

  /** The config in a directory `name` of its own: `groupBy` of the alerts, and the locale. */
  function writeConfig(
    name: string,
    options: { groupBy: NonNullable<ConfigInput['escalation']>['groupBy']; locale?: ConfigInput['locale'] },
  ): string {
    const dir = join(root, name);
    mkdirSync(dir);
    return writeConfigFile(dir, {
      slack: { incidentChannel: 'C0INCIDENT' },
      store: `sqlite:${join(dir, 'queue-ops.db')}`,
      systems: [
        bullmqSystem('pushizo', url, prefix, {
          queues: [
            {
              name: 'webhooks',
              owner: 'S0WEBHOOKS',
              runbook: RUNBOOK,
              notes: 'endpoint slow → WEBHOOK_TIMEOUT_MS',
            },
            { name: 'dispatch-*', owner: 'U0ALICE' },
          ],
        }),
      ],
      escalation: {
        rules: [
          {
            name: 'webhooks-failing',
            queues: ['pushizo/webhooks'],
            metric: 'failed',
            above: 0,
            severity: 'critical',
            mentionOwner: true,
          },
          {
            name: 'dispatch-failing',
            queues: ['pushizo/dispatch-*'],
            metric: 'failed',
            above: 0,
            severity: 'warning',
          },
        ],
        groupBy: options.groupBy,
      },
      ...(options.locale ? { locale: options.locale } : {}),
    });
  }

  async function once(config: string): Promise<SlackCall[]> {
    const slack = fakeSlack(SLACK);
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli({
      argv: ['--config', config, 'monitor', '--once', '--json'],
      env: { SLACK_BOT_TOKEN: 'xoxb-owner', SLACK_API_URL: `${SLACK}/api` },
      cwd: root,
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      osUser: 'cron',
    });
    expect(code, err.join('')).toBe(0);
    const posts = slack.delivered().filter((c) => kindOf(c) === 'post');
    slack.done();
    nock.cleanAll();
    for (const post of posts)
      expect(
        validateMessage({ text: post.body.text ?? '', blocks: post.blocks as never }),
        'Slack’s limits',
      ).toEqual([]);
    return posts;
  }

  it('one message per alert: the owner is a mention only where the rule says mentionOwner: true', async () => {
    const posts = await once(writeConfig('single', { groupBy: 'none' }));
    expect(posts).toHaveLength(2);
    const about = (queue: string) => posts.find((p) => p.body.text?.includes(`pushizo/${queue}`))!;
    const webhooks = about('webhooks');
    const dispatch = about('dispatch-ios');

    const webhooksBlocks = JSON.stringify(webhooks.blocks);
    expect(webhooksBlocks).toContain(
      `Owner <!subteam^S0WEBHOOKS> · <${RUNBOOK}|runbook> · endpoint slow → WEBHOOK_TIMEOUT_MS`,
    );
    // The notification text carries the mention, so the owning team's phones say why.
    expect(webhooks.body.text).toContain('<!subteam^S0WEBHOOKS>');
    // A failure alert lists its newest failed jobs, each with its job view's command.
    expect(webhooksBlocks).toContain('`/queue job pushizo/webhooks 2`');
    expect(webhooksBlocks).toContain('`/queue job pushizo/webhooks 1`');

    // The dispatch rule does not page its owner: named, not mentioned.
    const dispatchBlocks = JSON.stringify(dispatch.blocks);
    expect(dispatchBlocks).toContain('Owner `U0ALICE`');
    expect(dispatchBlocks).not.toContain('<@U0ALICE>');
    expect(dispatch.body.text).not.toContain('U0ALICE');
  }, 60_000);

  it('a group message gives each alert its owner line and mentions only the paged owner, in Turkish too', async () => {
    const posts = await once(writeConfig('grouped', { groupBy: ['system'], locale: 'tr' }));
    expect(posts).toHaveLength(1);
    const [group] = posts;
    const blocks = JSON.stringify(group!.blocks);
    expect(blocks).toContain(`Sahibi <!subteam^S0WEBHOOKS> · <${RUNBOOK}|runbook>`);
    expect(blocks).toContain('Sahibi `U0ALICE`');
    expect(group!.body.text).toContain('<!subteam^S0WEBHOOKS>');
    expect(group!.body.text).not.toContain('U0ALICE');
  }, 60_000);
});
