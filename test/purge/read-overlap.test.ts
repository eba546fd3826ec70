import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { listChunkFiles, readChunk } from '../../src/archive/archive.js';
import { createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import type { QueuePurger } from '../../src/backends/queue-backend.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { runPurge } from '../../src/purge/engine.js';
import { randomName } from '../helpers/bullmq-jobs.js';
import { archivingPurge, usePurgeEngine } from './engine-fixture.js';

const N = 2_000;

/**
 * The engine sends the next read before the one it waits for comes back, at an offset that
 * assumes the tail did not move. A job pushed at the tail meanwhile (a LIFO job, a message kombu
 * restores) moves it: the read-ahead then brings jobs already taken. Those must not be archived
 * twice, and no job may end up both archived and still queued, or in neither place.
 */
describe('a purge whose tail moves between two overlapped reads', () => {
  const fx = usePurgeEngine('qo');

  // `lateMs`: how long each read's reply waits before the engine gets it, as on a busy client.
  // Meanwhile the chunk before it is archived and deleted; the overlapping jobs the late reply
  // brings must still be known as taken.
  const purgeWithMovingTail = async (lateMs: number) => {
    const { redis, prefix, store } = fx;
    await seedRawBullmqJobs(redis, { prefix, queue: 'q', count: N });
    const base = `${prefix}:q:`;
    const real = createBullmqPurger({ client: new Redis(fx.redisUrl), prefix, queue: 'q' });
    const pushed: string[] = [];
    let reads = 0;
    // The real purger; every fifth read, a producer first adds a LIFO job (RPUSH at the tail).
    const purger: QueuePurger = {
      ...real,
      async read(place, offset, limit) {
        if (++reads % 5 === 0) {
          const id = `lifo-${reads}`;
          await redis.hset(`${base}${id}`, 'name', 'late', 'data', '{}', 'timestamp', String(Date.now()));
          await redis.rpush(`${base}wait`, id);
          pushed.push(id);
        }
        const batch = await real.read(place, offset, limit);
        if (lateMs > 0) await new Promise((resolve) => setTimeout(resolve, lateMs));
        return batch;
      },
    };
    const record = await archivingPurge(store, fx.tmp.dir, {
      id: randomName('p'),
      system: 'hs',
      queue: 'q',
      total: N,
      owner: 'me',
    });
    const { record: done } = await runPurge(record, {
      store,
      purger,
      owner: 'me',
      chunkSize: 300,
      readBatch: 50,
      deleteBatch: 100,
    });
    await real.close();

    expect(pushed.length).toBeGreaterThan(5);
    const archived: string[] = [];
    for (const file of await listChunkFiles(done.archivePath))
      for (const line of await readChunk(done.archivePath, file))
        archived.push((JSON.parse(line) as { id: string }).id);
    // It takes the number of jobs it counted, each once, from where workers take next (a job
    // pushed at the tail meanwhile is next in line too, so it may be among them).
    expect(archived).toHaveLength(N);
    expect(new Set(archived).size).toBe(N);
    expect(done).toMatchObject({ state: 'done', archived: N, purged: N });
    // Every job, seeded or pushed meanwhile, is in exactly one place: the archive or the queue,
    // and a job left in the queue keeps its hash.
    const left = await redis.lrange(`${base}wait`, 0, -1);
    const everyJob = [...archived, ...left].sort();
    expect(everyJob).toHaveLength(N + pushed.length);
    expect(new Set(everyJob).size).toBe(N + pushed.length);
    for (const id of pushed) expect(everyJob).toContain(id);
    for (const id of left) expect(await redis.exists(`${base}${id}`)).toBe(1);
    for (const id of archived) expect(await redis.exists(`${base}${id}`)).toBe(0);
  };

  it('archives as many jobs as it counted, each once, and every job ends in exactly one place', async () => {
    await purgeWithMovingTail(0);
  });

  it('does the same when each read reply reaches the engine late, after the chunk before it was deleted', async () => {
    await purgeWithMovingTail(30);
  });
});
