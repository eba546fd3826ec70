import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countResultsWithoutTtl, expireResultsWithoutTtl } from '../../src/backends/celery/expire-results.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, celerySystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';

/**
 * `expire-results <system> [ttl]`: the runbook's EXPIRE loop over `celery-task-meta-*`, asked and
 * approved from the command line. A real Celery worker stores its results in a Redis of their own
 * (`resultBackend:`), as Zeus may; the count before and after is read by SCAN.
 */
let broker: PrivateRedis;
let backend: PrivateRedis;
let results: Redis;
let worker: CeleryWorker;
let tmp: ReturnType<typeof tempDir>;
let config: string;
let ids: string[];

const as = (user: string, ...words: string[]) =>
  runCliInProcess(['--config', config, '--user', user, '--json', ...words]);

/** Every `celery-task-meta-*` key of the result backend with its TTL in seconds, by SCAN. */
async function resultTtls(): Promise<Map<string, number>> {
  const ttls = new Map<string, number>();
  let cursor = '0';
  do {
    const [next, keys] = await results.scan(cursor, 'MATCH', 'celery-task-meta-*', 'COUNT', 1000);
    cursor = next;
    for (const key of keys) ttls.set(key, await results.ttl(key));
  } while (cursor !== '0');
  return ttls;
}

beforeAll(async () => {
  [broker, backend] = await Promise.all([startPrivateRedis(), startPrivateRedis()]);
  results = new Redis(backend.url);
  tmp = tempDir('expire-results');
  const target = { brokerUrl: broker.url, resultUrl: backend.url };
  worker = await startCeleryWorker({ ...target, queues: ['celery'], name: 'expire' });
  ({ ids } = await publishCelery(
    target,
    Array.from({ length: 12 }, (_, i) => ({ task: 'tasks.add', args: [i, i], queue: 'celery', wait: true })),
  ));
  // Eight stored as by an app with `result_expires=None`, one with a short TTL of its own; the rest
  // keep Celery's default day. A key that is not a result never gets one.
  for (const id of ids.slice(0, 8)) await results.persist(`celery-task-meta-${id}`);
  await results.expire(`celery-task-meta-${ids[8]}`, 500);
  await results.set('session:keep-me', 'x');
  config = writeConfigFile(tmp.dir, {
    store: `sqlite:${tmp.dir}/queue-ops.db`,
    roles: TEST_ROLES,
    approvals: { cliSameOsUser: 'allow' },
    policies: { 'expire-results': { role: 'operator', approvals: 1 } },
    systems: [
      celerySystem('zeus', broker.url, { resultBackend: backend.url, queues: ['celery'] }),
      bullmqSystem('pushizo', broker.url),
    ],
  });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  results?.disconnect();
  await Promise.all([broker?.stop(), backend?.stop()]);
  tmp?.remove();
});

