import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { celerySystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';

const QUEUE = 'celery:notification_sending';
const TARGET = `zeus/${QUEUE}`;

describe('filters on Celery failures, for retry and for purge', () => {
  let server: PrivateRedis;
  let redis: Redis;
  let worker: CeleryWorker;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let sendIds: string[];

  const as = (user: string, ...words: string[]) =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.url);
    tmp = tempDir('celery-filters');
    worker = await startCeleryWorker({ brokerUrl: server.url, queues: [QUEUE], name: 'zeus-filters' });
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: { ...TEST_ROLES, admin: ['U0BOB', 'U0ERIN'] },
      approvals: { cliSameOsUser: 'allow' },
      policies: { retry: { role: 'operator', approvals: 1 } },
      archive: { dir: `${tmp.dir}/archive` },
      systems: [celerySystem('zeus', server.url, { queues: [QUEUE], inspectTimeoutMs: 3000 })],
    });
    const published = await publishCelery({ brokerUrl: server.url }, [
      ...[1, 2, 3].map((n) => ({ task: 'tasks.boom', args: [`bad payload ${n}`], queue: QUEUE, wait: true })),
      ...[1, 2].map(() => ({
        task: 'tasks.send',
        args: ['APNs refused the connection'],
        queue: QUEUE,
        wait: true,
      })),
    ]);
    sendIds = published.ids.slice(3);
  }, 120_000);

  afterAll(async () => {
    await worker?.stop();
    redis?.disconnect();
    await server?.stop();
    tmp?.remove();
  });

  it('counts what each filter matches among the stored failures, and the approved retry takes exactly those', async () => {
    const byName = await as('U0ALICE', 'retry', TARGET, 'all', '--name', 'tasks.boom');
    expect(byName.code, byName.stdout + byName.stderr).toBe(0);
    expect(requestOf(byName).preview).toContain(
      'Filter --name tasks.boom: 3 of 5 failures match; all 3 go; 2 not matching are left out.',
    );
    const byError = await as(
      'U0ALICE',
      'retry',
      TARGET,
      'all',
      '--error',
      'CONNECTIONERROR: apns refused',
      '--newer-than',
      '1h',
    );
    expect(requestOf(byError).preview).toContain(
      ': 2 of 5 failures match; all 2 go; 3 not matching are left out.',
    );
    // date_done is minutes old at most: nothing failed over an hour ago.
    const old = await as('U0ALICE', 'retry', TARGET, 'all', '--older-than', '1h');
    expect(jsonOf(old).error?.code).toBe('NothingToRetry');

    const approved = await as('U0CAROL', 'approve', requestOf(byError).id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    const result = requestOf(approved).result as { retried: number; ids: Record<string, string> };
    expect(result.retried).toBe(2);
    expect(Object.keys(result.ids).sort()).toEqual([...sendIds].sort());
    for (const id of sendIds)
      expect(JSON.parse((await redis.get(`celery-task-meta-${id}`))!)).toMatchObject({
        queue_ops_retried_as: result.ids[id],
      });
  }, 120_000);

  it('a purge of part of a state is refused in one line, and nothing is purged', async () => {
    // Every key there before is there after (the retry above may still be storing new results,
    // so the count alone could grow): nothing was purged.
    const before = await redis.keys('*');
    for (const words of [
      ['purge', TARGET, 'failed', '--keep', '1'],
      ['purge', TARGET, 'waiting', '--name', 'tasks.boom'],
      ['purge', TARGET, 'failed', '--error', 'ValueError'],
    ]) {
      const run = await as('U0BOB', ...words);
      expect(run.code, words.join(' ')).not.toBe(0);
      expect(jsonOf(run).error).toEqual({
        code: 'NotSupported',
        message:
          '`zeus` (celery) cannot purge part of a state (--error, --name, --older-than, --newer-than, --keep): its purge takes whole states; `retry … all` takes these filters.',
      });
    }
    const after = new Set(await redis.keys('*'));
    expect(before.filter((key) => !after.has(key))).toEqual([]);
  }, 60_000);
});
