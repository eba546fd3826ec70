import { join } from 'node:path';
import { FlowProducer, Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionId, wordsForAction } from '../../src/blocks/action-ids.js';
import type { BullmqJobData } from '../../src/commands/job.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { connectionFor, randomName, waitFor } from './fixture.js';

/** `job <system>/<queue> <id>` on jobs real BullMQ put in every state, through the command line. */
const url = testRedisUrl();
const connection = connectionFor(url);
const prefix = randomName('qo');
const closers: (() => Promise<unknown>)[] = [];
let dir: { dir: string; remove(): void };
let config: string;
let queue: Queue;
let release!: () => void;
const ids: Record<string, string> = {};

beforeAll(async () => {
  queue = new Queue('dispatch', { connection, prefix });
  closers.push(() => queue.close());
  // A failure with a stack, after two attempts; then a success whose times are known.
  const failing = new Worker(
    'dispatch',
    async (job) => {
      if (job.name === 'send-push') throw new Error(`APNs 429 TooManyRequests token=${job.data.secret}`);
      return { delivered: job.data.secret };
    },
    { connection, prefix },
  );
  const failed = await queue.add('send-push', { secret: 'hunter2' }, { attempts: 2, backoff: 0 });
  const done = await queue.add('render', { secret: 'hunter2' });
  ids.failed = failed.id!;
  ids.completed = done.id!;
  await waitFor('failed and completed', async () => {
    const c = await queue.getJobCounts('failed', 'completed');
    return c.failed === 1 && c.completed === 1;
  });
  await failing.close();
  // One active job held by a live worker, then three waiting behind it and one delayed.
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holder = new Worker('dispatch', async () => gate, { connection, prefix, concurrency: 1 });
  closers.push(async () => {
    release();
    await holder.close();
  });
  ids.active = (await queue.add('hold', { secret: 'hunter2' })).id!;
  await waitFor('one active job', async () => (await queue.getActiveCount()) === 1);
  const waiting = await queue.addBulk([1, 2, 3].map((n) => ({ name: `wait-${n}`, data: {} })));
  ids.firstWaiting = waiting[0]!.id!;
  ids.lastWaiting = waiting[2]!.id!;
  ids.delayed = (await queue.add('later', {}, { delay: 3_600_000 })).id!;
  // A flow: a parent waiting for two children in another queue.
  const flows = new FlowProducer({ connection, prefix });
  closers.push(() => flows.close());
  const flow = await flows.add({
    name: 'campaign',
    queueName: 'dispatch',
    data: {},
    children: [
      { name: 'audience-part', queueName: 'audience', data: {} },
      { name: 'audience-part', queueName: 'audience', data: {} },
    ],
  });
  ids.parent = flow.job.id!;
  ids.child = flow.children![0]!.job.id!;
  closers.push(() => new Queue('audience', { connection, prefix }).close());

  dir = tempDir('job-verb');
  config = writeConfigFile(dir.dir, {
    store: `sqlite:${join(dir.dir, 'q.db')}`,
    systems: [bullmqSystem('pushizo', url, prefix, { queues: ['dispatch', 'audience'] })],
  });
}, 60_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  dir?.remove();
});

async function job(target: string, id: string) {
  const run = await runCliInProcess(['--config', config, '--json', 'job', target, id]);
  const out = jsonOf(run);
  return { run, out, data: out.data as unknown as BullmqJobData };
}

