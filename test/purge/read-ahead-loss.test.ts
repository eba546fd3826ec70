import { setImmediate as nextTurn } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import { withUnavailable } from '../../src/backends/purger-errors.js';
import type { QueuePurger } from '../../src/backends/queue-backend.js';
import { toRedisUnavailable } from '../../src/backends/redis-client.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { runPurge } from '../../src/purge/engine.js';
import type { PurgeStore } from '../../src/store/store.js';
import { queuePurge, usePurgeEngine } from './engine-fixture.js';

/** Entries per read, and per chunk: each read fills one chunk. */
const BATCH = 50;
/** The read sent ahead while the engine waits for the first chunk (the third flush makes three on their way). */
const AHEAD = 4;

/** Resolves once `resolve` is called; for the test's hand-offs between the engine and its hooks. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/**
 * The engine sends each read before it handles the one before it. Here the read sent ahead fails
 * (its Redis connection is closed) while the engine is not awaiting it: it is waiting for the
 * first chunk, held in the store until the failure has been seen by Node. An unhandled rejection
 * there ends a Node 20 process; the purge must instead stop with that Redis named.
 */
describe('a purge whose Redis connection is lost while the read sent ahead waits its turn', () => {
  const fx = usePurgeEngine('qo');
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it('leaves no unhandled rejection and fails the purge as RedisUnavailable for its system', async () => {
    const { redis, prefix, store } = fx;
    await seedRawBullmqJobs(redis, { prefix, queue: 'q', count: 6 * BATCH });
    const client = new Redis(fx.redisUrl);
    client.on('error', () => {});
    const real = withUnavailable(createBullmqPurger({ client, prefix, queue: 'q' }), (error) =>
      toRedisUnavailable('hs', error),
    );

    const thirdChunkFlushed = signal();
    const firstChunkDeleted = signal();
    const connectionClosed = signal();
    const aheadFailed = signal();
    // Closed once the engine waits for the first chunk (it flushed the third) with the read ahead
    // sent, and the first chunk's jobs are deleted (its delete must not be what fails).
    void Promise.all([thirdChunkFlushed.promise, firstChunkDeleted.promise]).then(() => {
      client.disconnect();
      connectionClosed.resolve();
    });

    let reads = 0;
    const purger: QueuePurger = {
      ...real,
      read(place, offset, limit) {
        if (++reads !== AHEAD) return real.read(place, offset, limit);
        // Sent now as far as the engine knows; it reaches Redis once the connection is closed,
        // so it fails for real rather than coming back before the test can stop it.
        return (async () => {
          await connectionClosed.promise;
          try {
            return await real.read(place, offset, limit);
          } finally {
            aheadFailed.resolve();
          }
        })();
      },
    };
    const held: PurgeStore = Object.create(store) as PurgeStore;
    held.addPurgeChunk = async (chunk) => {
      await store.addPurgeChunk(chunk);
      if (chunk.seq === 3) thirdChunkFlushed.resolve();
    };
    held.markPurgeChunk = async (purgeId, seq, outcome) => {
      if (seq === 1) {
        firstChunkDeleted.resolve();
        // The engine stays in its wait for this chunk until the read ahead has failed and Node has
        // had a turn to report its rejection, were it unhandled.
        await aheadFailed.promise;
        await nextTurn();
        await nextTurn();
      }
      await store.markPurgeChunk(purgeId, seq, outcome);
    };

    const record = await queuePurge(fx, 6 * BATCH);
    const outcome = await runPurge(record, {
      store: held,
      purger,
      owner: 'me',
      readBatch: BATCH,
      chunkSize: BATCH,
      deleteBatch: BATCH,
    }).catch((error: unknown) => error);

    expect(reads).toBeGreaterThanOrEqual(AHEAD);
    expect(unhandled).toEqual([]);
    expect(outcome).toMatchObject({ code: 'RedisUnavailable', params: { system: 'hs' } });
    // The first chunk is archived and out of Redis; nothing was deleted after the loss.
    const chunks = await store.listPurgeChunks(record.id);
    expect(chunks.find((c) => c.seq === 1)).toMatchObject({ deleted: true, purged: BATCH });
    expect(await redis.llen(`${prefix}:q:wait`)).toBe(5 * BATCH);
  });
});
