import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { type CeleryWorker, publishCelery, startCeleryWorker } from '../helpers/celery-worker.js';
import { celerySystem } from '../helpers/config-file.js';
import { auditEntries, json, queueOps, requestOf, shown, tempDir, writeConfig } from './helpers.js';

const QUEUE = 'celery:alarm_processing';

interface WorkersJson {
  systems: {
    workers: { name: string; details?: { processes?: number } }[];
    groups: { targets: { name: string; desired: number; autoscale?: { max: number; min: number } }[] }[];
  }[];
}

/** One Celery system on `redisUrl` with a pool group of 2..16, scale without approval. */
function zeusConfig(dir: string, redisUrl: string): string {
  return writeConfig(dir, {
    policies: { scale: { role: 'operator', approvals: 0 } },
    systems: [
      celerySystem('zeus', redisUrl, {
        queues: [QUEUE],
        inspectTimeoutMs: 2000,
        workers: { pool: { type: 'celery-pool', min: 2, max: 16 } },
      }),
    ],
  });
}

describe('Celery pool scale, stuck and revoke against a real worker started with -c 2', () => {
  // A Redis of its own: no other file's worker can answer these broadcasts.
  let server: PrivateRedis;
  let redis: Redis;
  let worker: CeleryWorker;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  const env = { HOME: '/tmp', PATH: process.env.PATH };
  const as = (user: string, ...words: string[]) =>
    queueOps(['--config', config, '--user', user, '--json', ...words], env);
  const processes = async () => {
    const run = await as('U0DAVE', 'workers', 'zeus');
    const system = (json(run).data as unknown as WorkersJson).systems[0]!;
    return {
      stats: system.workers.find((w) => w.name === worker.name)?.details?.processes,
      group: system.groups[0]!.targets.find((t) => t.name === worker.name)?.desired,
    };
  };

  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.url);
    worker = await startCeleryWorker({
      brokerUrl: server.url,
      queues: [QUEUE],
      name: 'zeus-pool',
      concurrency: 2,
    });
    tmp = tempDir('celery');
    config = zeusConfig(tmp.dir, server.url);
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    redis?.disconnect();
    await server?.stop();
    tmp?.remove();
  });

  it('scale zeus/pool 4 grows the worker to 4 processes (its stats show it), and 2 shrinks it back', async () => {
    expect(await processes()).toEqual({ stats: 2, group: 2 });

    const grow = await as('U0ALICE', 'scale', 'zeus/pool', '4');
    expect(grow.code, grow.stdout + grow.stderr).toBe(0);
    const grown = requestOf(grow);
    expect(grown.preview).toBe(`scale zeus/pool (Celery pool): ${worker.name} 2 → 4 processes.`);
    expect(grown).toMatchObject({
      status: 'done',
      result: { targets: [{ name: worker.name, before: 2, after: 4, answer: 'pool will grow', ok: true }] },
    });
    expect(shown(grow)).toContain(`${worker.name} 2 → 4 processes (answered “pool will grow”)`);
    expect(await processes()).toEqual({ stats: 4, group: 4 });

    const shrink = await as('U0ALICE', 'scale', 'zeus/pool', '2');
    expect(requestOf(shrink)).toMatchObject({
      status: 'done',
      result: { targets: [{ before: 4, after: 2, answer: 'pool will shrink' }] },
    });
    expect(await processes()).toEqual({ stats: 2, group: 2 });

    const again = await as('U0ALICE', 'scale', 'zeus/pool', '2');
    expect(json(again).error?.message).toBe('`zeus/pool` is already at 2; nothing was changed.');
    const low = await as('U0ALICE', 'scale', 'zeus/pool', '1');
    expect(json(low).error?.message).toBe('1 is outside the bounds of `zeus/pool`. Valid: 2..16.');

    const entries = (await auditEntries(config, env)).filter((e) => e.action === 'action.scale');
    expect(
      entries.map((e) => (e.params.result as { targets: { after: number }[] }).targets[0]!.after),
    ).toEqual([2, 4]);
  }, 60_000);

  describe('a long task', () => {
    let id: string;
    let listed: { id: string; worker?: string; name: string }[] = [];

    beforeAll(async () => {
      const { ids } = await publishCelery({ brokerUrl: server.url }, [
        { task: 'tasks.sleepy', args: [97.3125], kwargs: {}, queue: QUEUE },
      ]);
      id = ids[0]!;
      const until = Date.now() + 20_000;
      while (!listed.some((w) => w.id === id)) {
        if (Date.now() > until) throw new Error(`the task never started:\n${worker.output()}`);
        const run = await as('U0DAVE', 'stuck', 'zeus', '0');
        listed = (json(run).data as { work: typeof listed }).work;
      }
    }, 60_000);

    it('shows in stuck with its id and worker, never its arguments', async () => {
      expect(listed.find((w) => w.id === id)).toMatchObject({
        name: 'tasks.sleepy',
        worker: worker.name,
        queue: QUEUE,
      });
      const stuck = await as('U0DAVE', 'stuck', 'zeus', '0');
      expect(shown(stuck)).toContain(id);
      expect(JSON.stringify(json(stuck))).not.toContain('97.3125');
    });

    it('is not stuck by the default measure, having run for seconds rather than 30 minutes', async () => {
      const recent = await as('U0DAVE', 'stuck', 'zeus');
      expect((json(recent).data as { work: unknown[] }).work).toEqual([]);
      expect(shown(recent)).toContain('Nothing has run longer than 30 minutes.');
    });

    it('revoke --terminate kills it', async () => {
      const revoke = await as('U0ALICE', 'revoke', 'zeus', id, '--terminate', '--signal', 'KILL');
      expect(revoke.code, revoke.stdout + revoke.stderr).toBe(0);
      const request = requestOf(revoke);
      expect(request.preview).toMatch(
        new RegExp(
          `^revoke on zeus: ${id} \\(tasks.sleepy\\) runs on ${worker.name} for \\d+s; running ones are killed with SIGKILL\\.$`,
        ),
      );
      expect(request).toMatchObject({
        status: 'done',
        result: {
          ids: [id],
          terminate: true,
          signal: 'KILL',
          answers: [{ worker: worker.name, answer: `terminate: ${id}` }],
          stillRunning: [],
        },
      });
      expect(shown(revoke)).toContain(`workers that answered: ${worker.name}: terminate: ${id}`);
    }, 60_000);

    it('the result backend then says REVOKED', async () => {
      const recorded = Date.now() + 15_000;
      let meta: { status?: string } = {};
      while (meta.status !== 'REVOKED') {
        if (Date.now() > recorded)
          throw new Error(`no REVOKED result: ${JSON.stringify(meta)}\n${worker.output()}`);
        meta = JSON.parse((await redis.get(`celery-task-meta-${id}`)) ?? '{}');
        if (meta.status !== 'REVOKED') await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(meta.status).toBe('REVOKED');
    }, 30_000);
  });

  it('refuses revoke of a BullMQ-style flag it does not know, and a signal without --terminate', async () => {
    const flag = await as('U0ALICE', 'revoke', 'zeus', 'abc', '--force');
    expect(json(flag).error?.message).toBe(
      '`--force` is not an option of this command. Usage: `/queue revoke <system> <task-id…> [--terminate] [--signal TERM|KILL]`',
    );
    const signal = await as('U0ALICE', 'revoke', 'zeus', 'abc', '--signal', 'HUP', '--terminate');
    expect(json(signal).error?.message).toBe('`HUP` is not a signal revoke can send. Valid: TERM or KILL.');
  });
});

