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

  it('a batch no longer at the tail: jobs already gone are not searched for, jobs moved up the list are removed where they are', async () => {
    const wait = `${fx.prefix}:q:wait`;
    const lrems = async () =>
      Number(/cmdstat_lrem:calls=(\d+)/.exec(await fx.redis.info('commandstats'))?.[1] ?? 0);
    await seedRawBullmqJobs(fx.redis, { prefix: fx.prefix, queue: 'q', count: 3000 });
    const [place] = (await fx.purger.places(['waiting'])).filter((p) => p.name === 'wait');
    const first = (await fx.purger.read(place!, 0, 5)).items;
    const second = (await fx.purger.read(place!, 5, 5)).items;
    expect(await fx.purger.remove(place!, first)).toEqual([true, true, true, true, true]);
    // Deleted again, as recovery does with a chunk its killed run had partly deleted: no LREM,
    // each of which would scan the whole list for an id that is not there.
    await fx.redis.config('RESETSTAT');
    expect(await fx.purger.remove(place!, first)).toEqual([false, false, false, false, false]);
    expect(await lrems()).toBe(0);
    // The next batch moved to the far end of the list (2,990 jobs after it): still archived by the
    // purge, so removed where they are, or the walk would meet and archive them again.
    for (const { identity } of second) {
      await fx.redis.lrem(wait, 1, identity);
      await fx.redis.lpush(wait, identity);
    }
    await fx.redis.config('RESETSTAT');
    expect(await fx.purger.remove(place!, second)).toEqual([true, true, true, true, true]);
    expect(await lrems()).toBe(5);
    expect(await fx.redis.llen(wait)).toBe(2990);
    expect(await fx.redis.exists(...second.map((i) => `${fx.prefix}:q:${i.identity}`))).toBe(0);
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
