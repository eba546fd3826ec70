import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { pageEvent } from '../../src/escalation/page-event.js';
import { requestFromSlack } from '../../src/transports/slack/request.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { onlyNockBeyondLoopback } from '../helpers/no-network.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { buttonClick } from '../transports/slack/harness.js';
import { botProcesses } from './bot-processes.js';
import { fakeSlack, kindOf } from './fake-slack.js';

/**
 * Issue 36 §3 against real BullMQ queues and workers: a worker that goes away while work keeps
 * arriving opens an alert on each of its queues; the monitor diagnoses them as it opens them, so
 * they share one message that leads with the cause, carry it in `--json` and in their page, and
 * the message's Why? button answers `why` through the normal pipeline.
 */
const redisUrl = testRedisUrl();
const SLACK = 'https://slack.cause.test';
const T0 = Date.parse('2030-03-01T03:10:00.000Z');
const QUEUES = ['alarm', 'billing', 'mailer'];

let dir: string;
let prefix: string;
let queues: Queue[];
let slack: ReturnType<typeof fakeSlack>;
const bots = botProcesses(SLACK);

onlyNockBeyondLoopback();

const config = (groupBy?: string[] | 'none') =>
  configSchema.parse({
    slack: { incidentChannel: 'C0INCIDENT', allowedChannels: ['C0INCIDENT'] },
    store: `sqlite:${join(dir, 'queue-ops.db')}`,
    roles: { viewer: ['*'], operator: ['U0ALICE'] },
    systems: [{ name: 'zeus', type: 'bullmq', redis: redisUrl, prefix, queues: QUEUES }],
    escalation: {
      ...(groupBy ? { groupBy } : {}),
      intervalSeconds: 30,
      rules: [
        { name: 'no-workers', queues: ['*'], metric: 'workers', below: 1, for: '1m', severity: 'critical' },
      ],
    },
  });

const s = (seconds: number) => T0 + seconds * 1000;
const textOf = (value: unknown) => JSON.stringify(value);
type Button = { action_id: string; value: string; text: { text: string } };
const buttonsOf = (blocks: Record<string, unknown>[]) =>
  blocks.filter((b) => b.type === 'actions').flatMap((b) => (b as { elements: Button[] }).elements);

/** Worker `w1` on every queue, answering; then gone, with work arriving on each queue. */
async function workerGoesAway(bot: Awaited<ReturnType<typeof bots.start>>) {
  const workers = QUEUES.map(
    (name) =>
      new Worker(name, async () => undefined, { connection: connectionFor(redisUrl), prefix, name: 'w1' }),
  );
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  await bots.tick(bot.escalation, s(0));
  await bots.tick(bot.escalation, s(30));
  await Promise.all(workers.map((w) => w.close()));
  for (const [i, q] of queues.entries())
    await q.addBulk(Array.from({ length: 4 + i }, (_, n) => ({ name: 'send', data: { n } })));
  const opened = [];
  for (const at of [60, 90, 120, 150]) {
    const { outcome } = await bots.tick(bot.escalation, s(at));
    if (outcome.leader) opened.push(...outcome.opened);
  }
  return opened;
}

