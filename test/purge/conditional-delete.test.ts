import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import type { QueuePurger } from '../../src/backends/queue-backend.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { deletePrefix, randomName } from '../backends/bullmq/helpers.js';

describe('a purge deletes a job only where it read it', () => {
  const redisUrl = inject('redisUrl');
  let prefix: string;
  let redis: Redis;
  let purger: QueuePurger;

  beforeEach(async () => {
    prefix = randomName('qc');
    redis = new Redis(redisUrl);
    purger = createBullmqPurger({ client: new Redis(redisUrl), prefix, queue: 'q' });
  });
  afterEach(async () => {
    await purger.close();
    redis.disconnect();
    await deletePrefix(redisUrl, prefix);
  });

  it('a job a worker took between the read and the delete stays, with its hash, and is reported not removed', async () => {
    await seedRawBullmqJobs(redis, { prefix, queue: 'q', count: 10 });
    const [wait] = (await purger.places(['waiting'])).filter((p) => p.name === 'wait');
    const { items } = await purger.read(wait!, 0, 5);
    expect(items.map((i) => i.identity)).toEqual(['1', '2', '3', '4', '5']);
    // What BullMQ's moveToActive does first: the oldest waiting job goes to `active`.
    await redis.rpoplpush(`${prefix}:q:wait`, `${prefix}:q:active`);
    expect(await purger.remove(wait!, items)).toEqual([false, true, true, true, true]);
    expect(await redis.exists(`${prefix}:q:1`)).toBe(1);
    expect(await redis.exists(`${prefix}:q:2`)).toBe(0);
    expect(await redis.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(['10', '9', '8', '7', '6']);
  });

  it('a delayed job promoted meanwhile is not deleted from where it no longer is', async () => {
    const base = `${prefix}:q:`;
    for (const id of ['a', 'b', 'c']) {
      await redis.hset(
        base + id,
        'name',
        'later',
        'data',
        '{}',
        'opts',
        '{}',
        'timestamp',
        '1',
        'delay',
        '5000',
      );
      await redis.zadd(`${base}delayed`, 4096 * 1000, id);
    }
    const [delayed] = await purger.places(['delayed']);
    const { items } = await purger.read(delayed!, 0, 10);
    await redis.zrem(`${base}delayed`, 'b');
    await redis.lpush(`${base}wait`, 'b');
    expect(await purger.remove(delayed!, items)).toEqual([true, false, true]);
    expect(await redis.hget(`${base}b`, 'name')).toBe('later');
    expect(await redis.exists(`${base}a`, `${base}c`)).toBe(0);
  });
});
