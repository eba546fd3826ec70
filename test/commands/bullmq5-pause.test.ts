import { randomBytes } from 'node:crypto';
import { Queue as Queue5, Worker as Worker5 } from 'bullmq5';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectionFor, deletePrefix, waitFor } from '../helpers/bullmq-jobs.js';
import { jsonOf, requestOf, runCli, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

describe('pause and resume of a BullMQ 5.x queue from the command line', () => {
  const redisUrl = testRedisUrl();
  const queueName = 'events';
  const target = `legacy/${queueName}`;
  let prefix: string;
  let queue: Queue5;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;

  const as = (user: string, ...words: string[]) =>
    runCli(['--config', config, '--user', user, '--json', ...words]);

  beforeEach(async () => {
    prefix = `qa5${randomBytes(5).toString('hex')}`;
    queue = new Queue5(queueName, { connection: connectionFor(redisUrl), prefix });
    await queue.addBulk([1, 2, 3, 4].map((n) => ({ name: 'event.ingest', data: { n } })));
    tmp = tempDir('bullmq5');
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: TEST_ROLES,
      policies: { pause: { role: 'operator', approvals: 0 }, resume: { role: 'operator', approvals: 0 } },
      systems: [bullmqSystem('legacy', redisUrl, prefix)],
    });
  });

  afterEach(async () => {
    await queue?.close();
    await deletePrefix(redisUrl, prefix);
    tmp?.remove();
  });

  it("pause and resume go through BullMQ 5's own layout: its isPaused() agrees, and a 5.x worker only runs the jobs after resume", async () => {
    expect(await queue.isPaused()).toBe(false);
    const paused = await as('U0ALICE', 'pause', target);
    expect(paused.code, paused.stdout + paused.stderr).toBe(0);
    expect(requestOf(paused)).toMatchObject({ status: 'done', result: { queue: queueName, isPaused: true } });
    expect(await queue.isPaused()).toBe(true);
    // 5.x keeps the waiting jobs of a paused queue in its `paused` list; they must all be there
    expect(await queue.getJobCounts('wait', 'paused')).toMatchObject({ paused: 4, wait: 0 });
    const status = jsonOf(await as('U0DAVE', 'status', target)).data as {
      systems: { queues: { name: string; waiting: number; isPaused: boolean }[] }[];
    };
    expect(status.systems[0]!.queues.find((q) => q.name === queueName)).toMatchObject({
      waiting: 4,
      isPaused: true,
    });

    const ran: number[] = [];
    const worker = new Worker5(
      queueName,
      async (job) => {
        ran.push(job.data.n as number);
      },
      { connection: connectionFor(redisUrl), prefix },
    );
    try {
      await worker.waitUntilReady();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(ran).toEqual([]);

      const resumed = await as('U0CAROL', 'resume', target);
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(requestOf(resumed)).toMatchObject({ status: 'done', result: { isPaused: false } });
      expect(await queue.isPaused()).toBe(false);
      await waitFor('the 5.x worker to run all four jobs', async () => ran.length === 4);
      expect(ran.sort()).toEqual([1, 2, 3, 4]);
    } finally {
      await worker.close();
    }
  }, 120_000);
});
