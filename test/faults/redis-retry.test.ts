import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedFailedJobs } from '../helpers/bullmq-jobs.js';
import { type CliRun, jsonOf, requestOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, celerySystem, type SystemInput, writeConfigFile } from '../helpers/config-file.js';
import { type LatencyProxy, startLatencyProxy } from '../helpers/latency-proxy.js';
import { type AuditEntry, auditEntries, expectOneLineNaming, FaultyRedis } from './fault-fixture.js';

const JOBS = 1_000;
/** Jobs per batch of both backends' retries. */
const BATCH = 250;

/**
 * What an `action.retry` audit entry says the retry did (`params.result`, as a finished one
 * records it); an interrupted one also names the batch that was on its way (`unconfirmed`).
 */
function retriedPerAudit(entry: AuditEntry | undefined): {
  queue: string;
  retried: number;
  ids: Record<string, string>;
  unconfirmed?: Record<string, string>;
} {
  expect(entry?.params?.result, 'the audit entry records what the retry did').toBeDefined();
  return entry!.params!.result as ReturnType<typeof retriedPerAudit>;
}

/** The jobs an interrupted retry's one line says were done before (`at least 500 of 1,000`). */
const atLeast = (told: string) => Number(/at least ([\d,]+)/.exec(told)![1]!.replace(/,/g, ''));

