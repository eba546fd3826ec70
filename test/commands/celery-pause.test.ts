import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CeleryWorker, publishCelery, redisDbUrl, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, requestOf, runCli, tempDir } from '../helpers/cli-run.js';
import { celerySystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

// This file owns DB 14 of the test Redis (broker and results): it is flushed here and nowhere else.
// Pub/sub channels carry the DB number, so no other file's worker answers these broadcasts.
const DB = 14;
const QUEUE = 'celery:alarm_processing';
const TARGET = `zeus/${QUEUE}`;
/** Long enough for a consuming worker (prefetch 1, concurrency 1) to have run `tasks.add` many times. */
const QUIET_MS = 2500;

describe('pause and resume of a Celery queue from the command line, with a real worker', () => {
  const brokerUrl = redisDbUrl(testRedisUrl(), DB);
  let redis: Redis;
  let worker: CeleryWorker;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;

  const as = (user: string, ...words: string[]) =>
    runCli(['--config', config, '--user', user, '--json', ...words]);
  const queueStatus = async () => {
    const run = await as('U0DAVE', 'status', TARGET);
    expect(run.code, run.stderr).toBe(0);
    const data = jsonOf(run).data as {
      systems: { queues: { name: string; waiting: number; isPaused: boolean }[] }[];
    };
    return data.systems[0]!.queues.find((q) => q.name === QUEUE)!;
  };
  const resultOf = (id: string) => redis.get(`celery-task-meta-${id}`);

  beforeAll(async () => {
    redis = new Redis(brokerUrl);
    await redis.flushdb();
    worker = await startCeleryWorker({ brokerUrl, queues: [QUEUE], name: 'zeus-alarms' });
    tmp = tempDir('celery');
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: TEST_ROLES,
      policies: { pause: { role: 'operator', approvals: 0 }, resume: { role: 'operator', approvals: 0 } },
      systems: [
        celerySystem('zeus', brokerUrl, {
          resultBackend: brokerUrl,
          queues: [QUEUE],
          inspectTimeoutMs: 3000,
        }),
      ],
    });
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    await redis?.flushdb();
    redis?.disconnect();
    tmp?.remove();
  });

  // One scenario, in order: each step starts from the state the one before left.
  let during: { ids: string[] };

  it('pause answers done, naming the worker that answered', async () => {
    // the worker consumes the queue: a task runs
    const before = await publishCelery({ brokerUrl }, [
      { task: 'tasks.add', args: [1, 1], queue: QUEUE, wait: true },
    ]);
    expect(JSON.parse((await resultOf(before.ids[0]!))!)).toMatchObject({ status: 'SUCCESS', result: 2 });
    expect(await queueStatus()).toMatchObject({ waiting: 0, isPaused: false });

    const paused = await as('U0ALICE', 'pause', TARGET);
    expect(paused.code, paused.stdout + paused.stderr).toBe(0);
    const request = requestOf(paused);
    expect(request).toMatchObject({
      action: 'pause',
      target: TARGET,
      status: 'done',
      requestedBy: 'U0ALICE',
    });
    expect(request.result?.workersAnswered).toContain(worker.name);
    expect(jsonOf(paused).message.text).toBeTruthy();
    expect(JSON.stringify(jsonOf(paused).message.blocks)).toContain(worker.name);
    expect((await queueStatus()).isPaused).toBe(true);
  }, 60_000);

  it('tasks published while it is paused wait and do not run', async () => {
    during = await publishCelery({ brokerUrl }, [
      { task: 'tasks.add', args: [2, 3], queue: QUEUE },
      { task: 'tasks.add', args: [4, 5], queue: QUEUE },
    ]);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    expect(await queueStatus()).toMatchObject({ waiting: 2, isPaused: true });
    for (const id of during.ids) expect(await resultOf(id)).toBeNull();
  }, 60_000);

  it('resume answers done, naming the worker that answered', async () => {
    const resumed = await as('U0CAROL', 'resume', TARGET);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    const resume = requestOf(resumed);
    expect(resume).toMatchObject({ action: 'resume', status: 'done', result: { isPaused: false } });
    expect(resume.result?.workersAnswered).toContain(worker.name);
  }, 60_000);

  it('after resume the tasks that waited run', async () => {
    const until = Date.now() + 15_000;
    while ((await Promise.all(during.ids.map(resultOf))).some((r) => r === null)) {
      if (Date.now() > until) throw new Error(`the resumed worker never ran the tasks:\n${worker.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(JSON.parse((await resultOf(during.ids[1]!))!)).toMatchObject({ status: 'SUCCESS', result: 9 });
    expect(await queueStatus()).toMatchObject({ waiting: 0, isPaused: false });
  }, 60_000);

  it('the audit trail of the pause and the resume verifies', async () => {
    const verified = await runCli(['--config', config, '--json', 'audit', 'verify']);
    expect(verified.code).toBe(0);
  });
});
