import { describe, expect, it } from 'vitest';
import { createCeleryPurger } from '../../src/backends/celery/purge.js';
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

  it('a batch no longer at the tail is looked for among the last 2n + 64 entries only: found there, removed in place; farther, left queued', async () => {
    const wait = `${fx.prefix}:q:wait`;
    const hashes = (items: { identity: string }[]) =>
      fx.redis.exists(...items.map((i) => `${fx.prefix}:q:${i.identity}`));
    await seedRawBullmqJobs(fx.redis, { prefix: fx.prefix, queue: 'q', count: 3000 });
    const [place] = (await fx.purger.places(['waiting'])).filter((p) => p.name === 'wait');
    const first = (await fx.purger.read(place!, 0, 5)).items;
    const second = (await fx.purger.read(place!, 5, 5)).items;
    const third = (await fx.purger.read(place!, 10, 5)).items;
    expect(await fx.purger.remove(place!, first)).toEqual([true, true, true, true, true]);
    // Deleted again, as recovery does with a chunk its killed run had deleted: nothing to remove,
    // and the list is as it was.
    const before = await fx.redis.lrange(wait, 0, -1);
    expect(await fx.purger.remove(place!, first)).toEqual([false, false, false, false, false]);
    expect(await fx.redis.lrange(wait, 0, -1)).toEqual(before);

    // Three LIFO jobs pushed at the tail since the read: the batch is within reach, removed where
    // it is, and the LIFO jobs stay at the tail in their order.
    await fx.redis.rpush(wait, 'lifo-1', 'lifo-2', 'lifo-3');
    expect(await fx.purger.remove(place!, second)).toEqual([true, true, true, true, true]);
    expect(await fx.redis.lrange(wait, -4, -1)).toEqual(['11', 'lifo-1', 'lifo-2', 'lifo-3']);
    expect(await hashes(second)).toBe(0);

    // The next batch behind 2,985 entries, as after a Redis back from a snapshot older than the
    // purge: not searched for past the window (an LREM per id scanned the whole list), left
    // queued with its hashes, for the walk to meet again at the tail.
    for (const { identity } of third) {
      await fx.redis.lrem(wait, 1, identity);
      await fx.redis.lpush(wait, identity);
    }
    const behind = await fx.redis.lrange(wait, 0, -1);
    expect(await fx.purger.remove(place!, third)).toEqual([false, false, false, false, false]);
    expect(await fx.redis.lrange(wait, 0, -1)).toEqual(behind);
    expect(await hashes(third)).toBe(5);
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

describe('a Celery purge deletes a message only where it read it', () => {
  // The fixture's Redis and fresh prefix; the purger here is a Celery one over a kombu list.
  const fx = useBullmqPurger('qk');
  const message = (id: string) =>
    JSON.stringify({
      body: 'W10=',
      headers: { task: 'tasks.add', id },
      properties: { delivery_tag: `tag-${id}` },
    });

  it('a batch behind a message kombu restored at the tail is removed where it is, that message and the order kept; one farther up is left', async () => {
    const list = `${fx.prefix}:celery`;
    const purger = createCeleryPurger({
      broker: fx.redis,
      results: fx.redis,
      queue: 'celery',
      lists: [list],
      unacked: `${fx.prefix}:unacked`,
      failureIds: async () => [],
    });
    // Producers LPUSH: m-1 is the tail, the next a worker takes.
    const all = Array.from({ length: 3000 }, (_, i) => message(`m-${i + 1}`));
    for (let i = 0; i < all.length; i += 500) await fx.redis.lpush(list, ...all.slice(i, i + 500));
    const [place] = await purger.places(['waiting']);
    const first = (await purger.read(place!, 0, 5)).items;
    const second = (await purger.read(place!, 5, 5)).items;

    // kombu's restore RPUSHes a message a worker gave back: the batch is no longer the tail.
    await fx.redis.rpush(list, message('restored'));
    expect(await purger.remove(place!, first)).toEqual([true, true, true, true, true]);
    expect(await fx.redis.lrange(list, -3, -1)).toEqual([
      message('m-7'),
      message('m-6'),
      message('restored'),
    ]);
    expect(await fx.redis.llen(list)).toBe(2996);

    // The next batch behind 2,990 messages: not searched for past the window, left queued.
    for (const m of all.slice(5, 10)) {
      await fx.redis.lrem(list, 1, m);
      await fx.redis.lpush(list, m);
    }
    const behind = await fx.redis.lrange(list, 0, -1);
    expect(await purger.remove(place!, second)).toEqual([false, false, false, false, false]);
    expect(await fx.redis.lrange(list, 0, -1)).toEqual(behind);
    await purger.close();
  });
});
