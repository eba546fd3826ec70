import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../../src/backends/bullmq/index.js';
import { majorOfVersion } from '../../../src/backends/bullmq/pause.js';
import { RETRY_FAILED_BATCH, retryBatchKeys } from '../../../src/backends/bullmq/retry-script.js';
import { runScript } from '../../../src/backends/lua.js';
import {
  connectionFor,
  deletePrefix,
  ProviderError,
  randomName,
  systemFor,
  waitFor,
} from '../../helpers/bullmq-jobs.js';
import { LIBS } from '../../helpers/bullmq-libs.js';
import { testRedisUrl } from '../../helpers/test-redis.js';

const redisUrl = testRedisUrl();

/** Every key under `prefix`, with the prefix written as `P` in names and values, streams as their entries' fields. */
async function snapshot(redis: Redis, prefix: string): Promise<Record<string, unknown>> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  const norm = (text: string) => text.split(`${prefix}:`).join('P:');
  const out: Record<string, unknown> = {};
  for (const key of keys.sort()) {
    const type = await redis.type(key);
    let value: unknown;
    if (type === 'list') value = (await redis.lrange(key, 0, -1)).map(norm);
    else if (type === 'zset') value = (await redis.zrange(key, 0, -1, 'WITHSCORES')).map(norm);
    else if (type === 'set') value = (await redis.smembers(key)).map(norm).sort();
    else if (type === 'hash')
      value = Object.fromEntries(
        Object.entries(await redis.hgetall(key))
          .map(([f, v]) => [norm(f), norm(v)])
          .sort(([a], [b]) => (a! < b! ? -1 : 1)),
      );
    else if (type === 'stream')
      value = (await redis.xrange(key, '-', '+')).map(([, fields]) => fields.map(norm));
    else value = norm(String(await redis.get(key)));
    out[norm(key)] = value;
  }
  return out;
}

/** Copies every key of `from` under `to`, the prefix rewritten in names and values (streams left out). */
async function copyPrefix(redis: Redis, from: string, to: string): Promise<void> {
  const swap = (text: string) => text.split(`${from}:`).join(`${to}:`);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${from}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const target = swap(key);
      const type = await redis.type(key);
      if (type === 'list') await redis.rpush(target, ...(await redis.lrange(key, 0, -1)).map(swap));
      else if (type === 'zset') {
        const flat = await redis.zrange(key, 0, -1, 'WITHSCORES');
        for (let i = 0; i < flat.length; i += 2) await redis.zadd(target, flat[i + 1]!, swap(flat[i]!));
      } else if (type === 'set') await redis.sadd(target, ...(await redis.smembers(key)).map(swap));
      else if (type === 'hash')
        await redis.hset(
          target,
          Object.fromEntries(Object.entries(await redis.hgetall(key)).map(([f, v]) => [swap(f), swap(v)])),
        );
      else if (type === 'string') await redis.set(target, swap(String(await redis.get(key))));
    }
  } while (cursor !== '0');
}

/**
 * A sorted set in the skiplist encoding a failed set of more than 128 jobs has: one member too
 * long for a listpack, then removed (Redis does not turn a skiplist back).
 */
async function asSkiplist(redis: Redis, key: string): Promise<void> {
  const long = 'x'.repeat(100);
  await redis.zadd(key, 0, long);
  await redis.zrem(key, long);
  expect(await redis.object('ENCODING', key)).toBe('skiplist');
}

/** How many times Redis ran `command` (INFO commandstats), scripts' inner calls included. */
async function callsOf(redis: Redis, command: string): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

/**
 * The batch script (retry-script.ts) against BullMQ's own `Job.retry()` (its `reprocessJob`), of
 * each major, on two identical copies of one queue: every key must come out the same, events
 * included, for a mix of plain, lifo, prioritized and child jobs and an id without a job.
 */
