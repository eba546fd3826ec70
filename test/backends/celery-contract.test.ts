import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import { createPidboxClient } from '../../src/backends/celery/pidbox.js';
import { type CelerySystemConfig, configSchema } from '../../src/config/schema.js';
import { freePort } from '../../src/lib/redis-server.js';
import {
  askCelery,
  assertCeleryInstalled,
  type CeleryWorker,
  publishCelery,
  redisDbUrl,
  startCeleryWorker,
} from '../helpers/celery-worker.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { type BackendFixture, describeQueueBackend, type SeedQueue, type WorkerFixture } from './contract.js';

// This file owns Redis DBs 3, 4, 6, 7 and 8. One worker for the whole file runs the failing tasks on
// its own broker DB (6) and stores their results in the result DB (8) that the backend under
// test reads; the backend's broker DB (7) has no worker, so waiting messages stay waiting and
// no queue looks paused (no live worker answers there). The worker checks run on a system of
// their own (DBs 3 and 4, below), started once at the first of them.
const base = testRedisUrl();
const workerBroker = redisDbUrl(base, 6);
const broker = redisDbUrl(base, 7);
const results = redisDbUrl(base, 8);

let worker: CeleryWorker | undefined;
async function sharedWorker(): Promise<CeleryWorker> {
  worker ??= await startCeleryWorker({
    brokerUrl: workerBroker,
    resultUrl: results,
    name: 'qo-contract',
    queues: ['celery'],
    pool: 'prefork',
    concurrency: 1,
  });
  return worker;
}

// The worker checks' system: two real workers on broker DB 3 (results in DB 4), one started with
// pool restarts allowed and one without (restartWorkers' two answers), each with a pool of one,
// both keeping their results without a TTL (an app with result_expires=None, for expire-results).
const liveTarget = { brokerUrl: redisDbUrl(base, 3), resultUrl: redisDbUrl(base, 4) };
const LIVE_QUEUE = 'live';
let live: Promise<{ fixture: WorkerFixture; stop(): Promise<void> }> | undefined;

afterAll(async () => {
  const started = await live?.catch(() => undefined);
  await Promise.all([worker?.stop(), started?.stop()]);
  for (const url of [workerBroker, liveTarget.brokerUrl, liveTarget.resultUrl]) {
    const db = new Redis(url);
    await db.flushdb();
    await db.quit();
  }
});

/** The pids of a process's children, as the operating system lists them (a prefork pool). */
const childrenOf = (pid: number) =>
  spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);

