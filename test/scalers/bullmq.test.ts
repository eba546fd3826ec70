import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bullmqSystem } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { auditEntries, json, queueOps, requestOf, shown, tempDir, writeConfig } from './helpers.js';

const HOLDER = join(import.meta.dirname, '../fixtures/bullmq/hold-worker.mjs');
const LOCK_MS = 1500;

describe('stuck and fail of BullMQ jobs held by a real worker in another process', () => {
  const redisUrl = testRedisUrl();
  const prefix = `qo-stuck-${randomBytes(4).toString('hex')}`;
  const QUEUE = 'dispatch-ios';
  let queue: Queue;
  let child: ChildProcess | undefined;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  const env = { HOME: '/tmp', PATH: process.env.PATH };
  const as = (user: string, ...words: string[]) =>
    queueOps(['--config', config, '--user', user, '--json', ...words], env);

  /** Starts the holding worker and resolves with the id of the job it started. */
  async function holdOneJob(
    into: { name: string; add(name: string, data: unknown, opts: unknown): Promise<{ id?: string }> } = queue,
    library = 'bullmq',
  ): Promise<string> {
    const job = await into.add('send-push', { token: 'device-token-secret' }, { attempts: 5 });
    child = spawn(process.execPath, [HOLDER], {
      env: {
        ...process.env,
        QO_BULLMQ: library,
        QO_REDIS_URL: redisUrl,
        QO_PREFIX: prefix,
        QO_QUEUE: into.name,
        QO_WORKER_NAME: 'dispatch-worker-1',
        QO_LOCK_MS: String(LOCK_MS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the worker never started the job')), 15_000);
      child!.stdout!.on('data', (chunk) => {
        if (String(chunk).includes(`started ${job.id}`)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    return job.id!;
  }

  /** A stopped worker no longer renews its lock: after lockDuration Redis drops it. */
  async function lockGone(id: string, queueName: string): Promise<void> {
    const redis = new Redis(redisUrl);
    try {
      const until = Date.now() + 10_000;
      while ((await redis.exists(`${prefix}:${queueName}:${id}:lock`)) === 1) {
        if (Date.now() > until) throw new Error('the lock never expired');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      redis.disconnect();
    }
  }

  async function redisHget(key: string, field: string): Promise<string | null> {
    const redis = new Redis(redisUrl);
    try {
      return await redis.hget(key, field);
    } finally {
      redis.disconnect();
    }
  }

  beforeEach(() => {
    const url = new URL(redisUrl);
    queue = new Queue(QUEUE, { connection: { host: url.hostname, port: Number(url.port) }, prefix });
    tmp = tempDir('bullmq');
    config = writeConfig(tmp.dir, {
      systems: [bullmqSystem('pushizo', redisUrl, prefix, { queues: [QUEUE] })],
    });
  });

  afterEach(async () => {
    if (child?.pid && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((resolve) => child!.once('exit', resolve));
    }
    child = undefined;
    await queue.obliterate({ force: true });
    await queue.close();
    tmp.remove();
  });

  it('a worker stopped mid-job shows as stalled in stuck (lock expired, its worker named), and fail moves the job to failed', async () => {
    const id = await holdOneJob();
    child!.kill('SIGSTOP');
    await lockGone(id, QUEUE);

    // Seconds old, not 30 minutes: listed because no worker holds it any more.
    const stuck = await as('U0DAVE', 'stuck', 'pushizo');
    expect(stuck.code, stuck.stdout + stuck.stderr).toBe(0);
    expect((json(stuck).data as { work: unknown[] }).work).toEqual([
      expect.objectContaining({
        id,
        name: 'send-push',
        queue: QUEUE,
        worker: 'dispatch-worker-1',
        lockExpired: true,
      }),
    ]);
    expect(shown(stuck)).toContain('lock expired (stalled)');
    expect(shown(stuck)).toContain('/queue job pushizo/');
    expect(shown(stuck)).not.toContain('device-token-secret');

    const failed = await as('U0ALICE', 'fail', `pushizo/${QUEUE}`, id, 'provider', 'hung');
    expect(failed.code, failed.stdout + failed.stderr).toBe(0);
    const request = requestOf(failed);
    expect(request.preview).toBe(
      `fail job ${id} (send-push) of pushizo/${QUEUE}, now active, with reason “provider hung”; ` +
        'its lock has expired, so worker dispatch-worker-1 no longer holds it (stalled).',
    );
    expect(request).toMatchObject({
      status: 'done',
      result: { id, before: 'active', state: 'failed', reason: 'provider hung', lockWasHeld: false },
    });
    // BullMQ itself sees a failed job with the reason, despite 4 attempts left.
    const job = (await queue.getJob(id))!;
    expect(await job.getState()).toBe('failed');
    expect(job.failedReason).toBe('provider hung');
    expect(await queue.getActiveCount()).toBe(0);

    const again = await as('U0ALICE', 'fail', `pushizo/${QUEUE}`, id);
    expect(json(again).error?.message).toBe(
      `Job \`${id}\` of \`pushizo/${QUEUE}\` is failed, not active; only an active or stalled job can be failed.`,
    );
    const entry = (await auditEntries(config, env)).find((e) => e.action === 'action.fail')!;
    expect(entry.params).toMatchObject({ id, reason: 'provider hung', result: { state: 'failed' } });
  }, 60_000);

  it('says so when the job’s worker still holds the lock, and takes it from that worker', async () => {
    const id = await holdOneJob();
    const failed = await as('U0ALICE', 'fail', `pushizo/${QUEUE}`, id);
    expect(failed.code, failed.stdout + failed.stderr).toBe(0);
    const request = requestOf(failed);
    expect(request.preview).toMatch(/worker dispatch-worker-1 still holds its lock \(\d s left\)/);
    expect(request.preview).toContain('failed by U0ALICE with queue-ops');
    expect(request.result).toMatchObject({ state: 'failed', lockWasHeld: true });
    expect(shown(failed)).toContain('the lock a worker still held was taken from it');
    expect(await (await queue.getJob(id))!.getState()).toBe('failed');
  }, 60_000);

  it('fails a stalled job of a queue written by BullMQ 5 with BullMQ 5’s own moveToFailed', async () => {
    const url = new URL(redisUrl);
    const { Queue: Queue5 } = await import('bullmq5');
    const queue5 = new Queue5('legacy', {
      connection: { host: url.hostname, port: Number(url.port) },
      prefix,
    });
    try {
      const id = await holdOneJob(queue5, 'bullmq5');
      child!.kill('SIGSTOP');
      await lockGone(id, 'legacy');
      config = writeConfig(tmp.dir, {
        systems: [bullmqSystem('pushizo', redisUrl, prefix, { queues: ['legacy'] })],
      });
      const failed = await as('U0ALICE', 'fail', 'pushizo/legacy', id, 'stuck on v5');
      expect(requestOf(failed)).toMatchObject({
        status: 'done',
        result: { state: 'failed', lockWasHeld: false },
      });
      expect(await redisHget(`${prefix}:legacy:meta`, 'version')).toMatch(/^bullmq:5\./);
      const job = (await queue5.getJob(id))!;
      expect(await job.getState()).toBe('failed');
      expect(job.failedReason).toBe('stuck on v5');
    } finally {
      await queue5.obliterate({ force: true });
      await queue5.close();
    }
  }, 60_000);

  it('names an unknown job id', async () => {
    const run = await as('U0ALICE', 'fail', `pushizo/${QUEUE}`, '424242');
    expect(json(run).error?.message).toBe(`\`pushizo/${QUEUE}\` has no job \`424242\`.`);
  });
});
