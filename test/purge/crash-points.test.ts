import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { createArchiveDir, listChunkFiles, readChunk } from '../../src/archive/archive.js';
import { createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { runPurge } from '../../src/purge/engine.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import type { PurgeRecord, PurgeStore } from '../../src/store/store.js';
import { tempDir } from '../actions/cli-helpers.js';
import { deletePrefix, randomName } from '../backends/bullmq/helpers.js';

const N = 5_000;
const CHUNK = 1_000;

/**
 * A process can die between any two writes of a purge. These die at each write the engine makes
 * about a chunk (the store row of the chunk, the purge's own row, the delete mark) and check that
 * the next run leaves every job once: in Redis or in the archive, never both, never neither.
 */
describe('a purge that dies between two of its writes', () => {
  const redisUrl = inject('redisUrl');
  let prefix: string;
  let redis: Redis;
  let tmp: ReturnType<typeof tempDir>;
  let store: SqliteStore;

  beforeEach(async () => {
    prefix = randomName('qx');
    redis = new Redis(redisUrl);
    tmp = tempDir('crash');
    store = createSqliteStore(join(tmp.dir, 'queue-ops.db'));
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    redis.disconnect();
    await deletePrefix(redisUrl, prefix);
    tmp.remove();
  });

  /** A store that throws ("the process died") at the `at`-th call of `method`, then forever after. */
  function dyingStore(method: keyof PurgeStore, at: number): PurgeStore {
    let calls = 0;
    let dead = false;
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
    const inRedis = await redis.lrange(`${prefix}:q:wait`, 0, -1);
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
    it(`dies at call ${at} of ${method}; the next run archives and deletes each job once`, async () => {
      await seedRawBullmqJobs(redis, { prefix, queue: 'q', count: N });
      const at0 = new Date().toISOString();
      const record: PurgeRecord = {
        id: randomName('p'),
        system: 'hs',
        queue: 'q',
        backend: 'bullmq',
        states: ['waiting'],
        state: 'archiving',
        archivePath: join(tmp.dir, 'archive', 'p'),
        total: N,
        chunks: 0,
        archived: 0,
        purged: 0,
        owner: 'first',
        heartbeatAt: at0,
        createdAt: at0,
        updatedAt: at0,
      };
      await createArchiveDir(record.archivePath);
      await store.createPurge(record);
      const purger = () => createBullmqPurger({ client: new Redis(redisUrl), prefix, queue: 'q' });

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
});
