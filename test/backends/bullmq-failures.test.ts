import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { OpsError } from '../../src/errors.js';
import { freePort, startPrivateRedis } from '../../src/lib/redis-server.js';
import { connectionFor, systemFor } from '../helpers/bullmq-jobs.js';
import { freezeTimers } from '../helpers/frozen-timers.js';

const PASSWORD = 'secret-password';

/** The call's error. */
async function failure(call: () => Promise<unknown>): Promise<OpsError> {
  const error = await call().then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpsError);
  return error as OpsError;
}

/**
 * The call's error, come once at most 5 s of timers have run. The 5 s are counted on stopped
 * timers, not on this machine's clock: they are moved 5 s on at once, and the call must settle
 * with no timer after them (one that needs a later timer never settles, and the test times out).
 * Redis stays down or stopped meanwhile, so no answer from it can be what ends the wait.
 */
async function failureWithin5s(call: () => Promise<unknown>): Promise<OpsError> {
  freezeTimers();
  try {
    const error = failure(call);
    await vi.advanceTimersByTimeAsync(5_000);
    return await error;
  } finally {
    vi.useRealTimers();
  }
}

function expectUnavailable(error: OpsError) {
  expect(error.code).toBe('RedisUnavailable');
  expect(JSON.stringify(error.params)).not.toContain(PASSWORD);
  expect(error.message).not.toContain(PASSWORD);
}

/** A private Redis with a password, so that nothing here can stop the shared test server. */
async function passwordRedis() {
  const redis = await startPrivateRedis();
  const admin = new Redis(redis.url);
  // The server's own pid, to SIGSTOP exactly the process this test started.
  const pid = Number(/process_id:(\d+)/.exec(await admin.info('server'))?.[1]);
  await admin.config('SET', 'requirepass', PASSWORD);
  admin.disconnect();
  const url = `redis://:${PASSWORD}@127.0.0.1:${redis.port}`;
  return { redis, url, pid };
}

describe('BullMQ backend when Redis fails', () => {
  it('answers RedisUnavailable for a closed port within 5 seconds, without the password', async () => {
    const port = await freePort();
    const backend = createBullmqBackend(systemFor(`redis://:${PASSWORD}@127.0.0.1:${port}`, 'bull'));
    try {
      expectUnavailable(await failureWithin5s(() => backend.status()));
      expectUnavailable(await failureWithin5s(() => backend.listQueues()));
      expectUnavailable(await failureWithin5s(() => backend.dlq('events', 10)));
      expectUnavailable(await failureWithin5s(() => backend.workers()));
    } finally {
      await backend.close();
    }
  });

  it('answers RedisUnavailable within 5 seconds when a connected Redis stops answering', async () => {
    const { redis, url, pid } = await passwordRedis();
    const backend = createBullmqBackend(systemFor(url, 'bull'));
    const queue = new Queue('events', { connection: connectionFor(url) });
    try {
      await queue.add('x', {});
      expect((await backend.status()).queues).toMatchObject([{ name: 'events', waiting: 1 }]);
      process.kill(pid, 'SIGSTOP');
      expectUnavailable(await failureWithin5s(() => backend.status()));
      expectUnavailable(await failureWithin5s(() => backend.dlq('events', 10)));
      process.kill(pid, 'SIGCONT');
      // Once Redis answers again, so does the backend.
      expect((await backend.status()).queues).toMatchObject([{ name: 'events', waiting: 1 }]);
    } finally {
      process.kill(pid, 'SIGCONT');
      await queue.close();
      await backend.close();
      await redis.stop();
    }
  });

  it('answers RedisUnavailable within 5 seconds when Redis accepts the connection but never replies', async () => {
    const { redis, url, pid } = await passwordRedis();
    const backend = createBullmqBackend(systemFor(url, 'bull'));
    try {
      process.kill(pid, 'SIGSTOP');
      expectUnavailable(await failureWithin5s(() => backend.status()));
      expectUnavailable(await failureWithin5s(() => backend.pause('events')));
    } finally {
      process.kill(pid, 'SIGCONT');
      await backend.close();
      await redis.stop();
    }
  });

  it('reports a wrong password as RedisUnavailable without echoing it', async () => {
    const { redis } = await passwordRedis();
    const backend = createBullmqBackend(
      systemFor(`redis://:not-the-${PASSWORD}@127.0.0.1:${redis.port}`, 'bull'),
    );
    try {
      const error = await failure(() => backend.status());
      expect(error.code).toBe('RedisUnavailable');
      expect(JSON.stringify(error.params)).not.toContain(PASSWORD);
    } finally {
      await backend.close();
      await redis.stop();
    }
  });

  it('closes its connections', async () => {
    const redis = await startPrivateRedis();
    const admin = new Redis(redis.url);
    const backend = createBullmqBackend(systemFor(redis.url, 'bull'));
    const queue = new Queue('events', { connection: connectionFor(redis.url) });
    try {
      await queue.add('x', {});
      await backend.status();
      await backend.pause('events');
      const named = async () =>
        String(await admin.client('LIST'))
          .split('\n')
          .filter((line) => line.includes(` name=queue-ops:${backend.name}`)).length;
      // The short-lived connection pause used is gone; the read connection stays until close.
      await expect.poll(named).toBe(1);
      await backend.close();
      await expect.poll(named).toBe(0);
      expectUnavailable(await failureWithin5s(() => backend.status()));
    } finally {
      admin.disconnect();
      await queue.close();
      await redis.stop();
    }
  });
});
