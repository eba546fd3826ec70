import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { splitBlocks } from '../../src/archive/archive.js';
import { createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import type { QueuePurger } from '../../src/backends/queue-backend.js';
import { deletePrefix, randomName } from '../backends/bullmq/helpers.js';

describe("a BullMQ job's archive line", () => {
  const redisUrl = inject('redisUrl');
  let prefix: string;
  let redis: Redis;
  let purger: QueuePurger;

  beforeEach(async () => {
    prefix = randomName('ql');
    redis = new Redis(redisUrl);
    purger = createBullmqPurger({ client: new Redis(redisUrl), prefix, queue: 'q' });
  });
  afterEach(async () => {
    await purger.close();
    redis.disconnect();
    await deletePrefix(redisUrl, prefix);
  });

  it('holds every field and value of the hash exactly, whatever quotes, commas, backslashes or control characters they carry', async () => {
    const base = `${prefix}:q:`;
    const hash: Record<string, string> = {
      name: 'a","b',
      data: '{"path":"C:\\\\tmp\\\\x","list":[1,"2"],"slash":"a/b"}',
      'odd"field\\': 'line\nbreak\ttab\u0001 ünï',
      opts: '',
      '1': '2',
    };
    await redis.hset(`${base}7`, hash);
    await redis.rpush(`${base}7:logs`, 'first, "quoted"', '');
    await redis.zadd(`${base}delayed`, 4096 * 1000 + 5, '7');
    const [delayed] = await purger.places(['delayed']);
    const batch = await purger.read(delayed!, 0, 10);
    expect(batch.items.map((i) => i.identity)).toEqual(['7']);
    const lines = splitBlocks(batch.lines).map((l) => JSON.parse(l.toString()));
    expect(lines).toEqual([
      { p: 'delayed', id: '7', s: String(4096 * 1000 + 5), j: { hash, logs: ['first, "quoted"', ''] } },
    ]);
  });
});
