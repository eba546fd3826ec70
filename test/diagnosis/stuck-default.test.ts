import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StuckData } from '../../src/commands/stuck.js';
import { connectionFor, randomName, waitFor } from '../commands/fixture.js';
import { deletePrefix } from '../helpers/bullmq-jobs.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/** `diagnosis.stuckAfterMinutes` is `stuck`'s default too (issue 36 §6). */
const url = testRedisUrl();
const prefix = randomName('qo');
let dir: { dir: string; remove(): void };
let queue: Queue;
let worker: Worker;
let release: () => void;

beforeAll(async () => {
  dir = tempDir('stuck-default');
  queue = new Queue('maintenance', { connection: connectionFor(url), prefix });
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  worker = new Worker('maintenance', () => gate, { connection: connectionFor(url), prefix, concurrency: 1 });
  await queue.add('rollup', {});
  await waitFor('the rollup running', async () => (await queue.getActiveCount()) === 1);
}, 30_000);

afterAll(async () => {
  release?.();
  await worker?.close();
  await queue?.close();
  await deletePrefix(url, prefix);
  dir?.remove();
});

async function stuck(stuckAfterMinutes?: number): Promise<StuckData> {
  const config = writeConfigFile(
    dir.dir,
    {
      store: `sqlite:${join(dir.dir, 'q.db')}`,
      ...(stuckAfterMinutes === undefined ? {} : { diagnosis: { stuckAfterMinutes } }),
      systems: [bullmqSystem('pushizo', url, prefix)],
    },
    `q-${stuckAfterMinutes ?? 'default'}.yml`,
  );
  const run = await runCliInProcess(['--config', config, '--json', 'stuck', 'pushizo']);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  return jsonOf(run).data as unknown as StuckData;
}

describe('stuck follows diagnosis.stuckAfterMinutes', () => {
  it('30 minutes by default: a job running for a second is not stuck', async () => {
    const data = await stuck();
    expect(data.minutes).toBe(30);
    expect(data.work).toEqual([]);
  });

  it('the configured minutes when set', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const data = await stuck(0.02);
    expect(data.minutes).toBe(0.02);
    expect(data.work.map((w) => w.name)).toEqual(['rollup']);
  });
});
