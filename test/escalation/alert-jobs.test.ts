import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionId, wordsForAction } from '../../src/blocks/action-ids.js';
import { validateMessage } from '../../src/blocks/validate.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { runCli } from '../../src/transports/cli/run.js';
import { connectionFor, randomName, waitFor } from '../helpers/bullmq-jobs.js';
import { type CeleryWorker, publishCelery, redisDbUrl, startCeleryWorker } from '../helpers/celery-worker.js';
import { bullmqSystem, celerySystem, writeConfigFile } from '../helpers/config-file.js';
import { fakeSlack, kindOf, type SlackCall } from './fake-slack.js';

/**
 * Every alert about jobs lists them, each linked to its `job` view the way `dlq` and `stuck` are:
 * the command to type, and in Slack a button whose value is only `system/queue/id` and which runs
 * that command. Over real BullMQ queues and a real Celery worker, with a real `monitor --once` and
 * Slack's Web API behind nock: failures (the newest failed jobs), a queue waiting too long (the
 * next jobs to be taken) and work running too long (the longest running), in English and Turkish,
 * alone and in a group message.
 */
const SLACK = 'https://slack.alert-jobs.test';

describe('alerts link each job they list to its job view', () => {
  const root = mkdtempSync(join(tmpdir(), 'queue-ops-alert-jobs-'));
  const prefix = randomName('aj');
  let redis: PrivateRedis;
  let bullUrl: string;
  let zeusUrl: string;
  const closers: (() => Promise<unknown>)[] = [];
  const celery: CeleryWorker[] = [];
  /** The ids each alert must list, by `system/queue`. */
  const expected: Record<string, string[]> = {};

  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    redis = await startPrivateRedis();
    bullUrl = redisDbUrl(redis.url, 0);
    zeusUrl = redisDbUrl(redis.url, 1);
    const connection = connectionFor(bullUrl);

    // Failures: two jobs a worker failed.
    const failing = new Queue('dispatch-ios', { connection, prefix });
    closers.push(() => failing.close());
    const failer = new Worker(
      'dispatch-ios',
      async () => {
        throw new Error('APNs answered 503');
      },
      { connection, prefix },
    );
    const failed = await failing.addBulk([1, 2].map((i) => ({ name: 'push', data: { i } })));
    await waitFor('two failures', async () => (await failing.getFailedCount()) === 2);
    await failer.close();
    // The newest failure first.
    expect(await failing.getFailed()).toHaveLength(2);
    expected['pushizo/dispatch-ios'] = (await failing.getFailed()).map((j) => j.id!);
    expect(expected['pushizo/dispatch-ios']!.sort()).toEqual(failed.map((j) => j.id!).sort());

    // Waiting too long: four jobs added two minutes ago, no worker; the first added is next.
    const waiting = new Queue('scheduler', { connection, prefix });
    closers.push(() => waiting.close());
    const queued = [];
    for (let i = 0; i < 4; i++)
      queued.push(await waiting.add('campaign', { i }, { timestamp: Date.now() - 120_000 }));
    expected['pushizo/scheduler'] = queued.slice(0, 3).map((j) => j.id!);

    // Running too long: a worker holds one job (its lock renewed), started now.
    const running = new Queue('render', { connection, prefix });
    closers.push(() => running.close());
    await running.add('thumbnail', {});
    const holder = new Worker('render', null, { connection, prefix, lockDuration: 60_000 });
    closers.push(() => holder.close(true));
    const held = await holder.getNextJob(randomName('tok'));
    expected['pushizo/render'] = [held!.id!];

    // Celery: a task that failed, two waiting (their ETA long past) in a queue nobody consumes,
    // and one running.
    celery.push(
      await startCeleryWorker({ brokerUrl: zeusUrl, queues: ['aj_fail', 'aj_run'], name: 'zeus-aj' }),
    );
    const boom = await publishCelery({ brokerUrl: zeusUrl }, [
      { task: 'tasks.boom', args: ['gateway down'], queue: 'aj_fail', wait: true },
    ]);
    expected['zeus/aj_fail'] = boom.ids;
    const late = await publishCelery({ brokerUrl: zeusUrl }, [
      { task: 'tasks.add', args: [1, 1], queue: 'aj_wait', etaSeconds: -300 },
      { task: 'tasks.add', args: [2, 2], queue: 'aj_wait', etaSeconds: -300 },
    ]);
    expected['zeus/aj_wait'] = late.ids;
    const sleepy = await publishCelery({ brokerUrl: zeusUrl }, [
      { task: 'tasks.sleepy', args: [40], queue: 'aj_run' },
    ]);
    expected['zeus/aj_run'] = sleepy.ids;
    const raw = new (await import('ioredis')).Redis(zeusUrl);
    try {
      // Taken by the worker (its message is in `unacked`, the list is empty): it runs.
      await waitFor('the sleepy task to start', async () => (await raw.llen('aj_run')) === 0);
    } finally {
      raw.disconnect();
    }
  }, 90_000);

  afterAll(async () => {
    for (const worker of celery) await worker.stop();
    for (const close of closers.reverse()) await close();
    await redis?.stop();
    nock.cleanAll();
    nock.enableNetConnect();
    rmSync(root, { recursive: true, force: true });
  });

  function writeConfig(
    name: string,
    more: { groupBy: NonNullable<ConfigInput['escalation']>['groupBy']; locale?: ConfigInput['locale'] },
  ): string {
    const dir = join(root, name);
    mkdirSync(dir);
    return writeConfigFile(dir, {
      slack: { incidentChannel: 'C0INCIDENT' },
      store: `sqlite:${join(dir, 'queue-ops.db')}`,
      systems: [
        bullmqSystem('pushizo', bullUrl, prefix, { queues: ['dispatch-ios', 'scheduler', 'render'] }),
        celerySystem('zeus', zeusUrl, { queues: ['aj_fail', 'aj_wait', 'aj_run'], inspectTimeoutMs: 1500 }),
      ],
      escalation: {
        rules: [
          { name: 'failing', queues: ['pushizo/dispatch-ios', 'zeus/aj_fail'], metric: 'failed', above: 0 },
          {
            name: 'late',
            queues: ['pushizo/scheduler', 'zeus/aj_wait'],
            metric: 'oldestWaitingSeconds',
            above: 60,
          },
          { name: 'busy', queues: ['pushizo/render', 'zeus/aj_run'], metric: 'active', above: 0 },
        ],
        groupBy: more.groupBy,
      },
      ...(more.locale ? { locale: more.locale } : {}),
    });
  }

  async function once(config: string): Promise<SlackCall[]> {
    const slack = fakeSlack(SLACK);
    const err: string[] = [];
    const code = await runCli({
      argv: ['--config', config, 'monitor', '--once', '--json'],
      env: { SLACK_BOT_TOKEN: 'xoxb-jobs', SLACK_API_URL: `${SLACK}/api` },
      cwd: root,
      stdout: () => {},
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

  type Button = { action_id: string; value: string; text: { text: string } };
  const buttonsOf = (post: SlackCall): Button[] =>
    post.blocks.flatMap((b) => (b.type === 'actions' ? (b.elements as Button[]) : []));

  /** Each expected job of `subject`: its command in the text, and a button that runs it. */
  function expectLinked(post: SlackCall, subject: string, label: (id: string) => string) {
    const text = JSON.stringify(post.blocks);
    const ids = expected[subject]!;
    expect(ids.length).toBeGreaterThan(0);
    const jobButtons = buttonsOf(post).filter((b) => b.value.startsWith(`${subject}/`));
    for (const id of ids) {
      expect(text, `${subject} ${id}`).toContain(`\`/queue job ${subject} ${id}\``);
      const button = jobButtons.find((b) => b.value === `${subject}/${id}`);
      expect(button, `${subject} ${id}'s button`).toBeDefined();
      expect(button!.text.text).toBe(label(id));
      expect(button!.action_id.split('#')[0]).toBe(ActionId.JobRefresh);
      // The click is the typed command, through the same parser and guards.
      expect(wordsForAction(button!.action_id, button!.value)).toEqual(['job', subject, id]);
    }
  }

  it('one message per alert: every job of failures, a late queue and busy work is linked, BullMQ and Celery', async () => {
    const posts = await once(writeConfig('single', { groupBy: 'none' }));
    const about = (subject: string) => {
      // The header (plain text) ends with the subject as it is.
      const post = posts.find((p) => JSON.stringify(p.blocks[0]).includes(`· ${subject}"`));
      expect(post, `an alert on ${subject}`).toBeDefined();
      return post!;
    };
    for (const subject of Object.keys(expected)) expectLinked(about(subject), subject, (id) => `Job ${id}`);
    const failures = JSON.stringify(about('pushizo/dispatch-ios').blocks);
    expect(failures).toContain('*Newest failures*');
    expect(failures).toContain('APNs answered 503');
    expect(JSON.stringify(about('zeus/aj_fail').blocks)).toContain('ValueError: gateway down');
    expect(JSON.stringify(about('pushizo/scheduler').blocks)).toContain(
      '*Next to be taken (waiting longest)*',
    );
    // Three of the four waiting, the next first; the fourth is not listed.
    const scheduler = JSON.stringify(about('pushizo/scheduler').blocks);
    const [first, second, third] = expected['pushizo/scheduler']!;
    expect(scheduler.indexOf(`scheduler ${first}\``)).toBeLessThan(
      scheduler.indexOf(`scheduler ${second}\``),
    );
    expect(scheduler.indexOf(`scheduler ${second}\``)).toBeLessThan(
      scheduler.indexOf(`scheduler ${third}\``),
    );
    expect(JSON.stringify(about('zeus/aj_run').blocks)).toMatch(
      /\*Running longest\*.*tasks\.sleepy · running for/,
    );
  }, 90_000);

  it('a group message in Turkish links each alert’s jobs too', async () => {
    const posts = await once(writeConfig('grouped', { groupBy: ['system'], locale: 'tr' }));
    expect(posts).toHaveLength(2);
    const bySystem = (system: string) => posts.find((p) => JSON.stringify(p.blocks).includes(`${system}/`))!;
    for (const subject of Object.keys(expected))
      expectLinked(bySystem(subject.split('/')[0]!), subject, (id) => `İş ${id}`);
    expect(JSON.stringify(bySystem('pushizo').blocks)).toContain('*En yeni başarısızlar*');
  }, 90_000);
});
