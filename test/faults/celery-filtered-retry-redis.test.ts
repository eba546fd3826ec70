import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { celerySystem, writeConfigFile } from '../helpers/config-file.js';
import { type LatencyProxy, startLatencyProxy } from '../helpers/latency-proxy.js';
import { auditEntries, expectOneLineNaming, FaultyRedis } from './fault-fixture.js';

/** 800 failures the filter matches, 200 it does not: the retry takes the 800 in four batches. */
const MATCHING = 800;
const OTHERS = 200;
const BATCH = 250;
const idOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * Issue 34 §6: a Celery retry with `--error`, whose Redis (a real redis-server, persistent) is
 * killed by SIGKILL at its second batch and started again. Nothing is lost, nothing is sent
 * twice, nothing the filter did not match is sent, and the approver gets one clear line.
 */
describe('a filtered Celery retry whose Redis dies midway', () => {
  let redis: FaultyRedis;
  let client: Redis;
  let proxy: LatencyProxy;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  const as = (user: string, ...words: string[]): Promise<CliRun> =>
    runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

  /** The failed task's number each message in the queue sends again. */
  const sentNumbers = async () =>
    (await client.lrange('celery', 0, -1)).map((m) => {
      const body = JSON.parse(Buffer.from((JSON.parse(m) as { body: string }).body, 'base64').toString()) as [
        number[],
      ];
      return body[0][0]!;
    });

  beforeAll(async () => {
    redis = await FaultyRedis.start();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    proxy = await startLatencyProxy({ host: '127.0.0.1', port: Number(new URL(redis.url).port) }, 100);
    tmp = tempDir('fault-filtered-retry');
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: { operator: ['U0ALICE', 'U0CAROL'] },
      policies: { retry: { role: 'operator', approvals: 1 } },
      approvals: { cliSameOsUser: 'allow' },
      systems: [
        celerySystem('zeus', `redis://127.0.0.1:${proxy.port}/0`, {
          queues: ['celery'],
          inspectTimeoutMs: 200,
        }),
      ],
    });
    await client.sadd('_kombu.binding.celery', 'celery\x06\x16\x06\x16celery');
    const seed = client.pipeline();
    for (let n = 1; n <= MATCHING + OTHERS; n++) {
      const matching = n <= MATCHING;
      // What Celery's Redis result backend stores for a failed task with result_extended.
      seed.set(
        `celery-task-meta-${idOf(n)}`,
        JSON.stringify({
          status: 'FAILURE',
          result: {
            exc_type: matching ? 'ConnectionError' : 'ValueError',
            exc_message: [matching ? `gateway down (node ${n % 7})` : 'bad payload'],
            exc_module: 'builtins',
          },
          traceback: 'Traceback (most recent call last): …',
          children: [],
          date_done: new Date(Date.now() - 60_000 + n).toISOString().replace('Z', ''),
          task_id: idOf(n),
          name: 'tasks.add',
          args: [n, 1],
          kwargs: {},
          worker: 'w1@lab',
          retries: 0,
          queue: 'celery',
        }),
      );
    }
    await seed.exec();
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    await proxy?.close();
    await redis?.stop();
    tmp?.remove();
  });

  it('tells the approver in one line how far it got; afterwards every matching task was sent once, and no other', async () => {
    const asked = requestOf(await as('U0ALICE', 'retry', 'zeus/celery', 'all', '--error', 'gateway down'));
    expect(asked.preview).toContain('800 failed jobs of 1,000');
    expect(asked.preview).toContain('800× ConnectionError: gateway down (node <n>)');

    // SIGKILL as MONITOR shows the second batch's first LPUSH.
    const admin = new Redis(redis.url);
    admin.on('error', () => {});
    const monitor = await admin.monitor();
    monitor.on('error', () => {});
    let seen = 0;
    const killed = new Promise<void>((done) => {
      monitor.on('monitor', (_time: string, args: string[]) => {
        if (!/^lpush celery /i.test(args.join(' ')) || ++seen < BATCH + 1) return;
        monitor.removeAllListeners('monitor');
        void redis.kill().then(done);
      });
    });
    const approved = await as('U0CAROL', 'approve', asked.id);
    await killed;
    admin.disconnect();
    expect(approved.code, approved.stdout).toBe(1);
    expect(jsonOf(approved).error?.code).toBe('RetryInterrupted');
    const told = expectOneLineNaming(approved, 'zeus');
    expect(told).toMatch(/at least (250|500|750) of 800 jobs were done before, the rest are still failed/);
    await redis.restart();

    // Whole batches only: a batch's messages and the marks of its failures are one transaction.
    const first = await sentNumbers();
    expect(first.length % BATCH).toBe(0);
    expect(first.length).toBeLessThan(MATCHING);

    const again = requestOf(await as('U0ALICE', 'retry', 'zeus/celery', 'all', '--error', 'gateway down'));
    expect(again.preview).toContain(
      `${MATCHING - first.length} failed jobs of ${MATCHING + OTHERS - first.length}`,
    );
    const done = await as('U0CAROL', 'approve', again.id);
    expect(done.code, done.stdout).toBe(0);
    expect(requestOf(done).result).toMatchObject({ retried: MATCHING - first.length, newSincePreview: 0 });

    const sent = await sentNumbers();
    expect(sent).toHaveLength(MATCHING);
    expect(new Set(sent).size).toBe(MATCHING);
    expect(sent.every((n) => n <= MATCHING)).toBe(true);
    const audit = (await auditEntries(config)).filter((e) => e.action === 'action.retry');
    expect(audit.map((e) => [e.outcome, e.error ?? null])).toEqual([
      ['failed', 'RetryInterrupted'],
      ['done', null],
    ]);
  }, 180_000);
});
