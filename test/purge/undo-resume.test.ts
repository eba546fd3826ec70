import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import { createCeleryPurger } from '../../src/backends/celery/purge.js';
import { undoMarkerKey } from '../../src/backends/undo-marker.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { isOpsError } from '../../src/errors.js';
import { runPurge, runUndo } from '../../src/purge/engine.js';
import type { PurgeRecord } from '../../src/store/store.js';
import { type PurgeEngineFixture, queuePurge, usePurgeEngine } from './engine-fixture.js';

const N = 3_000;

/** N jobs seeded in `q` and purged (chunks of 1,000): the purge an undo restores, and the ids as they were. */
async function purged(fx: PurgeEngineFixture) {
  const { redis, prefix, store } = fx;
  await seedRawBullmqJobs(redis, { prefix, queue: 'q', count: N });
  const before = await redis.lrange(`${prefix}:q:wait`, 0, -1);
  const record = await queuePurge(fx, N);
  const purger = createBullmqPurger({ client: new Redis(fx.redisUrl), prefix, queue: 'q' });
  const { record: done } = await runPurge(record, { store, purger, owner: 'me', chunkSize: 1_000 });
  await purger.close();
  expect(await redis.llen(`${prefix}:q:wait`)).toBe(0);
  return { done, before };
}

/**
 * The engine leaves its marker (the service drops it once the store says undone): a test's go with
 * its prefix, on a Redis other files share.
 */
async function dropMarkers(fx: PurgeEngineFixture) {
  const markers = await fx.redis.keys(undoMarkerKey('*', fx.prefix));
  if (markers.length > 0) await fx.redis.del(...markers);
}

describe('two runs of one undo at once', () => {
  const fx = usePurgeEngine('qr', 'describe');
  let done: PurgeRecord;
  let before: string[];
  let outcomes: PromiseSettledResult<unknown>[];

  beforeAll(async () => {
    ({ done, before } = await purged(fx));
    const [a, b] = [0, 1].map(() =>
      createBullmqPurger({ client: new Redis(fx.redisUrl), prefix: fx.prefix, queue: 'q' }),
    );
    outcomes = await Promise.allSettled([
      runUndo(done, { purger: a!, batch: 100 }),
      runUndo(done, { purger: b!, batch: 100 }),
    ]);
    await Promise.all([a!.close(), b!.close()]);
  });
  afterAll(() => dropMarkers(fx));

  it('put every job back exactly once', async () => {
    expect(await fx.redis.lrange(`${fx.prefix}:q:wait`, 0, -1)).toEqual(before);
    expect(await fx.redis.get(undoMarkerKey(done.id, fx.prefix))).toBe(`${N} ${N}`);
  });

  it('the one that lost the marker stops', () => {
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o) => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const reason = (lost[0] as PromiseRejectedResult).reason;
    expect(isOpsError(reason) && reason.code === 'UndoTakenOver').toBe(true);
  });
});

