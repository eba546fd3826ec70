import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/transports/cli/run.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { type CeleryWorker, publishCelery, redisDbUrl, startCeleryWorker } from '../helpers/celery-worker.js';
import { backlogRule, bullmqSystem, celerySystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { fakeSlack, kindOf } from './fake-slack.js';

// This file owns Redis DB 12 for its Celery broker and results.
const DB = 12;
const base = testRedisUrl();
const brokerUrl = redisDbUrl(base, DB);
const SLACK = 'https://slack.once.test';

describe('queue-ops monitor --once against real BullMQ queues and a real Celery worker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-once-'));
  const prefix = randomName('once');
  let config: string;
  let queue: Queue;
  const workers: CeleryWorker[] = [];
  let slack: ReturnType<typeof fakeSlack>;

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    const flush = new Redis(brokerUrl);
    await flush.flushdb();
    flush.disconnect();
    queue = new Queue('dispatch-ios', { connection: connectionFor(base), prefix });
    await queue.waitUntilReady();
    config = writeConfigFile(dir, {
      slack: { incidentChannel: 'C0INCIDENT' },
      store: `sqlite:${join(dir, 'queue-ops.db')}`,
      systems: [
        bullmqSystem('pushizo', base, prefix, { queues: ['dispatch-ios'] }),
        celerySystem('zeus', brokerUrl, { queues: ['celery', 'alarms'], inspectTimeoutMs: 1000 }),
      ],
      escalation: {
        groupBy: 'none',
        clearAfterSamples: 2,
        rules: [
          backlogRule(['pushizo/dispatch-*']),
          {
            name: 'alarm-latency',
            queues: ['zeus/alarms'],
            metric: 'oldestWaitingSeconds',
            above: 1,
            severity: 'critical',
          },
          { name: 'no-workers', queues: ['zeus/alarms'], metric: 'workers', below: 1, severity: 'critical' },
        ],
      },
    });
    workers.push(await startCeleryWorker({ brokerUrl, queues: ['celery'], name: 'only-default' }));
  }, 60_000);

  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await queue.close();
    await deletePrefix(base, prefix);
    nock.cleanAll();
    nock.enableNetConnect();
    rmSync(dir, { recursive: true, force: true });
  });

  async function once(
    env: Record<string, string> = { SLACK_BOT_TOKEN: 'xoxb-once', SLACK_API_URL: `${SLACK}/api` },
  ) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli({
      argv: ['--config', config, 'monitor', '--once', '--json'],
      env,
      cwd: dir,
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      osUser: 'cron',
    });
    const lines = out.join('').split('\n').filter(Boolean);
    expect(lines, err.join('')).toHaveLength(1);
    return { code, json: JSON.parse(lines[0]!), stderr: err.join('') };
  }

  it('posts one message per alert as thresholds are crossed, and resolves them when they clear', async () => {
    slack = fakeSlack(SLACK);
    await queue.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: 'send-push', data: { n: i } })));
    await publishCelery(
      { brokerUrl },
      [1, 2, 3].map((n) => ({ task: 'tasks.add', args: [n, n], queue: 'alarms' })),
    );

    // Run 1: the backlog and "nobody consumes alarms" fire; the alarm's age is first seen now.
    const first = await once();
    expect(first.code).toBe(0);
    expect(first.json.ok).toBe(true);
    const rules = (r: { json: { data: { firing: { rule: string }[] } } }) =>
      r.json.data.firing.map((a) => a.rule).sort();
    expect(rules(first)).toEqual(['backlog', 'no-workers']);
    // Each queue alert's post is followed by its queue's chart, in its thread (charts go on their
    // own lane, once the messages due are out).
    expect(first.json.data.outbox).toMatchObject({ sent: 4, pending: 0 });
    expect(slack.delivered().map(kindOf)).toEqual(['post', 'post', 'chart', 'chart']);
    const [p1, p2, c1, c2] = slack.delivered();
    expect([c1!.body.thread_ts, c2!.body.thread_ts]).toEqual([p1!.ts, p2!.ts]);

    // Run 2, seconds later: the same message is still at the head of `alarms`, so its age is
    // measured from run 1's sighting (kept in the store), and alarm-latency fires. Nothing is re-posted.
    await new Promise((resolve) => setTimeout(resolve, 2200));
    const second = await once();
    expect(rules(second)).toEqual(['alarm-latency', 'backlog', 'no-workers']);
    const latency = second.json.data.firing.find((a: { rule: string }) => a.rule === 'alarm-latency');
    expect(latency.value).toBeGreaterThanOrEqual(2);
    expect(second.json.data.opened).toEqual([latency.id]);
    expect(slack.delivered().filter((c) => kindOf(c) === 'post')).toHaveLength(3);

    // A worker for `alarms` drains it; the BullMQ backlog is worked off too.
    workers.push(await startCeleryWorker({ brokerUrl, queues: ['alarms'], name: 'alarm-worker' }));
    const probe = new Redis(brokerUrl);
    await expect.poll(() => probe.llen('alarms'), { timeout: 20_000 }).toBe(0);
    probe.disconnect();
    await queue.drain(true);

    // Two samples back under every threshold resolve all three, each in its own message.
    const third = await once();
    expect(third.json.data.resolved).toEqual([]);
    const fourth = await once();
    expect(fourth.json.data.resolved).toHaveLength(3);
    expect(fourth.json.data.firing).toEqual([]);
    const posts = slack.delivered().filter((c) => kindOf(c) === 'post');
    expect(posts).toHaveLength(3);
    const lastUpdates = new Map(
      slack
        .delivered()
        .filter((c) => kindOf(c) === 'update')
        .map((c) => [c.body.ts, JSON.stringify(c.blocks)]),
    );
    for (const post of posts) expect(lastUpdates.get(post.ts!)).toContain('RESOLVED');
    // A chart when each fired and when each resolved, each in its alert's thread.
    const threads = slack.uploads.map((u) => u.completed?.thread_ts);
    expect(threads).toHaveLength(6);
    for (const post of posts) expect(threads.filter((ts) => ts === post.ts)).toHaveLength(2);
    expect(slack.uploads.every((u) => u.png !== undefined)).toBe(true);
    // Job payloads and task arguments never reach Slack.
    expect(JSON.stringify(slack.calls)).not.toContain('send-push');
  }, 90_000);

  it('without SLACK_BOT_TOKEN the alerts are tracked and their messages wait in the outbox', async () => {
    await queue.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: 'send-push', data: { n: i } })));
    const run = await once({});
    expect(run.json.data.opened).toHaveLength(1);
    // The backlog resolved minutes ago, so it reopens in place (an update and a "firing again" in
    // its thread) instead of a new post; both wait for a token.
    expect(run.json.data.outbox).toMatchObject({ sent: 0, pending: 2 });
    // The firing line names the metric and reads value against threshold, as the alert post does.
    expect(JSON.stringify(run.json.message)).toContain('*waiting*: *60 jobs* (above 50 jobs)');
    expect(run.json.message.blocks[1].elements.map((e: { text: string }) => e.text)).toContain(
      'SLACK_BOT_TOKEN is not set: messages wait in the outbox.',
    );
    await queue.drain(true);
  });

  it('monitor without --once answers with its usage', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli({
      argv: ['--config', config, 'monitor'],
      env: {},
      cwd: dir,
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
    });
    expect(code).toBe(2);
    expect(err.join('')).toContain('queue-ops monitor --once');
  });
});
