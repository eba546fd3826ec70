import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { splitBlocks } from '../../src/archive/archive.js';
import { archivedHash, createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import type { PurgeBatch, PurgeState, QueuePurger } from '../../src/backends/queue-backend.js';
import { openRawPipe, type RawPipe } from '../../src/backends/raw-pipe.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { runPurge, runUndo } from '../../src/purge/engine.js';
import { archivedLines } from '../faults/fault-fixture.js';
import { connectionFor } from '../helpers/bullmq-jobs.js';
import { type PurgeEngineFixture, queuePurge, usePurgeEngine } from './engine-fixture.js';

/**
 * A whole-state purge reads its jobs' hashes through a raw pipe (pipelined HGETALL, replies copied
 * into the archive lines as Redis sent them) instead of Lua. What the user keeps must not depend on
 * which one read a job: the same lines, the budget that keeps a batch of huge jobs short, and a
 * purge that still takes every job once, and gives every job back, when the pipe is lost midway.
 */
const STATES: PurgeState[] = ['waiting', 'delayed', 'failed'];

/** An archive line as parsed. */
interface Line {
  p: string;
  id: string;
  s: string | null;
  j: { fields: string[]; logs: string[] };
}

/** Every line of every place (one read each), as parsed JSON, with the ids the batch named, read by `purger`. */
async function readAll(purger: QueuePurger): Promise<{ ids: string[]; lines: Line[] }> {
  const ids: string[] = [];
  const lines: Line[] = [];
  for (const place of await purger.places(STATES)) {
    if (place.size === 0) continue;
    const batch: PurgeBatch = await purger.read(place, 0, place.size);
    ids.push(...batch.items.map((item) => item.identity));
    lines.push(...splitBlocks(batch.lines).map((line) => JSON.parse(line.toString('utf8')) as Line));
  }
  return { ids, lines };
}

async function commandCalls(redis: Redis, command: string): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

/**
 * `N` jobs seeded in `q`, purged through `purger` (reads of `readBatch`): the list is left empty,
 * the archive holds each job once, and undo through `restorer` gives every one back, in order.
 */
async function purgesEveryJobOnce(
  fx: PurgeEngineFixture,
  options: { N: number; readBatch: number; purger: () => QueuePurger; restorer?: QueuePurger },
): Promise<void> {
  const { redis, prefix, store } = fx;
  const { N } = options;
  await seedRawBullmqJobs(redis, { prefix, queue: 'q', count: N });
  const before = await redis.lrange(`${prefix}:q:wait`, 0, -1);
  const sample = await redis.hgetall(`${prefix}:q:${before[N - 7]}`);
  const purger = options.purger();
  const record = await queuePurge(fx, N);
  const { record: done } = await runPurge(record, {
    store,
    purger,
    owner: 'me',
    readBatch: options.readBatch,
  });
  expect(await redis.llen(`${prefix}:q:wait`)).toBe(0);
  const archived = (await archivedLines<{ id: string }>(done.archivePath)).map((line) => line.id);
  expect(archived.length).toBe(N);
  expect(new Set(archived).size).toBe(N);
  const restorer = options.restorer ?? purger;
  expect(await runUndo(done, { purger: restorer })).toEqual({ restored: N, existing: [], alreadyThere: 0 });
  expect(await redis.lrange(`${prefix}:q:wait`, 0, -1)).toEqual(before);
  expect(await redis.hgetall(`${prefix}:q:${before[N - 7]}`)).toEqual(sample);
}

describe('a purge reading hashes through the raw pipe', () => {
  const fx = usePurgeEngine('qo-pipe');

  it('writes the same archive lines as the Lua read, whatever the fields hold', async () => {
    const { redis, prefix } = fx;
    const base = `${prefix}:q:`;
    const queue = new Queue('q', { connection: connectionFor(fx.redisUrl), prefix });
    const tricky =
      'quote " backslash \\ slash / newline \n tab \t bell \u0007 unit \u001f é ü 日本 😀 </script>';
    try {
      await queue.add('push "odd" name', { text: tricky, nested: { list: [1, 'two', null] } });
      await queue.add('plain', { n: 1 }, { jobId: 'custom "id" \\ / é' });
      await queue.add('later', { at: tricky }, { delay: 60_000 });
      const logged = await queue.add('logged', { n: 2 });
      await logged.log(`a log line with ${tricky}`);
      await logged.log('a second line');
      // A field that is not valid UTF-8 (written by some other client): both read it the same way.
      await redis.hset(
        `${base}raw-bytes`,
        'name',
        'raw',
        'data',
        Buffer.from([0x7b, 0xff, 0xfe, 0x41, 0x7d]),
      );
      await redis.rpush(`${base}wait`, 'raw-bytes');
      // A removed job's id left in the list is left out by both.
      await redis.rpush(`${base}wait`, 'gone-since');
      // An empty value.
      await redis.hset(`${base}empty-value`, 'name', '', 'data', '{}');
      await redis.lpush(`${base}wait`, 'empty-value');

      const client = new Redis(fx.redisUrl);
      const throughPipe = createBullmqPurger({ client, prefix, queue: 'q' });
      const throughLua = createBullmqPurger({
        client: new Redis(fx.redisUrl),
        prefix,
        queue: 'q',
        openPipe: async () => undefined,
      });
      try {
        const hgetallBefore = await commandCalls(redis, 'hgetall');
        const piped = await readAll(throughPipe);
        const hgetalls = (await commandCalls(redis, 'hgetall')) - hgetallBefore;
        const scripted = await readAll(throughLua);
        expect(piped.ids.length).toBe(6);
        expect(piped.ids).toContain('custom "id" \\ / é');
        expect(piped.ids).not.toContain('gone-since');
        expect(piped).toEqual(scripted);
        // What the lines hold: the hash's fields as Redis has them, the logs, the delayed score.
        const byId = new Map(piped.lines.map((line) => [line.id, line]));
        const odd = [...byId.values()].find((line) => line.j.fields.includes('push "odd" name'))!;
        expect(JSON.parse(archivedHash(odd.j).data!).text).toBe(tricky);
        expect(byId.get(logged.id!)!.j.logs).toEqual([`a log line with ${tricky}`, 'a second line']);
        const delayed = [...byId.values()].find((line) => line.p === 'delayed')!;
        expect(delayed.s).toBe(await redis.zscore(`${base}delayed`, delayed.id));
        expect(byId.get('raw-bytes')!.j.fields).toEqual(['name', 'raw', 'data', '{\ufffd\ufffdA}']);
        // Read through the pipe (the 6 jobs and the removed id), not by the script.
        expect(hgetalls).toBeGreaterThanOrEqual(7);
      } finally {
        await throughPipe.close();
        await throughLua.close();
      }
    } finally {
      await queue.close();
    }
  });

  it('keeps a batch of huge jobs short: it stops once their hashes pass half a megabyte, asking one at a time', async () => {
    const { redis, prefix } = fx;
    const base = `${prefix}:q:`;
    const big = 'x'.repeat(200 * 1024);
    for (let i = 1; i <= 6; i++) await redis.hset(`${base}${i}`, 'name', 'big', 'data', big);
    await redis.lpush(`${base}wait`, '1', '2', '3', '4', '5', '6');
    const purger = createBullmqPurger({ client: new Redis(fx.redisUrl), prefix, queue: 'q' });
    try {
      const place = (await purger.places(['waiting'])).find((p) => p.name === 'wait');
      const first = await purger.read(place!, 0, 6);
      // 200, 400, then 600 KB: the third passes the budget and ends the batch.
      expect(first.items.map((item) => item.identity)).toEqual(['1', '2', '3']);
      const rest = await purger.read(place!, 3, 3);
      expect(rest.items.map((item) => item.identity)).toEqual(['4', '5', '6']);
      const job = (JSON.parse(splitBlocks(rest.lines)[2]!.toString()) as { j: { fields: string[] } }).j;
      expect(archivedHash(job)).toEqual({ name: 'big', data: big });
    } finally {
      await purger.close();
    }
  });

  it('takes every job once and undo gives every one back when the pipe is killed midway: the client reads the rest', async () => {
    const { redis, prefix } = fx;
    const client = new Redis(fx.redisUrl, { connectionName: `queue-ops:${prefix}:purge` });
    const real = createBullmqPurger({ client, prefix, queue: 'q' });
    let reads = 0;
    let killed = false;
    await purgesEveryJobOnce(fx, {
      N: 3_000,
      readBatch: 200,
      restorer: real,
      purger: () => ({
        ...real,
        async read(place, offset, limit) {
          const batch = await real.read(place, offset, limit);
          if (++reads === 2) {
            const line = String(await redis.client('LIST'))
              .split('\n')
              .find((l) => l.includes(` name=queue-ops:${prefix}:purge:read `));
            const id = line?.match(/^id=(\d+)/)?.[1];
            if (id) killed = Number(await redis.client('KILL', 'ID', id)) === 1;
          }
          return batch;
        },
      }),
    });
    expect(killed).toBe(true);
    expect(reads).toBeGreaterThan(3);
    await real.close();
  });

  it('reads a batch whose pipe fails while its hashes are on the way by the client instead, and goes on by the client', async () => {
    const client = new Redis(fx.redisUrl);
    let requests = 0;
    let failed = 0;
    // A real pipe, closed right after its third request is written: that request's replies never
    // come, as when the connection drops with a batch's hashes on the way.
    const purger = createBullmqPurger({
      client,
      prefix: fx.prefix,
      queue: 'q',
      openPipe: async () => {
        const pipe = await openRawPipe(client, { name: `queue-ops:${fx.prefix}:read`, timeoutMs: 5000 });
        if (!pipe) return undefined;
        return {
          get closed() {
            return pipe.closed;
          },
          close: () => pipe.close(),
          send(request, replies, onReply) {
            // Counted when it goes on the wire: a send on a closed pipe is refused at once.
            if (!pipe.closed) requests++;
            const sent = pipe.send(request, replies, onReply);
            if (requests === 3 && !pipe.closed) pipe.close();
            return sent.catch((error: unknown) => {
              failed++;
              throw error;
            });
          },
        } satisfies RawPipe;
      },
    });
    await purgesEveryJobOnce(fx, { N: 2_000, readBatch: 100, purger: () => purger });
    // The third, and the one before it when it was still on its way (the engine reads one ahead).
    expect(failed).toBeGreaterThanOrEqual(1);
    // No request went on the wire once the pipe failed: the rest were read by Lua.
    expect(requests).toBe(3);
    await purger.close();
  });
});
