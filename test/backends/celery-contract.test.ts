import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import { createPidboxClient } from '../../src/backends/celery/pidbox.js';
import { type CelerySystemConfig, configSchema } from '../../src/config/schema.js';
import { freePort } from '../../src/lib/redis-server.js';
import {
  assertCeleryInstalled,
  type CeleryWorker,
  publishCelery,
  redisDbUrl,
  startCeleryWorker,
} from '../helpers/celery-worker.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { type BackendFixture, describeQueueBackend, type SeedQueue } from './contract.js';

// This file owns Redis DBs 6, 7 and 8. One worker for the whole file runs the failing tasks on
// its own broker DB (6) and stores their results in the result DB (8) that the backend under
// test reads; the backend's broker DB (7) has no worker, so waiting messages stay waiting and
// no queue looks paused (no live worker answers there).
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

afterAll(async () => {
  await worker?.stop();
  const db = new Redis(workerBroker);
  await db.flushdb();
  await db.quit();
});

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
