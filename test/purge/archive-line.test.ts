import { describe, expect, it } from 'vitest';
import { splitBlocks } from '../../src/archive/archive.js';
import { useBullmqPurger } from './bullmq-purger-fixture.js';

describe("a BullMQ job's archive line", () => {
  const fx = useBullmqPurger('ql');

  it('holds every field and value of the hash exactly, whatever quotes, commas, backslashes or control characters they carry', async () => {
    const base = `${fx.prefix}:q:`;
    const hash: Record<string, string> = {
      name: 'a","b',
      data: '{"path":"C:\\\\tmp\\\\x","list":[1,"2"],"slash":"a/b"}',
      'odd"field\\': 'line\nbreak\ttab\u0001 ünï',
      opts: '',
      '1': '2',
    };
    await fx.redis.hset(`${base}7`, hash);
    await fx.redis.rpush(`${base}7:logs`, 'first, "quoted"', '');
    await fx.redis.zadd(`${base}delayed`, 4096 * 1000 + 5, '7');
    const [delayed] = await fx.purger.places(['delayed']);
    const batch = await fx.purger.read(delayed!, 0, 10);
    expect(batch.items.map((i) => i.identity)).toEqual(['7']);
    const lines = splitBlocks(batch.lines).map((l) => JSON.parse(l.toString()));
    expect(lines).toEqual([
      { p: 'delayed', id: '7', s: String(4096 * 1000 + 5), j: { hash, logs: ['first, "quoted"', ''] } },
    ]);
  });
});
