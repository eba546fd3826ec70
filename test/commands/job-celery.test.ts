import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionId, wordsForAction } from '../../src/blocks/action-ids.js';
import type { CeleryTaskData } from '../../src/commands/job.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { celerySystem, writeConfigFile } from '../helpers/config-file.js';
import { waitFor } from './fixture.js';

/** `job <system> <task-id>`: where a real Celery 5 worker's task is, through the command line. */
let redis: PrivateRedis;
let client: Redis;
let worker: CeleryWorker;
let dir: { dir: string; remove(): void };
let config: string;
const ids: Record<string, string | undefined> = {};

beforeAll(async () => {
  redis = await startPrivateRedis();
  client = new Redis(redis.url);
  const target = { brokerUrl: redis.url };
  worker = await startCeleryWorker({
    brokerUrl: redis.url,
    queues: ['celery'],
    name: 'jobs',
    concurrency: 1,
  });
  const publish = async (tasks: Parameters<typeof publishCelery>[1]) =>
    (await publishCelery(target, tasks)).ids;
  [ids.failed] = await publish([
    { task: 'tasks.boom', args: ['card 4242 declined password=hunter2'], queue: 'celery', wait: true },
  ]);
  // One running (a 30 s sleep on the only process), then two waiting in a queue no worker consumes.
  [ids.running] = await publish([{ task: 'tasks.sleepy', args: [30], queue: 'celery' }]);
  [ids.first, ids.second] = await publish([
    { task: 'tasks.add', args: [1, 2], queue: 'celery:slow' },
    { task: 'tasks.add', args: [3, 4], queue: 'celery:slow' },
  ]);
  dir = tempDir('job-celery');
  config = writeConfigFile(dir.dir, {
    store: `sqlite:${join(dir.dir, 'q.db')}`,
    systems: [
      celerySystem('zeus', redis.url, {
        queues: [
          'celery',
          { name: 'celery:slow', owner: 'S0ZEUS', runbook: 'https://runbooks.zeus.example/backlog#slow' },
        ],
      }),
    ],
  });
  await waitFor('the sleepy task running', async () => {
    const out = jsonOf(await runCliInProcess(['--config', config, '--json', 'job', 'zeus', ids.running!]));
    return (out.data as unknown as CeleryTaskData | null)?.task.state === 'active';
  });
}, 90_000);

afterAll(async () => {
  await worker?.stop();
  client?.disconnect();
  await redis?.stop();
  dir?.remove();
});

async function task(words: string[]) {
  const run = await runCliInProcess(['--config', config, '--json', 'job', ...words]);
  const out = jsonOf(run);
  return { run, out, data: out.data as unknown as CeleryTaskData };
}

describe('/queue job <system> <task-id> (Celery)', () => {
  describe('a failed task', () => {
    let shown: Awaited<ReturnType<typeof task>>;
    beforeAll(async () => {
      shown = await task(['zeus', ids.failed!]);
    });

    it('is shown from its result: error, traceback, when', () => {
      const { run, data } = shown;
      expect(run.code).toBe(0);
      expect(data.task).toMatchObject({ id: ids.failed, state: 'FAILURE', name: 'tasks.boom', where: null });
      expect(data.task.result).toMatchObject({ status: 'FAILURE', queue: 'celery' });
      expect(data.task.result!.error).toMatch(/^ValueError: card 4242 declined/);
      expect(data.task.result!.traceback.at(-1)).toMatch(/ValueError/);
      expect(Date.parse(`${data.task.result!.dateDone}Z`)).toBeLessThanOrEqual(Date.now());
    });

    it('has a Retry button', () => {
      expect(JSON.stringify(shown.out.message.blocks)).toContain(ActionId.JobRetry);
    });

    it('never shows its arguments', () => {
      expect(JSON.stringify(shown.out.message.blocks)).not.toContain('hunter2');
    });

    it('has no owner: its queue (`celery`, from its result) has none in the config', () => {
      expect(shown.data.context).toBeNull();
    });
  });

  it('shows a running task on its worker, with a Revoke button', async () => {
    const { data, out } = await task(['zeus', ids.running!]);
    expect(data.task).toMatchObject({ state: 'active', name: 'tasks.sleepy', worker: worker.name });
    expect(JSON.stringify(out.message.blocks)).toContain(ActionId.JobRevoke);
    expect(wordsForAction(ActionId.JobRevoke, `zeus//${ids.running}`)).toEqual([
      'revoke',
      'zeus',
      ids.running,
    ]);
    expect(wordsForAction(ActionId.JobRefresh, `zeus//${ids.running}`)).toEqual(['job', 'zeus', ids.running]);
  });

  it('shows a queued task with its list, priority and how many go before it', async () => {
    const first = (await task(['zeus', ids.first!])).data.task;
    expect(first).toMatchObject({
      state: 'queued',
      name: 'tasks.add',
      where: { queue: 'celery:slow', priority: 0, position: 0 },
    });
  });

  it('shows the owner of the queue a task waits in, found without naming its queue', async () => {
    const found = await task(['zeus', ids.first!]);
    expect(found.data.context).toEqual({
      owner: 'S0ZEUS',
      runbook: 'https://runbooks.zeus.example/backlog#slow',
      dashboard: null,
      notes: null,
    });
    expect(JSON.stringify(found.out.message.blocks)).toContain(
      'Owner `S0ZEUS` · <https://runbooks.zeus.example/backlog#slow|runbook>',
    );
  });

  it('looks only in the queue named: a task is found there with its place, not in another queue', async () => {
    const second = (await task(['zeus/celery:slow', ids.second!])).data.task;
    expect(second.where).toMatchObject({ queue: 'celery:slow', position: 1 });
    // Asked in a queue that does not hold it, it is not found there.
    const elsewhere = await task(['zeus/celery', ids.second!]);
    expect(elsewhere.out.error).toMatchObject({ code: 'UnknownJob' });
  });

  it('answers an id nothing knows in one line that says where it looked', async () => {
    const { run, out } = await task(['zeus', 'd0c0ffee-0000-4000-8000-000000000000']);
    expect(run.code).toBe(1);
    expect(out.error).toMatchObject({ code: 'UnknownJob' });
    expect(out.error!.message).toMatch(/^`zeus` has no task `d0c0ffee-/);
    for (const where of ['unacked', 'celery-task-meta-d0c0ffee', 'query_task'])
      expect(out.error!.message).toContain(where);
  });
});
