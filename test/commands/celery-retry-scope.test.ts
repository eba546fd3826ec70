import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { waitFor } from '../helpers/bullmq-jobs.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { celerySystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';

const QUEUE = 'celery:notification_sending';
const TARGET = `zeus/${QUEUE}`;

/**
 * Issue 34 §1 on Celery, with a real worker: the approval retries the failures its preview showed
 * and no others; the ones that arrived meanwhile are counted as `newSincePreview`, and left.
 */
describe('a Celery retry of all runs the previewed failures only', () => {
  let server: PrivateRedis;
  let redis: Redis;
  let worker: CeleryWorker | undefined;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;

  const as = (user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

  const failures = async () => (jsonOf(await as('U0ALICE', 'dlq', TARGET)).data as { total: number }).total;

  /** Publishes failing tasks with Celery's own client; resolves once the result backend holds them all. */
  async function fail(tasks: { task: string; msg: string }[], expected: number) {
    await publishCelery(
      { brokerUrl: server.url },
      tasks.map((t) => ({ task: t.task, args: [t.msg], queue: QUEUE })),
    );
    await waitFor(`${expected} failures`, async () => (await failures()) === expected, 90_000);
  }

  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.url);
    tmp = tempDir('celery-retry-scope');
    worker = await startCeleryWorker({ brokerUrl: server.url, queues: [QUEUE], name: 'zeus-scope' });
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: TEST_ROLES,
      approvals: { cliSameOsUser: 'allow' },
      policies: { retry: { role: 'operator', approvals: 1 } },
      systems: [celerySystem('zeus', server.url, { queues: [QUEUE], inspectTimeoutMs: 3000 })],
    });
  }, 120_000);

  afterAll(async () => {
    await worker?.stop();
    redis?.disconnect();
    await server?.stop();
    tmp?.remove();
  });

  it('previews 25, 340 failures arrive before the approval, and the approval sends exactly the 25 again; 340 are reported left', async () => {
    await fail(
      [
        ...Array.from({ length: 20 }, () => ({ task: 'tasks.boom', msg: 'timeout' })),
        ...Array.from({ length: 5 }, (_, i) => ({ task: 'tasks.send', msg: `db timeout after ${30 + i}s` })),
      ],
      25,
    );
    const asked = await as('U0ALICE', 'retry', TARGET, 'all');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending.preview).toContain(`retry ${TARGET}: 25 failed jobs`);
    // One group for the five "db timeout after Ns", with a real example.
    expect(pending.preview).toContain(
      '5× ConnectionError: db timeout after <n>s (e.g. ConnectionError: db timeout after',
    );
    expect(pending.preview).toContain('This is exactly what will run: these 25 jobs');
    const previewed = new Set(
      (await redis.keys('celery-task-meta-*')).map((key) => key.slice('celery-task-meta-'.length)),
    );
    expect(previewed.size).toBe(25);

    await fail(
      [
        ...Array.from({ length: 40 }, () => ({ task: 'tasks.boom', msg: 'timeout' })),
        ...Array.from({ length: 300 }, () => ({ task: 'tasks.send', msg: 'network timeout' })),
      ],
      365,
    );
    // Nobody takes what the retry sends: the queue shows exactly what it sent.
    await worker!.stop();
    worker = undefined;

    const approved = await as('U0CAROL', 'approve', pending.id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    const done = requestOf(approved);
    expect(done.result).toMatchObject({ retried: 25, skipped: 0, newSincePreview: 340 });
    expect(new Set(Object.keys(done.result!.ids as Record<string, string>))).toEqual(previewed);
    expect(JSON.stringify(jsonOf(approved).message)).toContain(
      '340 matching failures arrived after the preview and were left',
    );
    expect(await redis.llen(QUEUE)).toBe(25);
    expect(await failures()).toBe(340);

    // Issue 38 §3: a filter that matches none of the 340 says so, and names the groups there.
    const none = await as('U0ALICE', 'retry', TARGET, 'all', '--error', 'nomatchzzz');
    expect(jsonOf(none).error).toEqual({
      code: 'NothingToRetry',
      message:
        'None of the 340 failed jobs of `zeus/celery:notification_sending` matches --error nomatchzzz; nothing was changed. ' +
        'Error groups there: 300× ConnectionError: network timeout; 40× ValueError: timeout (`/queue dlq zeus/celery:notification_sending`).',
    });
  }, 240_000);
});
