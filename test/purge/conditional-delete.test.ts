import { describe, expect, it } from 'vitest';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { useBullmqPurger } from './bullmq-purger-fixture.js';

describe('a purge deletes a job only where it read it', () => {
  const fx = useBullmqPurger('qc');

  it('a job a worker took between the read and the delete stays, with its hash, and is reported not removed', async () => {
    await seedRawBullmqJobs(fx.redis, { prefix: fx.prefix, queue: 'q', count: 10 });
    const [wait] = (await fx.purger.places(['waiting'])).filter((p) => p.name === 'wait');
    const { items } = await fx.purger.read(wait!, 0, 5);
    expect(items.map((i) => i.identity)).toEqual(['1', '2', '3', '4', '5']);
    // What BullMQ's moveToActive does first: the oldest waiting job goes to `active`.
    await fx.redis.rpoplpush(`${fx.prefix}:q:wait`, `${fx.prefix}:q:active`);
    expect(await fx.purger.remove(wait!, items)).toEqual([false, true, true, true, true]);
    expect(await fx.redis.exists(`${fx.prefix}:q:1`)).toBe(1);
    expect(await fx.redis.exists(`${fx.prefix}:q:2`)).toBe(0);
    expect(await fx.redis.lrange(`${fx.prefix}:q:wait`, 0, -1)).toEqual(['10', '9', '8', '7', '6']);
  });

  it('a delayed job promoted meanwhile is not deleted from where it no longer is', async () => {
    const base = `${fx.prefix}:q:`;
    for (const id of ['a', 'b', 'c']) {
      await fx.redis.hset(
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
      await fx.redis.zadd(`${base}delayed`, 4096 * 1000, id);
    }
    const [delayed] = await fx.purger.places(['delayed']);
    const { items } = await fx.purger.read(delayed!, 0, 10);
    await fx.redis.zrem(`${base}delayed`, 'b');
    await fx.redis.lpush(`${base}wait`, 'b');
    expect(await fx.purger.remove(delayed!, items)).toEqual([true, false, true]);
    expect(await fx.redis.hget(`${base}b`, 'name')).toBe('later');
    expect(await fx.redis.exists(`${base}a`, `${base}c`)).toBe(0);
  });
});
