import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { createEscalation } from '../../src/escalation/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { celerySystem } from '../helpers/config-file.js';
import {
  auditEntries,
  json,
  queueOps,
  requestOf,
  shown,
  tempDir,
  type WorkerGroupInput,
  writeConfig,
} from './helpers.js';

const QUEUE = 'celery:alarm_processing';
const env = { HOME: '/tmp', PATH: process.env.PATH };

/** A Celery system on `redisUrl` with one pool group; restart needs one approval by a second person. */
function zeusConfig(dir: string, redisUrl: string, pool: WorkerGroupInput): string {
  return writeConfig(dir, {
    approvals: { cliSameOsUser: 'allow' },
    policies: { restart: { role: 'operator', approvals: 1 } },
    systems: [celerySystem('zeus', redisUrl, { queues: [QUEUE], inspectTimeoutMs: 1500, workers: { pool } })],
  });
}

/** The worker's pool processes, as the operating system lists its children. */
const children = (pid: number) =>
  spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number)
    .sort();

describe('restart of a Celery pool against real workers', () => {
  let server: PrivateRedis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  const workers: CeleryWorker[] = [];
  const as = (user: string, ...words: string[]) =>
    queueOps(['--config', config, '--user', user, '--json', ...words], env);
  const start = async (name: string, poolRestarts: boolean) => {
    const worker = await startCeleryWorker({
      brokerUrl: server.url,
      queues: [QUEUE],
      name,
      concurrency: 2,
      poolRestarts,
    });
    workers.push(worker);
    return worker;
  };

  beforeAll(async () => {
    server = await startPrivateRedis();
    tmp = tempDir('restart-celery');
    config = zeusConfig(tmp.dir, server.url, {
      type: 'celery-pool',
      min: 1,
      max: 8,
      restartTimeoutSeconds: 40,
    });
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    tmp?.remove();
  });
  const stopWorkers = async () => {
    for (const worker of workers.splice(0)) await worker.stop();
  };

  describe('one worker started with pool restarts and one without, under a supervisor', () => {
    let a: CeleryWorker;
    let b: CeleryWorker;
    let poolBefore: number[];
    let asked: Awaited<ReturnType<typeof as>>;
    let approved: Awaited<ReturnType<typeof as>>;

    beforeAll(async () => {
      a = await start('zeus-a', true);
      b = await start('zeus-b', false);
      poolBefore = children(a.pid);
      asked = await as('U0ALICE', 'restart', 'zeus/pool');
    }, 60_000);
    afterAll(stopWorkers);

    it('asks for approval, previewing pool_restart for the worker that allows it and shutdown for the other', () => {
      expect(asked.code, asked.stdout + asked.stderr).toBe(0);
      const pending = requestOf(asked);
      expect(pending).toMatchObject({ action: 'restart', target: 'zeus/pool', status: 'pending' });
      expect(pending.preview).toBe(
        `restart zeus/pool (Celery pool): pool_restart of ${a.name} (their pool processes are replaced); ` +
          `shutdown of ${b.name}, started without worker_pool_restarts=True (CELERYD_POOL_RESTARTS in old-style configs), ` +
          'for their supervisor to start them again. Then waits up to 40 s for them to answer again.',
      );
    });

    it('sends nothing to the workers before the approval', () => {
      expect(poolBefore).toHaveLength(2);
      expect(children(a.pid)).toEqual(poolBefore);
    });

    it('on approval shuts down the worker without pool restarts, which counts as back once its supervisor starts it again', async () => {
      // The test is b's supervisor: when b exits, it is started again under its name.
      let again: Promise<CeleryWorker> | undefined;
      void b.exited.then(() => {
        again = start('zeus-b', false);
      });
      approved = await as('U0CAROL', 'approve', requestOf(asked).id);
      expect(approved.code, approved.stdout + approved.stderr).toBe(0);
      const done = requestOf(approved);
      expect(done.status).toBe('done');
      expect(done.result).toMatchObject({
        type: 'celery-pool',
        targets: [
          { name: a.name, method: 'pool_restart', answer: 'reload started', ok: true },
          { name: b.name, method: 'shutdown', reason: 'poolRestartsOff', answer: 'shutdown sent', ok: true },
        ],
        comeBack: { checked: true, before: [a.name, b.name], missing: [], notRestarted: [], complete: true },
      });
      expect((done.result!.comeBack as { back: string[] }).back.sort()).toEqual([a.name, b.name]);
      // b really exited (its process is gone).
      await b.exited;
      await again;
    }, 120_000);

    it('pool_restart replaces the pool processes of the worker that allows it', async () => {
      // Billiard replaces each pool process when it is next free: new pids appear under a's process.
      await expect
        .poll(() => children(a.pid).some((pid) => !poolBefore.includes(pid)), {
          timeout: 30_000,
          interval: 500,
        })
        .toBe(true);
    }, 60_000);

    it('the answer says how each worker was restarted and that all are back', () => {
      expect(shown(approved)).toMatch(
        new RegExp(
          `${a.name}: pool_restart \\(answered “reload started”\\); ${b.name}: shutdown sent\\. All back within \\d+ s \\(2 of 2\\)`,
        ),
      );
    });

    it('the audit trail has the restart with its plan and its result', async () => {
      const entry = (await auditEntries(config, env)).find((e) => e.action === 'action.restart')!;
      expect(entry.outcome).toBe('done');
      expect(entry.params).toMatchObject({
        planned: { targets: [{ method: 'pool_restart' }, { method: 'shutdown', reason: 'poolRestartsOff' }] },
        result: { comeBack: { complete: true } },
      });
    });
  });

  describe('a worker that changes between the preview and the approval', () => {
    afterEach(stopWorkers);

    it('a worker that restarted without pool restarts between the preview and the approval answers so, and the answer names the setting', async () => {
      const first = await start('zeus-c', true);
      const asked = await as('U0ALICE', 'restart', 'zeus/pool');
      const pending = requestOf(asked);
      expect(pending.preview).toContain(`pool_restart of ${first.name}`);
      await first.stop();
      const second = await start('zeus-c', false);
      const pool = children(second.pid);

      const approved = await as('U0CAROL', 'approve', pending.id);
      const done = requestOf(approved);
      expect(done.status).toBe('done');
      expect(done.result).toMatchObject({
        targets: [{ name: second.name, method: 'pool_restart', ok: false, poolRestartsOff: true }],
        comeBack: { before: [], complete: true },
      });
      expect(shown(approved)).toContain(
        `${second.name}: pool restarts are not enabled, so it was not restarted; start it with worker_pool_restarts=True (CELERYD_POOL_RESTARTS in old-style configs), or set restart: shutdown on the group.`,
      );
      expect(children(second.pid)).toEqual(pool);
    }, 120_000);
  });

  it('refuses an unknown group in one line naming the valid ones, and a restart without a group', async () => {
    const unknown = await as('U0ALICE', 'restart', 'zeus/pol');
    expect(unknown.code).toBe(2);
    expect(json(unknown).error?.message).toBe(
      '`zeus` has no worker group `pol`. Did you mean `pool`? Valid: `pool`.',
    );
    const bare = await as('U0ALICE', 'restart', 'zeus');
    expect(json(bare).error?.message).toBe(
      'Name the group as system/group. Usage: `/queue restart <system>/<group>`',
    );
    const more = await as('U0ALICE', 'restart', 'zeus/pool', 'now');
    expect(json(more).error?.message).toContain('Usage: `/queue restart <system>/<group>`');
  });
});

