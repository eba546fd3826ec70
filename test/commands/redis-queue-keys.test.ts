import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisHealthData } from '../../src/commands/redis.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { publishCelery } from '../helpers/celery-worker.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { celerySystem, writeConfigFile } from '../helpers/config-file.js';

/**
 * issue 38 §4: `redis <system>` in a memory incident. A broker of ~100k small keys, a 180 kB
 * sorted set, and a real Celery queue of a few MB (real messages, published by Celery's own
 * client, then copied to grow the list as a backlog does) with a priority sub-list. The sample of
 * 10,000 keys used to list the sorted set first and miss the queue; every known queue key is now
 * measured on every call.
 */
let redis: PrivateRedis;
let client: Redis;
let dir: { dir: string; remove(): void };
let config: string;
let trConfig: string;
const BIG = 'measurement_processing';
const SMALL_QUEUE = 'alarm_processing';

beforeAll(async () => {
  redis = await startPrivateRedis();
  client = new Redis(redis.url);
  dir = tempDir('redis-queue-keys');
  const system = celerySystem('zeus', redis.url, { queues: [BIG, SMALL_QUEUE] });
  config = writeConfigFile(dir.dir, { store: `sqlite:${join(dir.dir, 'q.db')}`, systems: [system] });
  trConfig = writeConfigFile(
    dir.dir,
    { store: `sqlite:${join(dir.dir, 'q.db')}`, locale: 'tr', systems: [system] },
    'tr.yml',
  );
  await publishCelery({ brokerUrl: redis.url }, [
    { task: 'tasks.boom', args: [`reading ${'x'.repeat(1000)}`], queue: BIG },
    { task: 'tasks.add', args: [3, 4], queue: BIG, priority: 6 },
    { task: 'tasks.add', args: [5, 6], queue: SMALL_QUEUE },
  ]);
  // The backlog: the real message, 2,500 times (about 5 MB).
  const message = (await client.lindex(BIG, 0)) as string;
  expect(message).toContain('"task": "tasks.boom"');
  for (let i = 0; i < 5; i++) await client.rpush(BIG, ...Array.from({ length: 500 }, () => message));
  // A sorted set of about 180 kB, and 100,000 small keys.
  await client.zadd(
    'stats:latency',
    ...Array.from({ length: 2_000 }, (_, i) => [i, `sample-${i}-${'y'.repeat(40)}`]).flat(),
  );
  for (let start = 0; start < 100_000; start += 10_000) {
    const pipeline = client.pipeline();
    for (let i = start; i < start + 10_000; i++) pipeline.set(`session:${i}`, 'v');
    await pipeline.exec();
  }
}, 120_000);

afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
  dir?.remove();
});

describe('redis <system> measures every known queue key', () => {
  it('lists the queue first whatever the sample saw, with queueKeys and explainedBytes in --json', async () => {
    const run = await runCliInProcess(['--config', config, '--json', 'redis', 'zeus']);
    expect(run.code, run.stderr).toBe(0);
    const data = jsonOf(run).data as unknown as RedisHealthData;
    expect(data.sample.complete).toBe(false);
    expect(data.bigKeys[0]).toMatchObject({ key: BIG, type: 'list', length: 2_501 });
    expect(data.bigKeys[0]!.bytes).toBeGreaterThan(3_000_000);
    // The priority sub-list and the other queue are measured too.
    const keys = data.bigKeys.map((k) => k.key);
    expect(keys).toContain(`${BIG}\x06\x166`);
    expect(keys).toContain(SMALL_QUEUE);
    const sizes = data.bigKeys.map((k) => k.bytes);
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    const big = data.queueKeys.find((q) => q.queue === BIG);
    expect(big).toMatchObject({ queue: BIG, keys: 2 });
    expect(big!.bytes).toBeGreaterThan(data.bigKeys[0]!.bytes);
    expect(data.queueKeys.find((q) => q.queue === SMALL_QUEUE)).toMatchObject({ keys: 1 });
    expect(data.explainedBytes).toBe(sizes.reduce((a, b) => a + b, 0));
    expect(data.explainedBytes).toBeLessThanOrEqual(data.memory.used * 1.1);
    // Never a value.
    expect(run.stdout).not.toContain('xxxxxxxx');
  }, 60_000);

  it('says what share of used memory the listed keys explain, in English and Turkish', async () => {
    const json = jsonOf(await runCliInProcess(['--config', config, '--json', 'redis', 'zeus']));
    const data = json.data as unknown as RedisHealthData;
    const percent = Math.min(100, Math.round((data.explainedBytes / data.memory.used) * 100));
    // Each run samples anew: on a loaded machine its budget may stop at another key and Redis'
    // own figure moves, so the share is the JSON's to within a few points, in both languages.
    const near = (text: string, pattern: RegExp) => {
      const share = pattern.exec(text);
      expect(share, text).not.toBeNull();
      expect(Math.abs(Number(share![1]) - percent)).toBeLessThanOrEqual(3);
    };
    const en = await runCliInProcess(['--config', config, 'redis', 'zeus']);
    expect(en.stdout).toContain('all 3 keys of the 2 queues, and a sample');
    near(en.stdout, /The \d+ keys above hold [\d.,]+ [kMG]?B: (\d+)% of the [\d.,]+ [kMG]?B in use\./);
    const tr = await runCliInProcess(['--config', trConfig, 'redis', 'zeus']);
    expect(tr.stdout).toContain('2 kuyruğun 3 anahtarının tümü ve örneklem');
    near(tr.stdout, /kullanılan [\d.,]+ [kMG]?B belleğin %(\d+) kadarı\./);
  }, 60_000);
});