describe('undo steps move a marker in Redis with the jobs they put back', () => {
  const fx = usePurgeEngine('qu');
  afterEach(() => dropMarkers(fx));

  /**
   * An undo whose process dies after its fourth step: the first 1,400 lines of the restore
   * sequence (a whole file of 1,000, then 400) are back.
   */
  const undoKilledAfterFourSteps = async (done: PurgeRecord) => {
    const first = createBullmqPurger({ client: new Redis(fx.redisUrl), prefix: fx.prefix, queue: 'q' });
    let beats = 0;
    await expect(
      runUndo(done, {
        purger: first,
        batch: 400,
        beat: async () => {
          // Beats: the archive checked, then one per step.
          if (++beats === 5) throw new Error('killed');
        },
      }),
    ).rejects.toThrow('killed');
    await first.close();
  };

  it('an undo resumed at the marker puts back only the rest, and reports the whole count', async () => {
    const { done, before } = await purged(fx);
    await undoKilledAfterFourSteps(done);
    expect(await fx.redis.llen(`${fx.prefix}:q:wait`)).toBe(1_400);

    const second = createBullmqPurger({ client: new Redis(fx.redisUrl), prefix: fx.prefix, queue: 'q' });
    expect(await runUndo(done, { purger: second })).toEqual({ restored: N, existing: [], alreadyThere: 0 });
    await second.close();
    expect(await fx.redis.lrange(`${fx.prefix}:q:wait`, 0, -1)).toEqual(before);
  });

  it('a resumed undo leaves a job whose id exists again as it is, puts back the rest, and counts it', async () => {
    const { done, before } = await purged(fx);
    await undoKilledAfterFourSteps(done);
    const back = await fx.redis.lrange(`${fx.prefix}:q:wait`, 0, -1);
    expect(back).toHaveLength(1_400);
    // A producer adds a job under an id still in the archive.
    const taken = before.find((id) => !back.includes(id))!;
    await fx.redis.hset(`${fx.prefix}:q:${taken}`, 'name', 'new', 'data', '{}');

    const second = createBullmqPurger({ client: new Redis(fx.redisUrl), prefix: fx.prefix, queue: 'q' });
    const outcome = await runUndo(done, { purger: second });
    await second.close();
    expect(outcome).toEqual({ restored: N - 1, existing: [taken], alreadyThere: 1 });
    expect(await fx.redis.hgetall(`${fx.prefix}:q:${taken}`)).toEqual({ name: 'new', data: '{}' });
    expect(await fx.redis.lrange(`${fx.prefix}:q:wait`, 0, -1)).toEqual(before.filter((id) => id !== taken));
  });

  it('Celery: a step never pushes a task id in Redis, also one that came back after the ids were read', async () => {
    const broker = new Redis(fx.redisUrl);
    const list = `${fx.prefix}-q`;
    const unacked = `${fx.prefix}-unacked`;
    const purger = createCeleryPurger({
      broker,
      results: broker,
      queue: 'q',
      lists: [list, `${list}\x06\x163`],
      unacked,
      failureIds: async () => [],
    });
    const message = (id: string) =>
      JSON.stringify({
        body: 'W10=',
        headers: { lang: 'py', task: 'tasks.add', id, root_id: id },
        properties: {},
      });
    const line = (id: string, l = list) => JSON.stringify({ l, m: message(id) });
    const step = (from: number, restoredBefore: number) => ({ purgeId: fx.prefix, from, restoredBefore });
    try {
      // Task a is queued at another priority, b is held by a worker: neither goes back.
      await fx.redis.lpush(`${list}\x06\x163`, message('a'));
      await fx.redis.hset(unacked, 'tag-b', JSON.stringify([JSON.parse(message('b')), '', 'q']));
      expect(await purger.restore([line('a'), line('b'), line('c')], step(0, 0))).toEqual({
        restored: 1,
        existing: ['a', 'b'],
      });
      // Redis comes back older than the read: its token is gone, and task d is queued again.
      await fx.redis.del(`${undoMarkerKey(fx.prefix)}:present`);
      await fx.redis.lpush(list, message('d'));
      expect(await purger.restore([line('d'), line('e'), line('e')], step(3, 1))).toEqual({
        restored: 1,
        existing: ['d', 'e'],
      });
      expect(await fx.redis.lrange(list, 0, -1)).toEqual([message('d'), message('c'), message('e')]);
      expect(await purger.undoProgress(fx.prefix)).toEqual({ position: 6, restored: 2 });
      await purger.clearUndoProgress(fx.prefix);
      expect(await fx.redis.keys(`*queue-ops:undo:${fx.prefix}*`)).toEqual([]);
    } finally {
      await fx.redis.del(list, `${list}\x06\x163`, unacked, undoMarkerKey(fx.prefix));
      await purger.close();
    }
  });
});

describe('Celery: an undo step over results, one already holding its archived value, one holding another', () => {
  const fx = usePurgeEngine('qc', 'describe');
  let purger: ReturnType<typeof createCeleryPurger>;
  const key = (n: number) => `celery-task-meta-${fx.prefix}-${n}`;
  const line = (n: number) =>
    JSON.stringify({ k: key(n), v: `{"status":"FAILURE","n":${n}}`, t: 0, a: Date.now() });
  const step = () => ({ purgeId: fx.prefix, from: 0, restoredBefore: 0 });

  beforeAll(async () => {
    const broker = new Redis(fx.redisUrl);
    purger = createCeleryPurger({
      broker,
      results: broker,
      queue: 'q',
      lists: [`${fx.prefix}-q`],
      failureIds: async () => [],
    });
    // Result 1 went back in a step cut short before its messages; result 2 was written anew by someone else.
    await fx.redis.set(key(1), `{"status":"FAILURE","n":1}`);
    await fx.redis.set(key(2), '{"status":"SUCCESS"}');
  });

  afterAll(async () => {
    await fx.redis.del(key(1), key(2), key(3), undoMarkerKey(fx.prefix));
    await purger?.close();
  });

  it('counts as a conflict only the one holding another value, not the one already holding its archived value', async () => {
    expect(await purger.conflicts([line(1), line(2), line(3)])).toEqual([key(2)]);
  });

  it('counts the one already holding its archived value as back, and the one holding another as existing', async () => {
    expect(await purger.restore([line(1), line(2), line(3)], step())).toEqual({
      restored: 2,
      existing: [key(2)],
    });
  });

  it('leaves the one holding another value as it is', async () => {
    expect(await fx.redis.get(key(2))).toBe('{"status":"SUCCESS"}');
  });

  it('writes the one that was missing', async () => {
    expect(await fx.redis.get(key(3))).toBe(`{"status":"FAILURE","n":3}`);
  });

  it('moves the marker past the step', async () => {
    expect(await purger.undoProgress(fx.prefix)).toEqual({ position: 3, restored: 2 });
  });

  it('writes nothing twice: the same step again finds the marker moved on', async () => {
    await expect(purger.restore([line(3)], step())).rejects.toMatchObject({ code: 'UndoTakenOver' });
  });
});