describe('/queue expire-results <system> [ttl]', () => {
  it('previews the exact count without a TTL, and once approved gives only those the TTL, audited with the count', async () => {
    const before = await resultTtls();
    expect(before.size).toBe(12);
    expect([...before.values()].filter((ttl) => ttl === -1)).toHaveLength(8);

    const asked = await as('U0ALICE', 'expire-results', 'zeus', '2h');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending).toMatchObject({ action: 'expire-results', target: 'zeus', status: 'pending' });
    expect(pending.preview).toContain('8 of 12 Celery results have no TTL and get 2h');
    // Nothing runs before the approval.
    expect([...(await resultTtls()).values()].filter((ttl) => ttl === -1)).toHaveLength(8);

    const approved = await as('U0CAROL', 'approve', pending.id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    const done = requestOf(approved);
    expect(done.status).toBe('done');
    expect(done.result).toMatchObject({ system: 'zeus', expired: 8, results: 12, ttlSeconds: 7200 });
    expect(jsonOf(approved).message.text + JSON.stringify(jsonOf(approved).message.blocks)).toContain(
      '8 Celery results of zeus given a TTL of 2h',
    );

    const after = await resultTtls();
    expect(after.size).toBe(12);
    for (const id of ids.slice(0, 8)) {
      const ttl = after.get(`celery-task-meta-${id}`)!;
      expect(ttl).toBeGreaterThan(7000);
      expect(ttl).toBeLessThanOrEqual(7200);
    }
    // A key that had a TTL keeps its own; Celery's day stays a day; other keys are not results.
    expect(after.get(`celery-task-meta-${ids[8]}`)).toBeLessThanOrEqual(500);
    for (const id of ids.slice(9)) expect(after.get(`celery-task-meta-${id}`)).toBeGreaterThan(80_000);
    expect(await results.ttl('session:keep-me')).toBe(-1);

    const exported = await runCliInProcess(['--config', config, 'audit', 'export']);
    const entry = exported.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { action: string; outcome: string; params: Record<string, unknown> })
      .find((e) => e.action === 'action.expire-results');
    expect(entry).toMatchObject({ outcome: 'done', params: { result: { expired: 8, ttlSeconds: 7200 } } });

    // Asked again: nothing left without a TTL, so nothing to approve.
    const again = await as('U0ALICE', 'expire-results', 'zeus');
    expect(again.code).not.toBe(0);
    expect(jsonOf(again).error?.message).toContain('already expiring (every result has a TTL)');
  }, 60_000);

  it('defaults to a day, and answers bad words, a TTL out of bounds and a BullMQ system in one line', async () => {
    await results.persist(`celery-task-meta-${ids[0]}`);
    const asked = await as('U0ALICE', 'expire-results', 'zeus');
    expect(requestOf(asked).preview).toContain('1 of 12 Celery results have no TTL and get 1d');

    const short = await as('U0ALICE', 'expire-results', 'zeus', '5s');
    expect(jsonOf(short).error).toMatchObject({ code: 'BadArgument' });
    expect(jsonOf(short).error?.message).toContain('`5s` is not a TTL');
    expect(jsonOf(short).error?.message).toContain('1m to 365d');
    const words = await as('U0ALICE', 'expire-results');
    expect(jsonOf(words).error).toMatchObject({ code: 'UsageError' });
    expect(jsonOf(words).error?.message).toContain('/queue expire-results <system> [ttl]');
    const bullmq = await as('U0ALICE', 'expire-results', 'pushizo');
    expect(jsonOf(bullmq).error).toMatchObject({ code: 'NotSupported' });
    for (const run of [short, words, bullmq]) expect(run.stdout + run.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('reports its progress batch by batch on a long run, and a preview cut by its budget says it is a lower bound', async () => {
    const filler = results.pipeline();
    for (let i = 0; i < 6_000; i++) filler.set(`celery-task-meta-bulk-${i}`, '{"status": "SUCCESS"}');
    await filler.exec();
    const cut = await countResultsWithoutTtl(results, { maxMillis: 0 });
    expect(cut.complete).toBe(false);
    const exact = await countResultsWithoutTtl(results);
    expect(exact).toMatchObject({ complete: true, withoutTtl: 6_001 });

    const told: { done: number; total: number; expired: number }[] = [];
    const outcome = await expireResultsWithoutTtl(results, 600, (done, total, expired) =>
      told.push({ done, total, expired }),
    );
    expect(outcome).toMatchObject({ expired: 6_001, ttlSeconds: 600 });
    expect(told.length).toBeGreaterThanOrEqual(6);
    for (let i = 1; i < told.length; i++) {
      expect(told[i]!.done).toBeGreaterThanOrEqual(told[i - 1]!.done);
      expect(told[i]!.expired).toBeGreaterThanOrEqual(told[i - 1]!.expired);
    }
    expect(told.at(-1)!.expired).toBe(6_001);
    expect((await countResultsWithoutTtl(results)).withoutTtl).toBe(0);
  });
});
