import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCeleryDelayed } from '../../src/backends/celery/delayed.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { waitFor } from '../helpers/bullmq-jobs.js';
import { type CeleryWorker, publishCelery, redisDbUrl, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { celerySystem, writeConfigFile } from '../helpers/config-file.js';

/**
 * `status <system>/<queue>` of a Celery queue buckets its delayed tasks by when they are due, as
 * BullMQ's are: a real worker takes each ETA / countdown task at once and holds it in kombu's
 * `unacked` hash until it is due, and status walks that hash, bounded, counting only the queue's
 * own. The test sends the tasks with ETAs and countdowns well inside each bucket, so the clock's
 * drift during the test never moves one across a boundary.
 */
const CAMPAIGN = 'dl_campaign';
const OTHER = 'dl_other';

describe('Celery delayed tasks by when they are due', () => {
  const dir = tempDir('celery-delayed');
  let redis: PrivateRedis;
  let brokerUrl: string;
  let worker: CeleryWorker;
  let config: string;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    brokerUrl = redisDbUrl(redis.url, 0);
    worker = await startCeleryWorker({ brokerUrl, queues: [CAMPAIGN, OTHER], name: 'zeus-dl' });
    await publishCelery({ brokerUrl }, [
      // Next 5 minutes: an ETA in 1 minute and a countdown of 2.
      { task: 'tasks.add', args: [1, 1], queue: CAMPAIGN, etaSeconds: 60 },
      { task: 'tasks.add', args: [2, 2], queue: CAMPAIGN, countdown: 120 },
      // Within the hour: 20 minutes.
      { task: 'tasks.add', args: [3, 3], queue: CAMPAIGN, countdown: 1200 },
      // Within the day: 2 and 5 hours.
      { task: 'tasks.add', args: [4, 4], queue: CAMPAIGN, etaSeconds: 7200 },
      { task: 'tasks.add', args: [5, 5], queue: CAMPAIGN, etaSeconds: 18_000 },
      // Later: 2 days.
      { task: 'tasks.add', args: [6, 6], queue: CAMPAIGN, etaSeconds: 172_800 },
      // Another queue's, due in a minute: never counted as the campaign's.
      ...[7, 8, 9].map((n) => ({ task: 'tasks.add', args: [n, n], queue: OTHER, etaSeconds: 60 })),
    ]);
    const raw = new Redis(brokerUrl);
    try {
      // The worker took every one at once and holds it, unacknowledged, until it is due.
      await waitFor('the worker to hold all 9 ETA tasks', async () => (await raw.hlen('unacked')) === 9);
    } finally {
      raw.disconnect();
    }
    config = writeConfigFile(dir.dir, {
      roles: { viewer: ['*'] },
      systems: [
        celerySystem('zeus', brokerUrl, { queues: [CAMPAIGN, OTHER, 'dl_quiet'], inspectTimeoutMs: 1000 }),
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
    await redis?.stop();
    dir.remove();
  });

  const cli = (...words: string[]) => runCliInProcess(['--config', config, ...words], { cwd: dir.dir });

  it('--json gives the buckets with BullMQ’s field names, and how far it looked', async () => {
    const json = jsonOf(await cli('--json', 'status', `zeus/${CAMPAIGN}`));
    const queue = (json.data as { systems: { queues: Record<string, unknown>[] }[] }).systems[0]!.queues[0]!;
    expect(queue).toMatchObject({
      name: CAMPAIGN,
      delayed: 6,
      delayedDue: { next5m: 2, nextHour: 1, nextDay: 2, later: 1 },
      delayedScan: { looked: 9, of: 9, complete: true },
    });
    // Exactly BullMQ's fields (docs/json.md).
    expect(Object.keys(queue.delayedDue as object).sort()).toEqual([
      'later',
      'next5m',
      'nextDay',
      'nextHour',
    ]);

    const other = jsonOf(await cli('--json', 'status', `zeus/${OTHER}`));
    expect(
      (other.data as { systems: { queues: Record<string, unknown>[] }[] }).systems[0]!.queues[0],
    ).toMatchObject({ delayed: 3, delayedDue: { next5m: 3, nextHour: 0, nextDay: 0, later: 0 } });
  });

  it('the text says when they are due, where they were counted, and what it cannot see', async () => {
    const run = await cli('status', `zeus/${CAMPAIGN}`);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      'Delayed by due time: 2 in the next 5 min · 1 within the hour · 2 within the day · 1 later.',
    );
    expect(run.stdout).toContain('Delayed tasks are counted in `unacked`');
    expect(run.stdout).toContain('(all 9 entries read)');
    expect(run.stdout).not.toContain('No delayed');
    expect(run.stdout).toContain(
      'a task a worker holds only in memory, with no entry there (as after Redis restarted without it), is not counted',
    );
    // A queue with none says so, and where it looked.
    const quiet = await cli('status', 'zeus/dl_quiet');
    expect(quiet.stdout).toContain(
      'No delayed (ETA / countdown) task of this queue in `unacked`, where a worker holds one until it is due (all 9 entries read)',
    );
    // A status of every queue walks nothing: the buckets are for one queue.
    const all = jsonOf(await cli('--json', 'status', 'zeus'));
    for (const q of (all.data as { systems: { queues: Record<string, unknown>[] }[] }).systems[0]!.queues)
      expect(q.delayedDue).toBeUndefined();
  });

  it('a walk cut short by its bound says how far it looked, and counts only what it read', async () => {
    const client = new Redis(brokerUrl);
    try {
      const whole = await readCeleryDelayed(client, 'unacked', CAMPAIGN, Date.now());
      expect(whole.scan).toEqual({ looked: 9, of: 9, complete: true });
      const cut = await readCeleryDelayed(client, 'unacked', CAMPAIGN, Date.now(), {
        step: 2,
        maxEntries: 2,
      });
      expect(cut.scan.complete).toBe(false);
      expect(cut.scan.of).toBe(9);
      expect(cut.scan.looked).toBeLessThan(9);
      const counted = cut.due.next5m + cut.due.nextHour + cut.due.nextDay + cut.due.later;
      expect(counted).toBeLessThanOrEqual(Math.min(6, cut.scan.looked));
    } finally {
      client.disconnect();
    }
  });
});
