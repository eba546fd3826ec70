import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { splitBlocks } from '../../src/archive/archive.js';
import { priorityKeys } from '../../src/backends/celery/keys.js';
import { createCeleryPurger } from '../../src/backends/celery/purge.js';
import { celeryPurgeShell } from '../helpers/celery-purge-shell.js';
import { publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, requestOf } from '../helpers/cli-run.js';

const QUEUE = 'celery:notification_sending';
const TARGET = `zeus/${QUEUE}`;
const LISTS = priorityKeys(
  { globalKeyprefix: '', prioritySteps: [0, 3, 6, 9], separator: '\x06\x16', fanoutPrefix: true, db: 0 },
  QUEUE,
);

describe('purge and undo of a Celery queue, with a real worker', () => {
  // A Redis of its own: the test reads whole keyspaces and no other file shares its worker's DB.
  const shell = celeryPurgeShell('celery-purge', QUEUE, 2000);
  const { as } = shell;

  it('waiting messages and failures go to the archive and come back exactly, and the worker then runs them', async () => {
    const brokerUrl = `${shell.server.url}/0`;
    // Three real failures, stored by a real worker with result_extended (so they name the queue).
    const failer = await startCeleryWorker({ brokerUrl, queues: [QUEUE], name: 'zeus-purge-fail' });
    const failed = await publishCelery(
      { brokerUrl },
      [1, 2, 3].map((n) => ({ task: 'tasks.boom', args: [`gateway ${n} down`], queue: QUEUE, wait: true })),
    );
    await failer.stop();
    const waiting = await publishCelery(
      { brokerUrl },
      Array.from({ length: 40 }, (_, n) => ({
        task: 'tasks.add',
        args: [n, 1],
        queue: QUEUE,
        priority: n % 2 ? 0 : 6,
      })),
    );
    const lists = async () => Promise.all(LISTS.map((key) => shell.redis.lrange(key, 0, -1)));
    const results = async () =>
      Promise.all(failed.ids.map((id) => shell.redis.get(`celery-task-meta-${id}`)));
    const before = { lists: await lists(), results: await results() };
    expect(before.lists.flat()).toHaveLength(40);
    expect(before.results.every((r) => r?.includes('FAILURE'))).toBe(true);

    const asked = await as('U0BOB', 'purge', TARGET, 'all');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending.preview).toContain('43 jobs will be archived');
    expect(pending.preview).toContain('tasks.add');
    expect(pending.preview).toContain('nothing delayed to purge');
    expect(pending.preview).not.toContain('gateway');

    const done = requestOf(await as('U0ERIN', 'approve', pending.id));
    expect(done).toMatchObject({ status: 'done', result: { purged: 43, archived: 43, purgeId: pending.id } });
    expect((await lists()).flat()).toEqual([]);
    expect(await results()).toEqual([null, null, null]);

    const undo = requestOf(await as('U0BOB', 'undo', pending.id));
    const restored = requestOf(await as('U0ERIN', 'approve', undo.id));
    expect(restored).toMatchObject({ status: 'done', result: { restored: 43 } });
    expect(await lists()).toEqual(before.lists);
    expect(await results()).toEqual(before.results);

    const worker = await startCeleryWorker({ brokerUrl, queues: [QUEUE], name: 'zeus-purge-run' });
    try {
      const deadline = Date.now() + 60_000;
      let stored: (string | null)[] = [];
      while (Date.now() < deadline) {
        stored = await Promise.all(waiting.ids.map((id) => shell.redis.get(`celery-task-meta-${id}`)));
        if (stored.every((s) => s?.includes('SUCCESS'))) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(stored.filter((s) => s?.includes('SUCCESS'))).toHaveLength(40);
    } finally {
      await worker.stop();
    }
  }, 180_000);

  it('a message whose bytes are not UTF-8 comes back byte for byte, and its archived line names the same message', async () => {
    const odd = Buffer.from([0x7b, 0x22, 0x78, 0x22, 0x3a, 0xff, 0xfe, 0x80, 0x7d]);
    const plain = '{"headers":{"task":"tasks.add"},"body":"e30="}';
    await shell.redis.lpush(LISTS[0]!, odd, plain);
    const before = await shell.redis.lrangeBuffer(LISTS[0]!, 0, -1);

    // What a resumed purge matches the archive against: the identity read from the line.
    const client = new Redis(`${shell.server.url}/0`);
    const purger = createCeleryPurger({
      broker: client,
      results: client,
      queue: QUEUE,
      lists: LISTS,
      failureIds: async () => [],
    });
    const [place] = await purger.places(['waiting']);
    const batch = await purger.read(place!, 0, 10);
    const lines = splitBlocks(batch.lines).map((l) => l.toString());
    expect(lines.map((line) => purger.parse(line).identity)).toEqual(batch.items.map((i) => i.identity));
    await purger.close();

    const pending = requestOf(await as('U0BOB', 'purge', TARGET));
    expect(requestOf(await as('U0ERIN', 'approve', pending.id))).toMatchObject({
      status: 'done',
      result: { purged: 2 },
    });
    expect(await shell.redis.llen(LISTS[0]!)).toBe(0);
    const undo = requestOf(await as('U0BOB', 'undo', pending.id));
    expect(requestOf(await as('U0ERIN', 'approve', undo.id))).toMatchObject({
      status: 'done',
      result: { restored: 2 },
    });
    expect(await shell.redis.lrangeBuffer(LISTS[0]!, 0, -1)).toEqual(before);
    await shell.redis.del(LISTS[0]!);
  }, 60_000);

  it('delayed alone is refused in one line saying where Celery keeps ETA tasks', async () => {
    const run = await as('U0BOB', 'purge', TARGET, 'delayed');
    expect(run.code).toBe(1);
    expect(jsonOf(run).error?.message).toContain('inside the workers');
  }, 30_000);
});
