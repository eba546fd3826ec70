import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../src/blocks/message.js';
import { validateMessage } from '../../src/blocks/validate.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { deletePrefix } from '../helpers/bullmq-jobs.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { connectionFor, randomName, waitFor } from './fixture.js';

/**
 * Who owns a queue (`queues[].owner`, runbook, dashboard, notes) on `status`, `dlq` and `job`,
 * over real BullMQ queues: one listed with its context, a pattern that brings in the queues a
 * discovery finds, one listed with context but healthy, one plain.
 */
const url = testRedisUrl();
const connection = connectionFor(url);
const prefix = randomName('qo');
const closers: (() => Promise<unknown>)[] = [];
let dir: { dir: string; remove(): void };
let english: string;
let turkish: string;
const failedIds: Record<string, string> = {};

const WEBHOOKS_RUNBOOK = 'https://runbooks.example.com/queue-backlog?section=webhooks&lang=tr';
const DISPATCH_DASHBOARD = 'https://grafana.example.com/d/dispatch';

/** The config in `locale`, its store in `dir`: the same queues and context in both languages. */
function writeConfigIn(dir: string, store: string, locale: ConfigInput['locale']): string {
  return writeConfigFile(dir, {
    store: `sqlite:${join(dir, store)}`,
    locale,
    systems: [
      bullmqSystem('pushizo', url, prefix, {
        queues: [
          'scheduler',
          {
            name: 'webhooks',
            owner: 'S0WEBHOOKS',
            runbook: WEBHOOKS_RUNBOOK,
            notes: 'endpoint <slow> & 10 s timeout → `WEBHOOK_TIMEOUT_MS`',
          },
          { name: 'dispatch-*', owner: 'U0ALICE', dashboard: DISPATCH_DASHBOARD },
          { name: 'events', owner: 'S0EVENTS', notes: 'healthy here' },
        ],
      }),
    ],
  });
}

async function fail(queueName: string, count: number): Promise<string> {
  const queue = new Queue(queueName, { connection, prefix });
  closers.push(() => queue.close());
  const worker = new Worker(
    queueName,
    async () => {
      throw new Error('customer endpoint timed out after 10000ms');
    },
    { connection, prefix },
  );
  const jobs = await queue.addBulk(
    Array.from({ length: count }, (_, i) => ({ name: 'deliver', data: { i } })),
  );
  await waitFor(`${count} failed in ${queueName}`, async () => (await queue.getFailedCount()) === count);
  await worker.close();
  return jobs[0]!.id!;
}

beforeAll(async () => {
  failedIds.webhooks = await fail('webhooks', 3);
  failedIds['dispatch-ios'] = await fail('dispatch-ios', 2);
  // Queues the discovery sees: one the pattern takes, one nobody listed, and the listed ones.
  for (const name of ['dispatch-web', 'reports', 'events', 'scheduler']) {
    const queue = new Queue(name, { connection, prefix });
    closers.push(() => queue.close());
    await queue.waitUntilReady();
  }
  dir = tempDir('queue-context');
  english = writeConfigIn(dir.dir, 'en.db', 'en');
  const trDir = join(dir.dir, 'tr');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(trDir);
  turkish = writeConfigIn(trDir, 'tr.db', 'tr');
}, 60_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await deletePrefix(url, prefix);
  dir?.remove();
});

async function json(config: string, ...words: string[]) {
  const run = await runCliInProcess(['--config', config, '--json', ...words]);
  expect(run.code, run.stderr).toBe(0);
  const out = jsonOf(run);
  expect(validateMessage(out.message as Message), 'within Slack’s limits').toEqual([]);
  return { out, blocks: JSON.stringify(out.message.blocks) };
}

const webhooksContext = {
  owner: 'S0WEBHOOKS',
  runbook: WEBHOOKS_RUNBOOK,
  dashboard: null,
  notes: 'endpoint <slow> & 10 s timeout → `WEBHOOK_TIMEOUT_MS`',
};
/** The runbook as a Slack link: `&` escaped as Slack asks, the label a word. */
const webhooksLink = `<${WEBHOOKS_RUNBOOK.replace('&', '&amp;')}|runbook>`;