describe('a restart that leaves no worker', () => {
  let server: PrivateRedis;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let worker: CeleryWorker | undefined;

  beforeAll(async () => {
    server = await startPrivateRedis();
    tmp = tempDir('restart-none');
    config = zeusConfig(tmp.dir, server.url, {
      type: 'celery-pool',
      min: 1,
      max: 8,
      restart: 'shutdown',
      restartTimeoutSeconds: 5,
    });
  }, 30_000);
  afterAll(async () => {
    await worker?.stop();
    await server?.stop();
    tmp?.remove();
  });

  it('shutdown with no supervisor: the answer says nobody is back, and the monitor raises the default no-workers alert once jobs wait for a minute', async () => {
    worker = await startCeleryWorker({ brokerUrl: server.url, queues: [QUEUE], name: 'zeus-lone' });
    const as = (user: string, ...words: string[]) =>
      queueOps(['--config', config, '--user', user, '--json', ...words], env);
    const asked = await as('U0ALICE', 'restart', 'zeus/pool');
    expect(requestOf(asked).preview).toBe(
      `restart zeus/pool (Celery pool): shutdown of ${worker.name}, for their supervisor to start them again. Then waits up to 5 s for them to answer again.`,
    );
    const approved = await as('U0CAROL', 'approve', requestOf(asked).id);
    const done = requestOf(approved);
    expect(done.status).toBe('done');
    expect(done.result).toMatchObject({
      comeBack: { before: [worker.name], back: [], missing: [worker.name], complete: false },
    });
    expect(shown(approved)).toContain(
      `Not back: ${worker.name}. No worker of the group answers now: the no-workers alert fires for its queues while jobs wait.`,
    );
    expect(shown(approved)).toMatch(/Not all back after [5-9] s: 0 of 1\./);
    await worker.exited;

    // Jobs arrive for the queue nobody consumes now; the monitor, with the default rules, samples
    // it twice a minute apart.
    await publishCelery({ brokerUrl: server.url }, [{ task: 'tasks.add', args: [1, 2], queue: QUEUE }]);
    let clock = Date.now();
    const app = await createQueueOps({
      config: parseConfig(readFileSync(config, 'utf8'), env, config),
      env,
      logger: createLogger({ level: 'silent' }),
      now: () => new Date(clock),
    });
    try {
      const escalation = createEscalation({
        runtime: app,
        logger: createLogger({ level: 'silent' }),
        label: 'test',
      });
      const first = await escalation.monitor.tick();
      expect(first.leader && first.firing.map((a) => a.rule)).toEqual([]);
      clock += 61_000;
      const second = await escalation.monitor.tick();
      expect(second.leader && second.firing.map((a) => `${a.rule} ${a.subject}`)).toEqual([
        `no-workers zeus/${QUEUE}`,
      ]);
    } finally {
      await app.close();
    }
  }, 120_000);
});
