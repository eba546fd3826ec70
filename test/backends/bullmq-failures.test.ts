import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { OpsError } from '../../src/errors.js';
import { freePort, startPrivateRedis } from '../../src/lib/redis-server.js';
import { connectionFor, systemFor } from './bullmq/helpers.js';

const PASSWORD = 'secret-password';

/** The call's error, and how long it took to come. */
async function failure(call: () => Promise<unknown>): Promise<{ error: OpsError; ms: number }> {
  const started = Date.now();
  const error = await call().then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpsError);
  return { error: error as OpsError, ms: Date.now() - started };
}

function expectUnavailable({ error, ms }: { error: OpsError; ms: number }) {
  expect(error.code).toBe('RedisUnavailable');
  expect(ms).toBeLessThan(5_000);
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
      expectUnavailable(await failure(() => backend.status()));
      expectUnavailable(await failure(() => backend.listQueues()));
      expectUnavailable(await failure(() => backend.dlq('events', 10)));
      expectUnavailable(await failure(() => backend.workers()));
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
      expectUnavailable(await failure(() => backend.status()));
      expectUnavailable(await failure(() => backend.dlq('events', 10)));
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
      expectUnavailable(await failure(() => backend.status()));
      expectUnavailable(await failure(() => backend.pause('events')));
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
      const result = await failure(() => backend.status());
      expect(result.error.code).toBe('RedisUnavailable');
      expect(JSON.stringify(result.error.params)).not.toContain(PASSWORD);
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
      expectUnavailable(await failure(() => backend.status()));
    } finally {
      admin.disconnect();
      await queue.close();
      await redis.stop();
    }
  });
});