describe('Celery pool scale of a worker started with --autoscale', () => {
  let server: PrivateRedis;
  let worker: CeleryWorker;
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  const env = { HOME: '/tmp', PATH: process.env.PATH };
  const as = (user: string, ...words: string[]) =>
    queueOps(['--config', config, '--user', user, '--json', ...words], env);

  beforeAll(async () => {
    server = await startPrivateRedis();
    worker = await startCeleryWorker({
      brokerUrl: server.url,
      queues: [QUEUE],
      name: 'zeus-auto',
      autoscale: { max: 4, min: 2 },
    });
    tmp = tempDir('celery-auto');
    config = zeusConfig(tmp.dir, server.url);
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    await server?.stop();
    tmp?.remove();
  });

  /** This worker's target in the pool group of a `workers --json` answer. */
  const poolTargetOf = (run: Awaited<ReturnType<typeof as>>) =>
    (json(run).data as unknown as WorkersJson).systems[0]!.groups[0]!.targets.find(
      (t) => t.name === worker.name,
    );

  it('workers shows its autoscale range', async () => {
    const seen = await as('U0DAVE', 'workers', 'zeus');
    expect(seen.code, seen.stdout + seen.stderr).toBe(0);
    const target = poolTargetOf(seen);
    expect(target?.autoscale).toEqual({ max: 4, min: 2 });
  });

  it('scale 6 sets the range to 6..6 (floor and ceiling) rather than growing the pool by hand', async () => {
    const run = await as('U0ALICE', 'scale', 'zeus/pool', '6');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const request = requestOf(run);
    expect(request).toMatchObject({
      status: 'done',
      result: {
        targets: [
          {
            name: worker.name,
            ok: true,
            autoscale: { before: { max: 4, min: 2 }, after: { max: 6, min: 6 } },
          },
        ],
      },
    });
    expect(shown(run)).toContain(`${worker.name} autoscale 2..4 → 6..6`);
    // The worker itself now reports the new range in its stats.
    const after = await as('U0DAVE', 'workers', 'zeus');
    const now = poolTargetOf(after);
    expect(now?.autoscale).toEqual({ max: 6, min: 6 });
  }, 60_000);

  it('the audit trail has the scale with the range before and after', async () => {
    const entry = (await auditEntries(config, env)).find((e) => e.action === 'action.scale');
    expect(entry?.params.result).toMatchObject({
      targets: [{ autoscale: { before: { max: 4, min: 2 }, after: { max: 6, min: 6 } } }],
    });
  });
});
