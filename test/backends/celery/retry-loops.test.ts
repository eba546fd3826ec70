import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  parseRetryLoops,
  RETRY_LOOPS,
  RETRY_SAMPLE,
  RETRY_SAMPLE_BYTES,
} from '../../../src/backends/celery/retry-loops.js';
import { runScript } from '../../../src/backends/lua.js';
import type { DlqData } from '../../../src/commands/dlq.js';
import type { StatusData } from '../../../src/commands/status.js';
import { type PrivateRedis, startPrivateRedis } from '../../../src/lib/redis-server.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../../helpers/celery-worker.js';
import { jsonOf, runCliInProcess, tempDir } from '../../helpers/cli-run.js';
import { celerySystem, writeConfigFile } from '../../helpers/config-file.js';

/**
 * Tasks in a retry loop (the runbook's `grep "Retry in" | sort | uniq -c`), seen by `status` and
 * `dlq` from the `retries` header of the messages a real Celery worker re-publishes with
 * `self.retry(countdown=1)`: how many, and which task names. A Redis of the test's own.
 */
let redis: PrivateRedis;
let worker: CeleryWorker;
let dir: { dir: string; remove(): void };
let config: string;

beforeAll(async () => {
  redis = await startPrivateRedis();
  worker = await startCeleryWorker({ brokerUrl: redis.url, queues: ['loops', 'calm'], name: 'loops' });
  await publishCelery({ brokerUrl: redis.url }, [
    ...[1, 2, 3].map(() => ({ task: 'tasks.retrying', args: [1], queue: 'loops' })),
    // A task that runs once and is done: never counted.
    { task: 'tasks.add', args: [1, 2], queue: 'calm', wait: true },
  ]);
  dir = tempDir('retry-loops');
  config = writeConfigFile(dir.dir, {
    store: `sqlite:${join(dir.dir, 'q.db')}`,
    systems: [celerySystem('zeus', redis.url, { queues: ['loops', 'calm'], inspectTimeoutMs: 1500 })],
  });
}, 90_000);

afterAll(async () => {
  await worker?.stop();
  await redis?.stop();
  dir?.remove();
});

describe('Celery retry loops in status and dlq', () => {
  it('status counts the queued tasks already retried, by task name, and says so in a line', async () => {
    let data: StatusData | undefined;
    await expect
      .poll(
        async () => {
          data = jsonOf(await runCliInProcess(['--config', config, '--json', 'status', 'zeus']))
            .data as unknown as StatusData;
          const loops = data.systems[0]?.retrying;
          return loops?.tasks[0]?.maxRetries ?? 0;
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBeGreaterThanOrEqual(2);
    const loops = data!.systems[0]!.retrying!;
    // The three tasks' messages are back in `unacked` (waiting for their countdown in the worker),
    // or one is on its way through the list: each is seen once.
    expect(loops.retrying).toBeGreaterThanOrEqual(2);
    expect(loops.retrying).toBeLessThanOrEqual(3);
    expect(loops.tasks.map((t) => t.name)).toEqual(['tasks.retrying']);
    expect(loops.complete).toBe(true);

    const text = await runCliInProcess(['--config', config, 'status', 'zeus']);
    expect(text.stdout).toMatch(
      /Retry loop: [23] tasks waiting to run again after a retry: tasks\.retrying ×[23] \(up to \d+ retries\)/,
    );
  }, 60_000);

  it('dlq of a queue in a retry loop shows the loop and its task', async () => {
    await expect
      .poll(
        async () => {
          const run = await runCliInProcess(['--config', config, '--json', 'dlq', 'zeus/loops']);
          return (jsonOf(run).data as unknown as DlqData).retrying?.tasks[0]?.name;
        },
        { timeout: 20_000, interval: 500 },
      )
      .toBe('tasks.retrying');
    const text = await runCliInProcess(['--config', config, 'dlq', 'zeus/loops']);
    expect(text.stdout).toContain('Retry loop:');
    expect(text.stdout).toContain('tasks.retrying ×');
  }, 60_000);

  it('dlq of a queue whose tasks do not retry shows no retry loop', async () => {
    const calm = jsonOf(await runCliInProcess(['--config', config, '--json', 'dlq', 'zeus/calm']))
      .data as unknown as DlqData;
    expect(calm.retrying).toMatchObject({ retrying: 0, tasks: [] });
  });

  it('stays bounded: big messages make a smaller sample, and the unacked entries of other queues are not walked for ever', async () => {
    // A database of its own on the same Redis, holding what a real worker published above.
    const client = new Redis(`${redis.url}/1`);
    try {
      const source = new Redis(redis.url);
      const [message] = await source.hvals('unacked');
      source.disconnect();
      expect(message).toBeDefined();
      const [envelope] = JSON.parse(message!) as [Record<string, unknown>, string, string];
      // 300 of the real envelope with a 20 KB body: 6 MB, three times the byte budget.
      const big = JSON.stringify({ ...envelope, body: 'A'.repeat(20_000) });
      await client.rpush('big', ...Array.from({ length: 300 }, () => big));
      const others = client.pipeline();
      for (let i = 0; i < 5_000; i++)
        others.hset('unacked', `tag-${i}`, JSON.stringify([envelope, '', 'elsewhere']));
      await others.exec();

      const read = async (queue: string) =>
        parseRetryLoops(
          await runScript(
            client,
            RETRY_LOOPS,
            ['big', 'unacked'],
            [String(RETRY_SAMPLE), queue, String(RETRY_SAMPLE_BYTES)],
          ),
        );
      const mine = await read('big');
      expect(mine.complete).toBe(false);
      expect(mine.sampled).toBeGreaterThan(50);
      expect(mine.sampled).toBeLessThan(300);
      expect(mine.retrying).toBe(mine.sampled);
      expect(mine.tasks[0]?.name).toBe('tasks.retrying');
      const all = await read('');
      expect(all.complete).toBe(false);
      expect(all.sampled).toBeLessThanOrEqual(RETRY_SAMPLE);
    } finally {
      await client.flushdb();
      client.disconnect();
    }
  });
});