describe.each(LIBS)('a retry in one script per batch on BullMQ $major', ({ lib }) => {
  /** The jobs {@link seed} leaves failed. */
  const FAILED = 11;
  let ours: string;
  let theirs: string;
  let redis: Redis;
  const queueName = 'push';

  beforeEach(() => {
    ours = randomName('rso');
    theirs = randomName('rst');
    redis = new Redis(redisUrl);
  });

  afterEach(async () => {
    await redis.acl('DELUSER', 'nosort');
    redis.disconnect();
    await deletePrefix(redisUrl, ours);
    await deletePrefix(redisUrl, theirs);
  });

  /**
   * Jobs a real worker fails: plain, lifo, two priorities, three flows' children (one its parent
   * waits for, one it goes on without, one that fails it) and the last two parents; plus a failed
   * id with no job, newest.
   */
  async function seed(): Promise<void> {
    const queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix: theirs });
    const flow = new lib.FlowProducer({ connection: connectionFor(redisUrl), prefix: theirs });
    try {
      await queue.addBulk([
        { name: 'plain', data: { n: 1 }, opts: { attempts: 2 } },
        { name: 'lifo', data: { n: 2 }, opts: { lifo: true } },
        { name: 'urgent', data: { n: 3 }, opts: { priority: 5 } },
        { name: 'plain', data: { n: 4 } },
        { name: 'later', data: { n: 5 }, opts: { priority: 2 } },
        { name: 'lifo', data: { n: 6 }, opts: { lifo: true } },
      ]);
      await flow.add({
        name: 'parent',
        queueName,
        data: {},
        children: [{ name: 'child', queueName, data: { n: 7 } }],
      });
      // Children their parent goes on without (its `:failed` hash) or fails with (`:unsuccessful`):
      // a retry moves each back into the parent's dependencies. Both parents then run and fail.
      await flow.add({
        name: 'parent',
        queueName,
        data: {},
        children: [{ name: 'child', queueName, data: { n: 8 }, opts: { ignoreDependencyOnFailure: true } }],
      });
      await flow.add({
        name: 'parent',
        queueName,
        data: {},
        children: [{ name: 'child', queueName, data: { n: 9 }, opts: { failParentOnFailure: true } }],
      });
      const worker = new lib.Worker(
        queueName,
        async (job) => {
          throw new ProviderError(`APNs 429 for ${job.data.n}`);
        },
        { connection: connectionFor(redisUrl), prefix: theirs, concurrency: 1 },
      );
      try {
        await waitFor(
          'every job to fail',
          async () => (await queue.getJobCounts('failed')).failed === FAILED,
        );
      } finally {
        await worker.close();
      }
    } finally {
      await flow.close();
      await queue.close();
    }
    await redis.zadd(`${theirs}:${queueName}:failed`, Date.now() + 60_000, 'ghost');
  }

  const shapes: [string, (prefix: string) => Promise<void>][] = [
    ['a running queue', async (_prefix: string) => {}],
    [
      'a paused queue',
      async (prefix: string) => {
        const queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix });
        await queue.pause();
        await queue.close();
      },
    ],
    [
      'a queue at its global concurrency',
      async (prefix: string) => {
        await redis.hset(`${prefix}:${queueName}:meta`, 'concurrency', '0');
      },
    ],
  ];
  /**
   * Each shape with the failed set small (a listpack: ids checked one way, fields read job by job)
   * and as a big one is (a skiplist: one SORT reads the batch), which SORT must not convert; and
   * with a bot whose ACL refuses SORT (`-@dangerous`), which must get the same by the first way.
   */
  const sets = ['listpack', 'skiplist', 'skiplist, SORT refused to the bot'] as const;
  it.each(shapes.flatMap(([label, shape]) => sets.map((set) => [label, set, shape] as const)))(
    'writes what Job.retry() writes id by id, newest first, on %s, its failed set a %s',
    async (_label, set, shape) => {
      const encoding = set === 'listpack' ? 'listpack' : 'skiplist';
      let url = redisUrl;
      if (set !== encoding) {
        await redis.acl('SETUSER', 'nosort', 'reset', 'on', '>pw', '~*', '&*', '+@all', '-sort');
        await redis.acl('LOG', 'RESET');
        url = redisUrl.replace('redis://', 'redis://nosort:pw@');
      }
      await seed();
      await shape(theirs);
      await redis.del(`${theirs}:${queueName}:events`);
      await copyPrefix(redis, theirs, ours);
      const failedKey = `${ours}:${queueName}:failed`;
      if (encoding === 'skiplist') await asSkiplist(redis, failedKey);
      const sorts = await callsOf(redis, 'sort');
      const newest = await redis.zrevrange(`${theirs}:${queueName}:failed`, 0, -1);
      expect(newest).toHaveLength(FAILED + 1);

      // BullMQ's own, one job at a time, newest failure first.
      const queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix: theirs });
      try {
        for (const id of newest) {
          const job = await lib.Job.fromId(queue, id);
          if (job) await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        }
      } finally {
        await queue.close();
      }

      const backend = createBullmqBackend(systemFor(url, ours, [queueName]));
      try {
        const outcome = await backend.retry(queueName, { all: true, limit: 1000 });
        expect(outcome.retried).toBe(FAILED);
        expect(outcome.skipped).toBe(1);
        // The audit's ids: every retried job (the order they went back in is in the lists compared below).
        expect(Object.keys(outcome.ids).sort()).toEqual(newest.filter((id) => id !== 'ghost').sort());
      } finally {
        await backend.close();
      }

      const after = await snapshot(redis, ours);
      expect(after).toEqual(await snapshot(redis, theirs));
      // The big set read by SORT (its ids one run of the set), the small one left as it was.
      expect((await callsOf(redis, 'sort')) - sorts).toBe(set === 'skiplist' ? 1 : 0);
      expect(await redis.object('ENCODING', failedKey)).toBe(encoding);
      // A bot refused SORT is not refused once a batch: its ACL LOG stays empty.
      if (set !== encoding) expect(await redis.acl('LOG')).toEqual([]);
      // Only the id without a job is still failed; attempts reset on every retried job.
      expect(after[`P:${queueName}:failed`]).toEqual(['ghost', expect.any(String)]);
      for (const id of newest.filter((i) => i !== 'ghost')) {
        const job = after[`P:${queueName}:${id}`] as Record<string, string>;
        expect(job.atm ?? null).toBeNull();
        expect(job.failedReason ?? null).toBeNull();
      }
    },
  );

  /**
   * Batches as the script can be handed them, each id by its place in the failed set, newest
   * first (0 is the id without a job): ids that left the failed set after they were read, one
   * that failed again since (a newer score), an id twice, an id that never was there, and ids
   * spread wider than the batch (a filtered selection).
   */
  it.each(
    [
      ['the newest in order, one retried meanwhile, one failed again since', [0, 1, 2, 3, 4, 5, 6, 7]],
      ['an id twice', [1, 3, 3, 4]],
      ['a first id that is not failed', ['nope', 1, 2]],
      ['ids spread wider than the batch', [1, 7]],
      ['the oldest first', [7, 6, 5]],
    ].flatMap(([label, places]) =>
      (['listpack', 'skiplist'] as const).map((encoding) => [label, encoding, places] as const),
    ),
  )(
    'leaves alone what Job.retry() would refuse: %s, the failed set a %s',
    async (_label, encoding, places) => {
      await seed();
      const read = await redis.zrevrange(`${theirs}:${queueName}:failed`, 0, -1);
      // After the ids were read: one job is retried by someone else, another fails again later.
      const someoneElse = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix: theirs });
      try {
        await (await lib.Job.fromId(someoneElse, read[2]!))!.retry('failed');
      } finally {
        await someoneElse.close();
      }
      await redis.zadd(`${theirs}:${queueName}:failed`, Date.now() + 120_000, read[5]!);
      await redis.del(`${theirs}:${queueName}:events`);
      await copyPrefix(redis, theirs, ours);
      const ids = (places as (number | string)[]).map((place) =>
        typeof place === 'number' ? read[place]! : place,
      );
      if (encoding === 'skiplist') await asSkiplist(redis, `${ours}:${queueName}:failed`);

      const queue = new lib.Queue(queueName, { connection: connectionFor(redisUrl), prefix: theirs });
      const refused: number[] = [];
      try {
        for (const [i, id] of ids.entries()) {
          const job = await lib.Job.fromId(queue, id);
          try {
            if (!job) throw new Error('no such job');
            await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
          } catch {
            refused.push(i + 1);
          }
        }
      } finally {
        await queue.close();
      }
      const major = String(majorOfVersion(await redis.hget(`${ours}:${queueName}:meta`, 'version')));
      const sorts = await callsOf(redis, 'sort');
      const left = await runScript(redis, RETRY_FAILED_BATCH, retryBatchKeys(ours, queueName), [
        `${ours}:${queueName}:`,
        major,
        ...ids,
      ]);
      expect(left).toEqual(refused);
      expect(await snapshot(redis, ours)).toEqual(await snapshot(redis, theirs));
      // Ids whose first and last are not the ends of one run are not read by SORT as well.
      const spread = ids[0] === read[1] && ids.at(-1) === read[7];
      if (spread || ids[0] === read[7]) expect((await callsOf(redis, 'sort')) - sorts).toBe(0);
    },
  );

  it("trims the events stream to the queue's cap as an XADD with MAXLEN ~ at each event does", async () => {
    await seed();
    await redis.zrem(`${theirs}:${queueName}:failed`, 'ghost');
    // A cap of 150 events, and a stream of 290 before the retry: whole nodes of 100 come off the head.
    await redis.hset(`${theirs}:${queueName}:meta`, 'opts.maxLenEvents', '150');
    await redis.del(`${theirs}:${queueName}:events`);
    await copyPrefix(redis, theirs, ours);
    for (const prefix of [ours, theirs]) {
      const filler = redis.pipeline();
      for (let n = 0; n < 290; n++)
        filler.xadd(`${prefix}:${queueName}:events`, '*', 'event', 'filler', 'n', n);
      await filler.exec();
    }
    const newest = await redis.zrevrange(`${theirs}:${queueName}:failed`, 0, -1);
    // A Queue writes its own cap into the meta hash when it connects: the same one.
    const queue = new lib.Queue(queueName, {
      connection: connectionFor(redisUrl),
      prefix: theirs,
      streams: { events: { maxLen: 150 } },
    });
    try {
      for (const id of newest)
        await (await lib.Job.fromId(queue, id))!.retry('failed', {
          resetAttemptsMade: true,
          resetAttemptsStarted: true,
        });
    } finally {
      await queue.close();
    }
    const backend = createBullmqBackend(systemFor(redisUrl, ours, [queueName]));
    try {
      expect((await backend.retry(queueName, { all: true, limit: 1000 })).retried).toBe(FAILED);
    } finally {
      await backend.close();
    }
    const after = await snapshot(redis, ours);
    expect(after).toEqual(await snapshot(redis, theirs));
    expect((after[`P:${queueName}:events`] as unknown[]).length).toBeLessThan(290);
  });

  it('retries only the newest up to the cap, and skips a job retried meanwhile', async () => {
    await seed();
    await redis.zrem(`${theirs}:${queueName}:failed`, 'ghost');
    const newest = await redis.zrevrange(`${theirs}:${queueName}:failed`, 0, -1);
    const backend = createBullmqBackend(systemFor(redisUrl, theirs, [queueName]));
    try {
      const outcome = await backend.retry(queueName, { all: true, limit: 3 });
      expect(Object.keys(outcome.ids).sort()).toEqual(newest.slice(0, 3).sort());
      expect(await redis.zrevrange(`${theirs}:${queueName}:failed`, 0, -1)).toEqual(newest.slice(3));
      // One id, already retried by someone else: not failed any more, nothing written.
      await expect(backend.retry(queueName, { jobId: newest[0]! })).rejects.toMatchObject({
        code: 'UnknownJob',
      });
    } finally {
      await backend.close();
    }
  });
});