async function startLiveWorkers(): Promise<{ fixture: WorkerFixture; stop(): Promise<void> }> {
  await Promise.all(
    [liveTarget.brokerUrl, liveTarget.resultUrl].map(async (url) => {
      const db = new Redis(url);
      await db.flushdb();
      await db.quit();
    }),
  );
  const started = await Promise.allSettled(
    [true, false].map((poolRestarts) =>
      startCeleryWorker({
        ...liveTarget,
        name: poolRestarts ? 'qo-live-restarts' : 'qo-live',
        queues: [LIVE_QUEUE],
        pool: 'prefork',
        concurrency: 1,
        poolRestarts,
        resultExpires: null,
      }).then((w) => ({ w, poolRestarts })),
    ),
  );
  const workers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stopAll = async () => {
    await Promise.all(workers.map(({ w }) => w.stop()));
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  const backend = createCeleryBackend(
    system({
      redis: liveTarget.brokerUrl,
      resultBackend: liveTarget.resultUrl,
      queues: [LIVE_QUEUE],
      inspectTimeoutMs: 3000,
    }),
  );
  const results = new Redis(liveTarget.resultUrl);
  const pidOf = new Map(workers.map(({ w }) => [w.name, w.pid]));
  const fixture: WorkerFixture = {
    backend,
    workers: workers.map(({ w, poolRestarts }) => ({ name: w.name, processes: 1, poolRestarts })),
    async poolPids(name) {
      return childrenOf(pidOf.get(name)!);
    },
    task: 'tasks.add',
    startLongTask: () =>
      askCelery(liveTarget, 'start', { task: 'tasks.sleepy', args: [120], queue: LIVE_QUEUE }),
    async stopTask(id) {
      await askCelery(liveTarget, 'stop', [id]);
    },
    async taskState(id) {
      return (await askCelery(liveTarget, 'states', [id]))[id]!;
    },
    stoppedState: 'REVOKED',
    rateLimits: (task) => askCelery(liveTarget, 'rate_limits', { task, workers: [...pidOf.keys()] }),
    async storeResults(count) {
      await publishCelery(
        liveTarget,
        Array.from({ length: count }, (_, i) => ({
          task: 'tasks.add',
          args: [i, i],
          queue: LIVE_QUEUE,
          wait: true,
        })),
      );
    },
    async resultTtls() {
      const ttls = new Map<string, number>();
      let cursor = '0';
      do {
        const [next, keys] = await results.scan(cursor, 'MATCH', 'celery-task-meta-*', 'COUNT', 1000);
        cursor = next;
        for (const key of keys) ttls.set(key, await results.ttl(key));
      } while (cursor !== '0');
      return ttls;
    },
  };
  return {
    fixture,
    async stop() {
      await backend.close();
      results.disconnect();
      await stopAll();
    },
  };
}

/** Makes the shared worker consume `queue` too (idempotent), through Celery's own add_consumer. */
async function consume(queue: string, name: string): Promise<void> {
  const redis = new Redis(workerBroker);
  const pidbox = createPidboxClient({
    client: redis,
    createBlockingClient: () => new Redis(workerBroker),
    layout: {
      globalKeyprefix: '',
      prioritySteps: [0, 3, 6, 9],
      separator: '\x06\x16',
      fanoutPrefix: true,
      db: 6,
    },
  });
  try {
    await pidbox.broadcast('add_consumer', { queue }, { timeoutMs: 2000, destination: [name] });
  } finally {
    await pidbox.close();
    redis.disconnect();
  }
}

function system(overrides: Partial<CelerySystemConfig> = {}): CelerySystemConfig {
  const config = configSchema.parse({
    systems: [{ name: 'zeus', type: 'celery', redis: broker, resultBackend: results, inspectTimeoutMs: 300 }],
  });
  return { ...(config.systems[0] as CelerySystemConfig), ...overrides };
}

async function makeCeleryFixture(): Promise<BackendFixture> {
  assertCeleryInstalled();
  const dbs = [new Redis(broker), new Redis(results)];
  await Promise.all(dbs.map((db) => db.flushdb()));
  const backend = createCeleryBackend(system());
  const extra: { close(): Promise<void> }[] = [];
  return {
    backend,
    // The broker is the Redis `redis` reads; the results are Celery's redis backend's keys, each
    // value a JSON document whose `date_done` is naive ISO 8601 in UTC.
    redis: {
      url: broker,
      results: {
        url: results,
        keyPrefix: 'celery-task-meta-',
        doneAt(value) {
          const done = (JSON.parse(value) as { date_done?: string | null }).date_done;
          return done ? Date.parse(`${done}Z`) : null;
        },
      },
    },
    async seed(queues: SeedQueue[]) {
      for (const queue of queues) {
        if (queue.failures.length === 0) continue;
        const { name } = await sharedWorker();
        await consume(queue.name, name);
        // One at a time, each waited for, so their date_done follows the scenario's order.
        await publishCelery(
          { brokerUrl: workerBroker, resultUrl: results },
          queue.failures.map((failure) => {
            const [excType, ...rest] = failure.error.split(': ');
            return {
              task: `tasks.${failure.taskName}`,
              args: [rest.join(': ')],
              kwargs: { exc_type: excType },
              queue: queue.name,
              wait: true,
            };
          }),
        );
      }
      await publishCelery(
        { brokerUrl: broker, resultUrl: results },
        queues.flatMap((queue) =>
          Array.from({ length: queue.waiting }, (_, i) => ({
            task: 'tasks.add',
            args: [i, i],
            queue: queue.name,
            priority: (i * 3) % 10,
          })),
        ),
      );
    },
    async withWorkers() {
      live ??= startLiveWorkers();
      return (await live).fixture;
    },
    unreachableBackend() {
      const down = createCeleryBackend(
        system({ redis: `redis://:secret-password@127.0.0.1:${closedPort}/7`, resultBackend: undefined }),
      );
      extra.push(down);
      return down;
    },
    async cleanup() {
      await backend.close();
      await Promise.all(extra.map((b) => b.close()));
      await Promise.all(dbs.map((db) => db.flushdb()));
      await Promise.all(dbs.map((db) => db.quit()));
    },
  };
}

// A port nothing listens on: taken from the kernel and released at once.
const closedPort = await freePort();

describeQueueBackend('celery', makeCeleryFixture);
