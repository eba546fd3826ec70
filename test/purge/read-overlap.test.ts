import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { listChunkFiles, readChunk } from '../../src/archive/archive.js';
import { createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import type { PurgeBatch, QueuePurger } from '../../src/backends/queue-backend.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { runPurge } from '../../src/purge/engine.js';
import { queuePurge, usePurgeEngine } from './engine-fixture.js';

const N = 2_000;

/**
 * The jobs whose delete call has come back (removed, or no longer there), and waits for a set of
 * them. `releaseAll` lets go of a wait that can no longer be met: the reply of the read sent ahead
 * of the last one, which waits for jobs past the purge's count (never taken) and is dropped.
 */
function deletedJobs() {
  const deleted = new Set<string>();
  let waiting: { ids: string[]; resolve: () => void }[] = [];
  const met = (ids: string[]) => ids.every((id) => deleted.has(id));
  return {
    settled(ids: string[]) {
      for (const id of ids) deleted.add(id);
      const ready = waiting.filter((w) => met(w.ids));
      waiting = waiting.filter((w) => !met(w.ids));
      for (const w of ready) w.resolve();
    },
    allOf: (ids: string[]): Promise<void> =>
      met(ids) ? Promise.resolve() : new Promise((resolve) => waiting.push({ ids, resolve })),
    releaseAll() {
      for (const w of waiting) w.resolve();
      waiting = [];
    },
  };
}

/**
 * Which read the engine handles just before each one. A read starts `offset` entries past those
 * read and not yet deleted, so `offset` plus the entries sent for deletion is where it starts among
 * all read. The read the engine sends ahead starts where the one it waits for ends, and comes
 * after it; a read that starts anywhere else is sent once the engine has no read on its way (at
 * the start, or after dropping the read it had sent ahead), and comes after none.
 */
function readOrder() {
  let deletesSent = 0;
  let last: { end: number; reply: Promise<PurgeBatch> } | undefined;
  return {
    deleting(count: number) {
      deletesSent += count;
    },
    sent(offset: number, limit: number, reply: Promise<PurgeBatch>): Promise<PurgeBatch> | undefined {
      const start = offset + deletesSent;
      const before = last?.end === start ? last.reply : undefined;
      last = { end: start + limit, reply };
      return before;
    },
  };
}

/**
 * The engine sends the next read before the one it waits for comes back, at an offset that
 * assumes the tail did not move. A job pushed at the tail meanwhile (a LIFO job, a message kombu
 * restores) moves it: the read-ahead then brings jobs already taken. Those must not be archived
 * twice, and no job may end up both archived and still queued, or in neither place.
 */
describe('a purge whose tail moves between two overlapped reads', () => {
  const fx = usePurgeEngine('qo');

  // `late`: each read's reply is handed to the engine only once the jobs of the read before it
  // are deleted (that read's chunk, or an earlier one), so a reply that overlaps the read before
  // it brings jobs of a chunk already deleted. They must still be known as taken.
  const purgeWithMovingTail = async ({ late }: { late: boolean }) => {
    const { redis, prefix, store } = fx;
    await seedRawBullmqJobs(redis, { prefix, queue: 'q', count: N });
    const base = `${prefix}:q:`;
    const client = new Redis(fx.redisUrl);
    const real = createBullmqPurger({ client, prefix, queue: 'q' });
    const deletes = deletedJobs();
    const order = readOrder();
    const pushed: string[] = [];
    const pushes: Promise<unknown>[] = [];
    let reads = 0;
    // The real purger; every fifth read, a producer first adds a LIFO job (RPUSH at the tail).
    // The push goes on the purger's own connection just before the read, without waiting for it:
    // Redis runs it right before that read, and the read runs where the engine sent it among its
    // deletes. (Awaiting the push first would hold the read back behind deletes sent after it, at
    // an offset that no longer holds.)
    const purger: QueuePurger = {
      ...real,
      read(place, offset, limit) {
        if (++reads % 5 === 0) {
          const id = `lifo-${reads}`;
          pushes.push(
            client.hset(`${base}${id}`, 'name', 'late', 'data', '{}', 'timestamp', String(Date.now())),
            client.rpush(`${base}wait`, id),
          );
          pushed.push(id);
        }
        const reply = real.read(place, offset, limit);
        const before = order.sent(offset, limit, reply);
        if (!late || !before) return reply;
        return reply.then(async (batch) => {
          await deletes.allOf((await before).items.map((item) => item.identity));
          return batch;
        });
      },
      async remove(place, items) {
        order.deleting(items.length);
        const flags = await real.remove(place, items);
        deletes.settled(items.map((item) => item.identity));
        return flags;
      },
    };
    const record = await queuePurge(fx, N);
    const { record: done } = await runPurge(record, {
      store,
      purger,
      owner: 'me',
      // Late: a chunk per read, so the read before a reply is in a chunk of its own, on its way
      // out without waiting for that reply.
      chunkSize: late ? 1 : 300,
      readBatch: 50,
      deleteBatch: 100,
    });
    await Promise.all(pushes);
    deletes.releaseAll();
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
    await purgeWithMovingTail({ late: false });
  });

  it('does the same when each read reply reaches the engine late, after the chunk before it was deleted', async () => {
    await purgeWithMovingTail({ late: true });
  });
});
