import { describe, expect, it } from 'vitest';
import { splitBlocks } from '../../src/archive/archive.js';
import { archivedHash } from '../../src/backends/bullmq/purge.js';
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
      {
        p: 'delayed',
        id: '7',
        s: String(4096 * 1000 + 5),
        j: { fields: Object.entries(hash).flat(), logs: ['first, "quoted"', ''] },
      },
    ]);
    expect(archivedHash(lines[0].j)).toEqual(hash);
  });

  it('keeps each job id exactly, whatever quotes, commas, slashes, backslashes or letters it holds', async () => {
    const base = `${fx.prefix}:q:`;
    const ids = ['12', 'a","b', 'x/y', 'back\\slash', 'ünï 中', '', '","', 'plain-id'];
    for (const id of ids) await fx.redis.hset(`${base}${id}`, 'name', 'n', 'data', '{}');
    // LPUSHed: the first id is at the tail, where workers (and the purge) take next.
    await fx.redis.lpush(`${base}wait`, ...ids);
    const [wait] = await fx.purger
      .places(['waiting'])
      .then((places) => places.filter((p) => p.name === 'wait'));
    for (const only of [ids.slice(0, 1), ids]) {
      const batch = await fx.purger.read(wait!, 0, only.length);
      expect(batch.items.map((i) => i.identity)).toEqual(only);
      expect(splitBlocks(batch.lines).map((l) => (JSON.parse(l.toString()) as { id: string }).id)).toEqual(
        only,
      );
    }
    const plain = ['7', '8', '9'];
    for (const id of plain) await fx.redis.hset(`${base}${id}`, 'name', 'n');
    await fx.redis.del(`${base}wait`);
    await fx.redis.lpush(`${base}wait`, ...plain);
    expect((await fx.purger.read(wait!, 0, 3)).items.map((i) => i.identity)).toEqual(plain);
  });

  it('is read back whether it holds the hash as fields (now) or as an object (archives written before)', () => {
    const hash = { name: 'send', data: '{"a":1}', timestamp: '1700000000000' };
    expect(archivedHash({ fields: Object.entries(hash).flat() })).toEqual(hash);
    expect(archivedHash({ hash })).toEqual(hash);
  });

  it('undo restores a line in either shape to the same hash, logs and place', async () => {
    const base = `${fx.prefix}:q:`;
    const hash = { name: 'send', data: '{"to":"a\\"b"}', timestamp: '1700000000000', attemptsMade: '0' };
    const now = JSON.stringify({
      p: 'wait',
      id: '1',
      s: null,
      j: { fields: Object.entries(hash).flat(), logs: ['x'] },
    });
    const before = JSON.stringify({ p: 'wait', id: '2', s: null, j: { hash, logs: ['x'] } });
    expect(await fx.purger.restore([now, before])).toEqual({ restored: 2, existing: [] });
    for (const id of ['1', '2']) {
      expect(await fx.redis.hgetall(`${base}${id}`)).toEqual(hash);
      expect(await fx.redis.lrange(`${base}${id}:logs`, 0, -1)).toEqual(['x']);
    }
    expect(await fx.redis.lrange(`${base}wait`, 0, -1)).toEqual(['1', '2']);
  });
});
