import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { listChunkFiles, readChunk } from '../../src/archive/archive.js';
import { createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { runPurge } from '../../src/purge/engine.js';
import type { PurgeRecord, PurgeStore } from '../../src/store/store.js';
import { queuePurge, usePurgeEngine } from './engine-fixture.js';

const N = 5_000;
const CHUNK = 1_000;

/**
 * A process can die between any two writes of a purge. These die at each write the engine makes
 * about a chunk (the store row of the chunk, the purge's own row, the delete mark) and check that
 * the next run leaves every job once: in Redis or in the archive, never both, never neither.
 */
describe('a purge that dies between two of its writes', () => {
  const fx = usePurgeEngine('qx');

  /** A store that throws ("the process died") at the `at`-th call of `method`, then forever after. */
  function dyingStore(method: keyof PurgeStore, at: number): PurgeStore {
    let calls = 0;
    let dead = false;
    const store = fx.store;
    return new Proxy(store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (key === method && ++calls === at) dead = true;
          if (dead) return Promise.reject(new Error('the process died here'));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as PurgeStore;
  }

  async function everyJobOnce(record: PurgeRecord) {
    const inRedis = await fx.redis.lrange(`${fx.prefix}:q:wait`, 0, -1);
    const archived: string[] = [];
    for (const file of await listChunkFiles(record.archivePath))
      for (const line of await readChunk(record.archivePath, file))
        archived.push((JSON.parse(line) as { id: string }).id);
    const all = [...inRedis, ...archived];
    expect(new Set(all).size).toBe(N);
    expect(all).toHaveLength(N);
    return { inRedis, archived };
  }

  for (const [method, at] of [
    ['addPurgeChunk', 2],
    ['updatePurge', 2],
    ['markPurgeChunk', 2],
    ['updatePurge', 3],
  ] as const) {
    it(`after dying at call ${at} of ${method}, the next run archives and deletes each job once`, async () => {
      const { redis, prefix, store } = fx;
      await seedRawBullmqJobs(redis, { prefix, queue: 'q', count: N });
      const record = await queuePurge(fx, N, 'first');
      const purger = () => createBullmqPurger({ client: new Redis(fx.redisUrl), prefix, queue: 'q' });

      const first = purger();
      await expect(
        runPurge(record, { store: dyingStore(method, at), purger: first, owner: 'first', chunkSize: CHUNK }),
      ).rejects.toThrow('the process died here');
      await first.close();

      const claimed = await store.updatePurge(record.id, ['archiving'], { owner: 'second' }, 'first');
      expect(claimed).toBeDefined();
      const second = purger();
      const { record: done, manifest } = await runPurge(claimed!, {
        store,
        purger: second,
        owner: 'second',
        chunkSize: CHUNK,
      });
      await second.close();

      const { inRedis } = await everyJobOnce(done);
      expect(inRedis).toEqual([]);
      expect(done).toMatchObject({ state: 'done', archived: N, purged: N });
      expect(manifest.counts).toEqual({ archived: N, purged: N, skipped: 0 });
      expect(manifest.files.map((f) => f.name)).toEqual(await listChunkFiles(done.archivePath));
    });
  }

  it("a purge capped per state (its preview's count) that dies midway takes no more than the cap over both runs, oldest first", async () => {
    const { redis, prefix, store } = fx;
    await seedRawBullmqJobs(redis, { prefix, queue: 'q', count: N });
    const oldest = (await redis.lrange(`${prefix}:q:wait`, 0, -1)).reverse();
    const CAP = 2_500;
    // `total` as the queue stood when the purge started (more had arrived since the preview);
    // the cap is what the preview counted.
    const record = await queuePurge(fx, N, 'first');
    const caps = { waiting: CAP };
    const purger = () => createBullmqPurger({ client: new Redis(fx.redisUrl), prefix, queue: 'q' });

    const first = purger();
    await expect(
      runPurge(record, {
        store: dyingStore('addPurgeChunk', 2),
        purger: first,
        owner: 'first',
        chunkSize: CHUNK,
        caps,
      }),
    ).rejects.toThrow('the process died here');
    await first.close();

    const claimed = await store.updatePurge(record.id, ['archiving'], { owner: 'second' }, 'first');
    const second = purger();
    const { record: done } = await runPurge(claimed!, {
      store,
      purger: second,
      owner: 'second',
      chunkSize: CHUNK,
      caps,
    });
    await second.close();

    const { inRedis, archived } = await everyJobOnce(done);
    expect(archived).toHaveLength(CAP);
    expect(new Set(archived)).toEqual(new Set(oldest.slice(0, CAP)));
    expect(inRedis).toHaveLength(N - CAP);
    expect(done).toMatchObject({ state: 'done', archived: CAP, purged: CAP });
  });
});
