import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readResults } from '../../src/backends/celery/results.js';
import type { ResultsData } from '../../src/commands/results.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, celerySystem, writeConfigFile } from '../helpers/config-file.js';

/**
 * `results <system>`: the result keys a real Celery 5 worker stored, counted without KEYS, through
 * the real command line. A Redis of the test's own: it is filled with unrelated keys below.
 */
let redis: PrivateRedis;
let client: Redis;
let worker: CeleryWorker;
let dir: { dir: string; remove(): void };
let config: string;
let ids: string[];

beforeAll(async () => {
  redis = await startPrivateRedis();
  client = new Redis(redis.url);
  worker = await startCeleryWorker({ brokerUrl: redis.url, queues: ['celery'], name: 'results' });
  // One after another, so the first one's date_done is the oldest.
  ({ ids } = await publishCelery(
    { brokerUrl: redis.url },
    Array.from({ length: 12 }, (_, i) => ({ task: 'tasks.add', args: [i, 1], queue: 'celery', wait: true })),
  ));
  // An app with result_expires=None stores results that Redis never expires: three of them here.
  for (const id of ids.slice(-3)) await client.persist(`celery-task-meta-${id}`);
  dir = tempDir('results-verb');
  config = writeConfigFile(dir.dir, {
    store: `sqlite:${join(dir.dir, 'q.db')}`,
    systems: [celerySystem('zeus', redis.url, { queues: ['celery'] }), bullmqSystem('pushizo', redis.url)],
  });
}, 90_000);

afterAll(async () => {
  await worker?.stop();
  client?.disconnect();
  await redis?.stop();
  dir?.remove();
});

describe('/queue results <system>', () => {
  it('counts the results a Celery worker stored, those without a TTL, their memory and the oldest', async () => {
    const run = await runCliInProcess(['--config', config, '--json', 'results', 'zeus']);
    expect(run.code).toBe(0);
    const data = jsonOf(run).data as unknown as ResultsData;
    expect(data).toMatchObject({ system: 'zeus', count: 12, withoutTtl: 3, estimate: null });
    expect(data.bytes).toBeGreaterThan(12 * 100);
    expect(data.oldest?.id).toBe(ids[0]);
    expect(Date.parse(data.oldest!.at)).toBeLessThanOrEqual(Date.now());
    expect(data.sample).toMatchObject({ complete: true, stoppedBy: 'done' });

    const text = await runCliInProcess(['--config', config, 'results', 'zeus']);
    expect(text.stdout).toContain('12 results');
    expect(text.stdout).toContain('3 without a TTL (25%)');
    expect(text.stdout).toContain('result_expires');
    // The command to run names the system: no `<system>` left to fill in (issue 38 §6).
    expect(text.stdout).toContain('`/queue expire-results zeus` (the runbook’s');
    expect(text.stdout).not.toContain('<system>');
    // Results carry arguments and return values: never shown.
    expect(text.stdout + run.stdout).not.toMatch(/"result"|"args"|kwargs/);
  });

  it('says when the walk covered only part of the keyspace, and scales its counts', async () => {
    const filler = client.pipeline();
    for (let i = 0; i < 5_000; i++) filler.set(`filler:${i}`, 'x');
    await filler.exec();
    try {
      const reading = await readResults(client, { maxKeys: 1_000 });
      expect(reading.sample).toMatchObject({ complete: false, stoppedBy: 'keys' });
      expect(reading.sample.scanned).toBeLessThan(reading.sample.total);
      expect(reading.estimate).not.toBeNull();
      expect(reading.estimate!.count).toBeGreaterThanOrEqual(reading.count);
    } finally {
      const cleanup = client.pipeline();
      for (let i = 0; i < 5_000; i++) cleanup.del(`filler:${i}`);
      await cleanup.exec();
    }
  });

  it('reads the result backend the config names, not the broker', async () => {
    const elsewhere = tempDir('results-elsewhere');
    const separate = writeConfigFile(elsewhere.dir, {
      store: `sqlite:${join(elsewhere.dir, 'q.db')}`,
      systems: [celerySystem('zeus', redis.url, { resultBackend: `${redis.url}/3`, queues: ['celery'] })],
    });
    await client.select(3);
    await client.set(
      `celery-task-meta-elsewhere`,
      JSON.stringify({ status: 'SUCCESS', date_done: '2026-01-01T00:00:00' }),
    );
    await client.select(0);
    try {
      const data = jsonOf(await runCliInProcess(['--config', separate, '--json', 'results', 'zeus']))
        .data as unknown as ResultsData;
      expect(data).toMatchObject({
        count: 1,
        withoutTtl: 1,
        oldest: { id: 'elsewhere', at: '2026-01-01T00:00:00.000Z' },
      });
    } finally {
      elsewhere.remove();
    }
  });

  it('answers a BullMQ system, a missing system and an unknown one in one line', async () => {
    const bullmq = jsonOf(await runCliInProcess(['--config', config, '--json', 'results', 'pushizo']));
    expect(bullmq.error).toMatchObject({ code: 'NotSupported' });
    expect(bullmq.error!.message).toContain('only a Celery system has a result backend');
    const missing = await runCliInProcess(['--config', config, 'results']);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toContain('/queue results <system>');
    const unknown = jsonOf(await runCliInProcess(['--config', config, '--json', 'results', 'zues']));
    expect(unknown.error).toMatchObject({ code: 'UnknownSystem' });
    expect(unknown.error!.message).toContain('`zeus`');
  });
});