describe('alerts carry their cause (real BullMQ workers and queues)', () => {
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-cause-'));
    prefix = randomName('cause');
    queues = QUEUES.map((name) => new Queue(name, { connection: connectionFor(redisUrl), prefix }));
    await Promise.all(queues.map((q) => q.waitUntilReady()));
    bots.clock = T0;
    slack = fakeSlack(SLACK, { now: () => bots.clock });
  });
  afterEach(async () => {
    await bots.closeAll();
    await Promise.all(queues.map((q) => q.close()));
    await deletePrefix(redisUrl, prefix);
    nock.cleanAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a worker gone: one message leading with no-workers, the cause in --json and the page, Why? answers why', async () => {
    const bot = await bots.start(config());
    const opened = await workerGoesAway(bot);
    expect(opened.map((a) => a.queue).sort()).toEqual(QUEUES);
    // Fixed when it opened, the same on every alert it explains.
    expect(new Set(opened.map((a) => a.cause?.id))).toEqual(new Set(['no-workers']));

    // One message, not three, leading with the cause and who left.
    const posts = slack.calls.filter((c) => kindOf(c) === 'post');
    expect(posts).toHaveLength(1);
    const header = (posts[0]!.blocks[0] as { text: { text: string } }).text.text;
    expect(header).toContain('3 queues have no consumer: worker w1 stopped answering after 03:10 UTC');
    const body = textOf(posts[0]!.blocks);
    expect(body).toContain('*Cause:*');
    for (const q of QUEUES) expect(body).toContain(`zeus/${q}`);

    // The Why? button runs `why zeus` through the normal pipeline, which names the same cause.
    const why = buttonsOf(posts[0]!.blocks).find((b) => b.action_id === 'queue_ops.alert.why')!;
    expect(why.text.text).toBe('Why?');
    const words = requestFromSlack(buttonClick(why.action_id, why.value, '/r'))?.words;
    expect(words).toEqual(['why', 'zeus']);
    const answer = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0BOB' },
      via: 'cli',
      words: words!,
      locale: 'en',
    });
    expect(answer.ok).toBe(true);
    expect((answer.data as { causes: { id: string }[] }).causes[0]!.id).toBe('no-workers');

    // `alerts --json` carries the cause: id, summary, one evidence line, fixes.
    const listed = await bot.runtime.dispatcher.handle({
      actor: { id: 'U0BOB' },
      via: 'cli',
      words: ['alerts'],
      locale: 'en',
    });
    const alerts = (listed.data as { alerts: { cause: Record<string, unknown> | null }[] }).alerts;
    expect(alerts).toHaveLength(3);
    for (const a of alerts) {
      expect(a.cause).toMatchObject({ id: 'no-workers', fixes: [] });
      expect(String(a.cause!.summary)).toContain('3 queues have no consumer');
      expect(String(a.cause!.evidence)).toContain('waiting on 3 queues');
    }

    // The page for the message says the cause.
    const event = pageEvent('trigger', 'k', opened, 'en');
    expect(event.summary).toContain('3 queues have no consumer: worker w1 stopped answering');

    // Still the cause it opened with, ticks later, even once a worker answers again.
    const back = new Worker('alarm', async () => undefined, {
      connection: connectionFor(redisUrl),
      prefix,
      name: 'w2',
    });
    await back.waitUntilReady();
    const { outcome } = await bots.tick(bot.escalation, s(180));
    await back.close();
    if (outcome.leader)
      for (const a of outcome.firing) expect(a.cause?.summary).toBe(opened[0]!.cause?.summary);
  });

  it('grouped the old way (groupBy: [system, severity]) the cause still leads the message', async () => {
    const bot = await bots.start(config(['system', 'severity']));
    await workerGoesAway(bot);
    const posts = slack.calls.filter((c) => kindOf(c) === 'post');
    expect(posts).toHaveLength(1);
    expect(textOf(posts[0]!.blocks)).toContain('3 queues have no consumer');
  });

  it('groupBy none: one message per alert, each with its cause and a Why? button for its queue', async () => {
    const bot = await bots.start(config('none'));
    await workerGoesAway(bot);
    const posts = slack.calls.filter((c) => kindOf(c) === 'post');
    expect(posts).toHaveLength(3);
    const whys = posts.map(
      (p) => buttonsOf(p.blocks).find((b) => b.action_id === 'queue_ops.alert.why')?.value,
    );
    expect(whys.sort()).toEqual(QUEUES.map((q) => `zeus/${q}`));
    for (const p of posts) expect(textOf(p.blocks)).toContain('*Cause:* 3 queues have no consumer');
  });
});