describe(`a retry of ${JOBS.toLocaleString('en-US')} failed jobs whose Redis is killed midway and started again`, () => {
  interface Scene {
    redis: FaultyRedis;
    client: Redis;
    config: string;
    as(user: string, ...words: string[]): Promise<CliRun>;
  }

  /**
   * Registers the hooks of one backend's scenario: a persistent Redis behind a proxy that holds
   * every chunk 100 ms each way, and a config whose `system` is reached through the proxy.
   */
  function useScene(system: (url: string) => SystemInput): Scene {
    const scene = {} as Scene;
    const cleanups: (() => Promise<void>)[] = [];
    beforeAll(async () => {
      const redis = await FaultyRedis.start();
      cleanups.push(() => redis.stop());
      const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      client.on('error', () => {});
      cleanups.push(async () => client.disconnect());
      const proxy: LatencyProxy = await startLatencyProxy(
        { host: '127.0.0.1', port: Number(new URL(redis.url).port) },
        100,
      );
      cleanups.push(() => proxy.close());
      const tmp = tempDir('fault-retry');
      cleanups.push(async () => tmp.remove());
      const config = writeConfigFile(tmp.dir, {
        store: `sqlite:${tmp.dir}/queue-ops.db`,
        roles: { operator: ['U0ALICE', 'U0CAROL'] },
        policies: { retry: { role: 'operator', approvals: 1 } },
        approvals: { cliSameOsUser: 'allow' },
        systems: [system(`redis://127.0.0.1:${proxy.port}`)],
      });
      Object.assign(scene, {
        redis,
        client,
        config,
        as: (user: string, ...words: string[]) =>
          runCliInProcess(['--config', config, '--user', user, '--json', ...words]),
      });
    });
    afterAll(async () => {
      while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
    });
    return scene;
  }

  /**
   * Kills `redis` as soon as MONITOR shows the `nth` command matching `pattern`: the start of the
   * second batch, whose send followed the first batch's reply.
   */
  async function killOnNth(
    redis: FaultyRedis,
    pattern: RegExp,
    nth: number,
  ): Promise<{ killed: Promise<void> }> {
    let seen = 0;
    const admin = new Redis(redis.url);
    admin.on('error', () => {});
    const monitor = await admin.monitor();
    monitor.on('error', () => {});
    let kill: () => void = () => {};
    const killed = new Promise<void>((done) => {
      kill = done;
    });
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (!pattern.test(args.join(' ')) || ++seen < nth) return;
      monitor.removeAllListeners('monitor');
      void redis.kill().then(kill);
    });
    return { killed };
  }

  /**
   * A retry of all the failed jobs of `target`, approved, during which Redis is killed at the
   * `nth` command matching `pattern`, then started again: what the approver was told, one line
   * naming `system`.
   */
  async function retryKilledAt(
    scene: Scene,
    target: string,
    system: string,
    pattern: RegExp,
    nth: number,
  ): Promise<string> {
    const asked = requestOf(await scene.as('U0ALICE', 'retry', target, 'all', String(JOBS)));
    expect(asked.preview).toContain('1,000');
    const { killed } = await killOnNth(scene.redis, pattern, nth);
    const approved = await scene.as('U0CAROL', 'approve', asked.id);
    await killed;
    expect(approved.code, approved.stdout).toBe(1);
    expect(jsonOf(approved).error?.code).toBe('RetryInterrupted');
    const told = expectOneLineNaming(approved, system);
    await scene.redis.restart();
    return told;
  }

  describe('bullmq', () => {
    const scene = useScene((url) => bullmqSystem('hs', url, 'hs'));
    const base = 'hs:webhooks:';
    let told: string;
    let failed: string[];
    let waiting: string[];

    it('the approver is told in one line that Redis for hs stopped answering', async () => {
      await seedFailedJobs(scene.client, base, JOBS);
      // One `waiting` event per job moved, 250 per batch's script call: the 251st is the second
      // batch at work (sent behind the first before its answer; on a fresh Redis both were first
      // answered NOSCRIPT and sent again by body). Redis writes the first batch's answer before
      // MONITOR's lines, and the proxy hands it on before the connection's end.
      told = await retryKilledAt(
        scene,
        'hs/webhooks',
        'hs',
        /^xadd hs:webhooks:events \* event waiting /i,
        BATCH + 1,
      );
      // The batches confirmed before the kill: the first, or the second too when its reply came first.
      expect(told).toMatch(
        /^Redis for `hs` stopped answering during the retry of `hs\/webhooks` \(connection lost|connection refused|not connected\): at least (250|500|750) of 1,000 jobs were done before, the rest are still failed; `\/queue retry hs\/webhooks all` takes only those once Redis answers\.$/,
      );
    }, 120_000);

    it('afterwards each job is failed or waiting once', async () => {
      const { client } = scene;
      failed = await client.zrange(`${base}failed`, 0, -1);
      waiting = await client.lrange(`${base}wait`, 0, -1);
      expect(failed.length).toBeGreaterThan(0);
      expect(waiting.length).toBeGreaterThanOrEqual(BATCH);
      expect(failed.length + waiting.length).toBe(JOBS);
      expect(new Set([...failed, ...waiting]).size).toBe(JOBS);
    }, 60_000);

    it('the audit of the interrupted retry names the jobs it put back', async () => {
      // As a finished retry's does: every batch Redis confirmed, each back in the queue under its
      // own id; and the batch on the wire when Redis died, which may be back without an answer
      // (its script ran, the reply was lost). Every job waiting now is one of those.
      const [interrupted] = (await auditEntries(scene.config)).filter((e) => e.action === 'action.retry');
      const traced = retriedPerAudit(interrupted);
      const confirmed = Object.keys(traced.ids);
      const onItsWay = Object.keys(traced.unconfirmed ?? {});
      expect(confirmed).toHaveLength(atLeast(told));
      expect(traced).toMatchObject({ queue: 'webhooks', retried: confirmed.length, skipped: 0 });
      // BullMQ keeps two batches on their way (src/backends/bullmq/retry.ts).
      expect([0, BATCH, 2 * BATCH]).toContain(onItsWay.length);
      for (const [id, now] of Object.entries({ ...traced.ids, ...traced.unconfirmed })) expect(now).toBe(id);
      const waitingNow = new Set(waiting);
      expect(confirmed.filter((id) => !waitingNow.has(id))).toEqual([]);
      const named = new Set([...confirmed, ...onItsWay]);
      expect(waiting.filter((id) => !named.has(id))).toEqual([]);
    });

    it('a second retry takes exactly the rest', async () => {
      const { client, as } = scene;
      const again = requestOf(await as('U0ALICE', 'retry', 'hs/webhooks', 'all', String(JOBS)));
      const done = await as('U0CAROL', 'approve', again.id);
      expect(done.code, done.stdout).toBe(0);
      expect(requestOf(done).result).toMatchObject({ retried: failed.length, skipped: 0 });
      expect(await client.zcard(`${base}failed`)).toBe(0);
      const all = await client.lrange(`${base}wait`, 0, -1);
      expect(all).toHaveLength(JOBS);
      expect(new Set(all).size).toBe(JOBS);
    }, 60_000);

    it('the audit holds the interrupted retry, then the one that finished', async () => {
      const audit = (await auditEntries(scene.config)).filter((e) => e.action === 'action.retry');
      expect(audit.map((e) => [e.actorId, e.outcome, e.error ?? null])).toEqual([
        ['U0CAROL', 'failed', 'RetryInterrupted'],
        ['U0CAROL', 'done', null],
      ]);
    });
  });

  describe('celery', () => {
    const scene = useScene((url) =>
      celerySystem('zeus', `${url}/0`, { queues: ['celery'], inspectTimeoutMs: 200 }),
    );
    let told: string;
    let sentFirst: number;
    let sentBeforeKill: Record<string, string>;
    // Each message back in the queue, read from Redis: the failed task it retries (its arguments
    // say which) → the new task id it was sent under.
    const oldIdOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const inQueue = (messages: string[]) =>
      Object.fromEntries(
        messages.map((m) => {
          const message = JSON.parse(m) as { body: string; headers: { id: string } };
          const [[n]] = JSON.parse(Buffer.from(message.body, 'base64').toString()) as [[number]];
          return [oldIdOf(n), message.headers.id];
        }),
      );

    it('the approver is told in one line that Redis for zeus stopped answering', async () => {
      const { client } = scene;
      await client.sadd('_kombu.binding.celery', 'celery\x06\x16\x06\x16celery');
      const seed = client.pipeline();
      for (let n = 1; n <= JOBS; n++) {
        const id = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
        // What Celery's Redis result backend stores for a failed task with result_extended.
        seed.set(
          `celery-task-meta-${id}`,
          JSON.stringify({
            status: 'FAILURE',
            result: { exc_type: 'ConnectionError', exc_message: ['gateway down'], exc_module: 'builtins' },
            traceback: 'Traceback (most recent call last): …',
            children: [],
            date_done: new Date(Date.now() - 60_000 + n).toISOString().replace('Z', ''),
            task_id: id,
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

      told = await retryKilledAt(scene, 'zeus/celery', 'zeus', /^lpush celery /i, BATCH + 1);
      expect(told).toMatch(
        /^Redis for `zeus` stopped answering during the retry of `zeus\/celery` \(connection lost|connection refused|not connected\): at least (250|500|750) of 1,000 jobs were done before, the rest are still failed; `\/queue retry zeus\/celery all` takes only those once Redis answers\.$/,
      );
    }, 120_000);

    it('had sent only whole batches when Redis died', async () => {
      // Whole batches only: a batch's messages and the marks of its failures are one transaction.
      sentFirst = await scene.client.llen('celery');
      expect(sentFirst % BATCH).toBe(0);
      expect(sentFirst).toBeGreaterThanOrEqual(atLeast(told));
      expect(sentFirst).toBeLessThan(JOBS);
    }, 60_000);

    it('the audit of the interrupted retry traces exactly the messages it sent', async () => {
      sentBeforeKill = inQueue(await scene.client.lrange('celery', 0, -1));
      // Old → new id of every task its confirmed batches sent, and of the batch on its way when
      // Redis died, which is one transaction: all of its messages are in the queue, or none.
      const [interrupted] = (await auditEntries(scene.config)).filter((e) => e.action === 'action.retry');
      const traced = retriedPerAudit(interrupted);
      const onItsWay = traced.unconfirmed ?? {};
      // None when Redis died after answering a batch, before the next was sent.
      expect([0, BATCH]).toContain(Object.keys(onItsWay).length);
      expect(Object.keys(traced.ids)).toHaveLength(atLeast(told));
      const applied = Object.keys(onItsWay).some((old) => sentBeforeKill[old] === onItsWay[old]);
      expect(traced).toMatchObject({ queue: 'celery', retried: Object.keys(traced.ids).length, skipped: 0 });
      expect(sentBeforeKill).toEqual({ ...traced.ids, ...(applied ? onItsWay : {}) });
    });

    it('a second retry sends the rest', async () => {
      const { as } = scene;
      const again = requestOf(await as('U0ALICE', 'retry', 'zeus/celery', 'all', String(JOBS)));
      const done = await as('U0CAROL', 'approve', again.id);
      expect(done.code, done.stdout).toBe(0);
      expect(requestOf(done).result).toMatchObject({ retried: JOBS - sentFirst });
    }, 60_000);

    it('each failed task was sent again exactly once, over both retries', async () => {
      // None lost, none sent twice.
      const sent = (await scene.client.lrange('celery', 0, -1)).map((m) => {
        const body = JSON.parse(
          Buffer.from((JSON.parse(m) as { body: string }).body, 'base64').toString(),
        ) as [number[]];
        return body[0][0]!;
      });
      expect(sent).toHaveLength(JOBS);
      expect(new Set(sent).size).toBe(JOBS);
    });

    it('the audit holds the interrupted retry, then the one that finished', async () => {
      const audit = (await auditEntries(scene.config)).filter((e) => e.action === 'action.retry');
      expect(audit.map((e) => [e.actorId, e.outcome, e.error ?? null])).toEqual([
        ['U0CAROL', 'failed', 'RetryInterrupted'],
        ['U0CAROL', 'done', null],
      ]);
    });

    it('between them, the two audit entries trace every message in the queue, each once', async () => {
      const audit = (await auditEntries(scene.config)).filter((e) => e.action === 'action.retry');
      const both = { ...sentBeforeKill, ...retriedPerAudit(audit[1]).ids };
      expect(Object.keys(both)).toHaveLength(JOBS);
      expect(both).toEqual(inQueue(await scene.client.lrange('celery', 0, -1)));
    });
  });
});