describe('who owns a queue, where an operator looks', () => {
  it('status lists the pattern’s discovered queues and names the owner and runbook of flagged queues only', async () => {
    const { out, blocks } = await json(english, 'status', 'pushizo');
    const queues = (out.data as { systems: { queues: { name: string; context?: unknown }[] }[] }).systems[0]!
      .queues;
    // `dispatch-*` brings in what discovery found; `reports` matches nothing and is not the system's.
    expect(queues.map((q) => q.name)).toEqual([
      'dispatch-ios',
      'dispatch-web',
      'events',
      'scheduler',
      'webhooks',
    ]);
    const contextOf = (name: string) => queues.find((q) => q.name === name)!.context;
    expect(contextOf('webhooks')).toEqual(webhooksContext);
    expect(contextOf('dispatch-web')).toEqual({
      owner: 'U0ALICE',
      runbook: null,
      dashboard: DISPATCH_DASHBOARD,
      notes: null,
    });
    expect(contextOf('events')).toEqual({
      owner: 'S0EVENTS',
      runbook: null,
      dashboard: null,
      notes: 'healthy here',
    });
    expect(contextOf('scheduler')).toBeUndefined();

    // The message: a line for each flagged queue (failures), owner as a mention, links as links,
    // the notes escaped; the healthy `events` is not named.
    expect(blocks).toContain('Flagged queues: who owns them');
    expect(blocks).toContain(
      `\`webhooks\` · Owner \`S0WEBHOOKS\` · ${webhooksLink} · endpoint &lt;slow&gt; &amp; 10 s timeout → \`WEBHOOK_TIMEOUT_MS\``,
    );
    expect(blocks).toContain(`\`dispatch-ios\` · Owner \`U0ALICE\` · <${DISPATCH_DASHBOARD}|dashboard>`);
    expect(blocks).not.toContain('S0EVENTS');
  });

  it('the terminal shows the same context readably', async () => {
    const run = await runCliInProcess(['--config', english, 'status', 'pushizo']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      `\`webhooks\` · Owner \`S0WEBHOOKS\` · runbook (${WEBHOOKS_RUNBOOK}) · endpoint <slow> & 10 s timeout`,
    );
    expect(run.stdout).toContain(`\`dispatch-ios\` · Owner \`U0ALICE\` · dashboard (${DISPATCH_DASHBOARD})`);
  });

  it('dlq carries the queue’s context, by its exact entry or its pattern, and null where there is none', async () => {
    const webhooks = await json(english, 'dlq', 'pushizo/webhooks');
    expect((webhooks.out.data as { context: unknown }).context).toEqual(webhooksContext);
    expect(webhooks.blocks).toContain(`Owner \`S0WEBHOOKS\` · ${webhooksLink}`);

    const ios = await json(english, 'dlq', 'pushizo/dispatch-ios');
    expect((ios.out.data as { context: unknown }).context).toEqual({
      owner: 'U0ALICE',
      runbook: null,
      dashboard: DISPATCH_DASHBOARD,
      notes: null,
    });
    expect(ios.blocks).toContain(`Owner \`U0ALICE\` · <${DISPATCH_DASHBOARD}|dashboard>`);

    const scheduler = await json(english, 'dlq', 'pushizo/scheduler');
    expect((scheduler.out.data as { context: unknown }).context).toBeNull();
    expect(scheduler.blocks).not.toContain('Owner');
  });

  it('job shows the owner and runbook of the job’s queue', async () => {
    const { out, blocks } = await json(english, 'job', 'pushizo/webhooks', failedIds.webhooks!);
    expect((out.data as { context: unknown; job: { state: string } }).job.state).toBe('failed');
    expect((out.data as { context: unknown }).context).toEqual(webhooksContext);
    expect(blocks).toContain(`Owner \`S0WEBHOOKS\` · ${webhooksLink}`);
  });

  it('speaks Turkish when the config does', async () => {
    const dlq = await json(turkish, 'dlq', 'pushizo/webhooks');
    expect(dlq.blocks).toContain(`Sahibi \`S0WEBHOOKS\` · ${webhooksLink}`);
    const status = await json(turkish, 'status', 'pushizo');
    expect(status.blocks).toContain('İşaretli kuyruklar: sahipleri');
    expect(status.blocks).toContain(`\`dispatch-ios\` · Sahibi \`U0ALICE\` · <${DISPATCH_DASHBOARD}|pano>`);
  });
});