describe('/queue job <system>/<queue> <id>', () => {
  describe('a failed job', () => {
    let shown: Awaited<ReturnType<typeof job>>;
    beforeAll(async () => {
      shown = await job('pushizo/dispatch', ids.failed!);
    });

    it('is shown with its attempts, its error, the first lines of its stack and its times', async () => {
      const { run, data } = shown;
      expect(run.code).toBe(0);
      const real = (await queue.getJob(ids.failed!))!;
      expect(data.job).toMatchObject({
        id: ids.failed,
        state: 'failed',
        name: 'send-push',
        attempts: { made: 2, allowed: 2 },
        // The failure reason as BullMQ stored it, its credential scrubbed.
        failedReason: real.failedReason.replace('hunter2', '***'),
      });
      expect(data.job.stack[0]).toContain('Error: APNs 429');
      expect(data.job.stack.length).toBeGreaterThan(1);
      expect(data.job.timestamps.added).toBe(new Date(real.timestamp).toISOString());
      expect(data.job.timestamps.finished).toBe(new Date(real.finishedOn!).toISOString());
      expect(data.job.runMs).toBe(real.finishedOn! - real.processedOn!);
    });

    it('has a Retry button', () => {
      expect(JSON.stringify(shown.out.message)).toContain(ActionId.JobRetry);
    });

    it('never shows its data', () => {
      // The secret is in the job's data and, here, its error: the error is scrubbed, the data never read.
      expect(shown.run.stdout).not.toContain('"secret"');
      expect(JSON.stringify(shown.out.message)).not.toContain('hunter2');
    });
  });

  it('shows a completed job with its wait and run time, without its return value', async () => {
    const { run, data } = await job('pushizo/dispatch', ids.completed!);
    const real = (await queue.getJob(ids.completed!))!;
    expect(data.job.state).toBe('completed');
    expect(data.job.waitMs).toBe(real.processedOn! - real.timestamp);
    expect(run.stdout).not.toContain('delivered');
    expect(run.stdout).not.toContain('hunter2');
  });

  it('shows an active job with its lock and a Fail button', async () => {
    const active = await job('pushizo/dispatch', ids.active!);
    expect(active.data.job.state).toBe('active');
    expect(active.data.job.lock).toMatchObject({ held: true });
    expect(JSON.stringify(active.out.message)).toContain(ActionId.JobFail);
  });

  it('shows waiting jobs with their place in line', async () => {
    // Workers take from the tail: the first added of the three is next.
    expect((await job('pushizo/dispatch', ids.firstWaiting!)).data.job).toMatchObject({
      state: 'waiting',
      position: 0,
    });
    expect((await job('pushizo/dispatch', ids.lastWaiting!)).data.job).toMatchObject({
      state: 'waiting',
      position: 2,
    });
  });

  it('shows a delayed job with when it is due', async () => {
    const delayed = (await job('pushizo/dispatch', ids.delayed!)).data.job;
    expect(delayed.state).toBe('delayed');
    const real = (await queue.getJob(ids.delayed!))!;
    expect(Date.parse(delayed.dueAt!)).toBe(real.timestamp + 3_600_000);
  });

  it('shows a flow: the parent waiting for its children, and a child pointing at its parent', async () => {
    const parent = (await job('pushizo/dispatch', ids.parent!)).data.job;
    expect(parent).toMatchObject({ state: 'waiting-children', children: { pending: 2, processed: 0 } });
    expect(parent.children.keys).toHaveLength(2);
    expect(parent.children.keys).toContain(`audience:${ids.child}`);
    const child = (await job('pushizo/audience', ids.child!)).data.job;
    expect(child.parent).toEqual({ queue: 'dispatch', id: ids.parent });
  });

  it('answers an unknown id in one line saying where it looked, and bad input with the usage', async () => {
    const { run, out } = await job('pushizo/dispatch', 'no-such-job');
    expect(run.code).toBe(1);
    expect(out.error).toMatchObject({ code: 'UnknownJob' });
    expect(out.error!.message).toContain(`${prefix}:dispatch:no-such-job`);
    const noId = await runCliInProcess(['--config', config, 'job', 'pushizo/dispatch']);
    expect(noId.code).toBe(2);
    expect(noId.stdout).toContain('/queue job <system>/<queue> <job-id>');
    const unknownQueue = jsonOf(
      await runCliInProcess(['--config', config, '--json', 'job', 'pushizo/dispatc', '1']),
    );
    expect(unknownQueue.error).toMatchObject({ code: 'UnknownQueue' });
  });

  it('has buttons that run the typed commands, through their guards, with ids only as values', () => {
    const value = `pushizo/dispatch/${ids.failed}`;
    expect(wordsForAction(ActionId.JobRetry, value)).toEqual(['retry', 'pushizo/dispatch', ids.failed]);
    expect(wordsForAction(ActionId.JobFail, value)).toEqual(['fail', 'pushizo/dispatch', ids.failed]);
    expect(wordsForAction(ActionId.JobRefresh, 'pushizo/dispatch/a/b')).toEqual([
      'job',
      'pushizo/dispatch',
      'a/b',
    ]);
    expect(wordsForAction(ActionId.JobRefresh, 'pushizo/dispatch')).toBeUndefined();
  });
});
