import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawJsonMembers } from '../../src/backends/celery/envelope.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { waitFor } from '../helpers/bullmq-jobs.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { jsonOf, requestOf, runCli, tempDir } from '../helpers/cli-run.js';
import { celerySystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';

// A Redis of its own: no DB number to share with other files, and its pub/sub is only ours.
const QUEUE = 'celery:notification_sending';
const LEGACY = 'celery:legacy';
const TARGET = `zeus/${QUEUE}`;
const SECRET = 'device-token-never-shown';

describe('retry of failed Celery tasks from the command line, with real workers', () => {
  let server: PrivateRedis;
  let redis: Redis;
  let extended: CeleryWorker;
  let legacy: CeleryWorker;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;

  const as = (user: string, ...words: string[]) =>
    runCli(['--config', config, '--user', user, '--json', ...words], { timeoutMs: 60_000 });
  const meta = async (id: string) => {
    const raw = await redis.get(`celery-task-meta-${id}`);
    return raw === null ? null : (JSON.parse(raw) as Record<string, unknown>);
  };

  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.url);
    tmp = tempDir('celery-retry');
    [extended, legacy] = await Promise.all([
      startCeleryWorker({ brokerUrl: server.url, queues: [QUEUE], name: 'zeus-notify' }),
      startCeleryWorker({
        brokerUrl: server.url,
        queues: [LEGACY],
        name: 'zeus-legacy',
        resultExtended: false,
      }),
    ]);
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      roles: TEST_ROLES,
      approvals: { cliSameOsUser: 'allow' },
      policies: { retry: { role: 'operator', approvals: 1 } },
      systems: [celerySystem('zeus', server.url, { queues: [QUEUE, LEGACY], inspectTimeoutMs: 3000 })],
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([extended?.stop(), legacy?.stop()]);
    redis?.disconnect();
    await server?.stop();
    tmp?.remove();
  });

  it('re-publishes each failure as a new task on its queue, the worker runs it with the same arguments, and the trail maps old → new ids', async () => {
    const markers = [1, 2, 3].map((n) => join(tmp.dir, `flaky-${n}`));
    const payload = { ratio: 1.5, name: 'çağrı', token: SECRET };
    const published = await publishCelery({ brokerUrl: server.url }, [
      ...markers.map((marker) => ({
        task: 'tasks.flaky',
        args: [marker, payload],
        queue: QUEUE,
        wait: true,
      })),
      { task: 'tasks.boom', args: ['bad <b>input</b>'], queue: QUEUE, wait: true },
    ]);
    const oldIds = published.ids;
    for (const id of oldIds) expect((await meta(id))?.status).toBe('FAILURE');
    expect(markers.every((m) => existsSync(m))).toBe(true);

    const asked = await as('U0ALICE', 'retry', TARGET, 'all');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending).toMatchObject({
      action: 'retry',
      target: TARGET,
      status: 'pending',
      requiredApprovals: 1,
    });
    expect(pending.preview).toContain('4 failed jobs');
    expect(pending.preview).toContain('3× ConnectionError: upstream refused the first try');
    expect(pending.preview).toContain('1× ValueError: bad <b>input</b>');
    expect(asked.stdout).not.toContain(SECRET);
    // the error text is shown (escaped in the blocks), arguments never
    expect(JSON.stringify(jsonOf(asked).message.blocks)).toContain('bad &lt;b&gt;input&lt;/b&gt;');

    const approved = await as('U0CAROL', 'approve', pending.id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    const done = requestOf(approved);
    expect(done.status).toBe('done');
    const result = done.result as { retried: number; skipped: number; ids: Record<string, string> };
    expect(result.retried).toBe(4);
    expect(result.skipped).toBe(0);
    expect(Object.keys(result.ids).sort()).toEqual([...oldIds].sort());
    const newIds = Object.values(result.ids);
    expect(new Set(newIds).size).toBe(4);
    for (const id of newIds) expect(oldIds).not.toContain(id);
    expect(jsonOf(approved).message.text).toBeTruthy();

    // the real worker runs the new tasks: the flaky ones now succeed with the payload as sent
    await waitFor('the worker to run the four new tasks', async () => {
      const states = await Promise.all(newIds.map(async (id) => (await meta(id))?.status));
      return states.every((s) => s === 'SUCCESS' || s === 'FAILURE');
    });
    for (const [oldId, newId] of Object.entries(result.ids)) {
      const fresh = (await meta(newId))!;
      const index = oldIds.indexOf(oldId);
      if (index < 3) {
        expect(fresh).toMatchObject({ status: 'SUCCESS', name: 'tasks.flaky', queue: QUEUE });
        // the arguments arrived as the very text the first run stored
        const sent = rawJsonMembers((await redis.get(`celery-task-meta-${oldId}`))!)!.get('args');
        expect(rawJsonMembers((await redis.get(`celery-task-meta-${newId}`))!)!.get('args')).toBe(sent);
        expect(fresh.result).toEqual(payload);
      } else {
        expect(fresh).toMatchObject({ status: 'FAILURE', name: 'tasks.boom', queue: QUEUE });
      }
      // the old failure stays readable, marked with the id it was retried as
      expect(await meta(oldId)).toMatchObject({ status: 'FAILURE', queue_ops_retried_as: newId });
    }

    // the audit entry of the action records old → new
    const exported = await runCli(['--config', config, 'audit', 'export']);
    const entries = exported.stdout
      .split('\n')
      .filter(Boolean)
      .map(
        (line) => JSON.parse(line) as { action: string; outcome: string; params: Record<string, unknown> },
      );
    const action = entries.find((e) => e.action === 'action.retry');
    expect(action).toMatchObject({ outcome: 'done', params: { result: { ids: result.ids } } });

    // the retried failures left the dead letters: only the boom task's new failure is there
    const dlq = jsonOf(await as('U0DAVE', 'dlq', TARGET)).data as { total: number; jobs: { id: string }[] };
    expect(dlq.total).toBe(1);
    expect(dlq.jobs.map((j) => j.id)).toEqual([result.ids[oldIds[3]!]]);
    // and retrying everything again sends nothing twice
    const again = await as('U0ALICE', 'retry', TARGET, 'all', '10');
    expect(requestOf(again).preview).toContain('1 failed job');
  }, 120_000);

  it('names what is valid for an unknown task id or a limit out of range, in one line', async () => {
    const unknown = await as('U0ALICE', 'retry', TARGET, '0b5e4c1e-0000-4000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(jsonOf(unknown).error).toEqual({
      code: 'UnknownJob',
      message: `\`${TARGET}\` has no failed job \`0b5e4c1e-0000-4000-8000-000000000000\`. Valid: the id of one of its failed jobs (\`/queue dlq ${TARGET}\`), or \`all\`.`,
    });
    const limit = await as('U0ALICE', 'retry', TARGET, 'all', '5000');
    expect(limit.code).toBe(2);
    expect(jsonOf(limit).error?.message).toBe(
      '`5000` is not a valid limit. Valid: a whole number from 1 to 1000.',
    );
  }, 60_000);

  it('without result_extended says exactly that, for all and for one id, and changes nothing', async () => {
    const { ids } = await publishCelery({ brokerUrl: server.url }, [
      { task: 'tasks.boom', args: ['legacy failure'], queue: LEGACY, wait: true },
    ]);
    const stored = (await meta(ids[0]!))!;
    expect(stored.status).toBe('FAILURE');
    expect(stored.name ?? null).toBeNull();

    const all = await as('U0ALICE', 'retry', `zeus/${LEGACY}`, 'all');
    expect(all.code).toBe(1);
    expect(jsonOf(all).error).toEqual({
      code: 'NeedsResultExtended',
      message:
        '`zeus/celery:legacy` cannot be retried: 1 stored failure of `zeus` has no task name, arguments or queue. Celery stores them only when the app sets `result_extended=True`.',
    });
    const one = await as('U0ALICE', 'retry', `zeus/${LEGACY}`, ids[0]!);
    expect(one.code).toBe(1);
    expect(jsonOf(one).error?.message).toBe(
      `\`zeus/celery:legacy\` cannot retry task \`${ids[0]}\`: its stored failure has no task name, arguments or queue. Celery stores them only when the app sets \`result_extended=True\`.`,
    );
    expect(await meta(ids[0]!)).toEqual(stored);
    expect(await redis.llen(LEGACY)).toBe(0);
  }, 60_000);
});
