import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import type { QueueBackend } from '../../src/backends/queue-backend.js';
import { createBackendRegistry } from '../../src/backends/registry.js';
import type { WhyData } from '../../src/commands/why.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { configSchema } from '../../src/config/schema.js';
import { takeSample } from '../../src/escalation/sampler.js';
import { decodeSample, encodeSample, type Sample } from '../../src/escalation/samples.js';
import { createLogger } from '../../src/lib/logger.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { connectionFor } from './bullmq-jobs.js';
import { publishCelery, startCeleryWorker } from './celery-worker.js';
import { TEST_ROLES, writeConfigFile } from './config-file.js';

/** One run of the command line, in this process (no vitest: the bench runs these too). */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function runCliHere(args: string[]): Promise<CliRun> {
  const { runCli } = await import('../../src/transports/cli/run.js');
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv: args,
    env: { PATH: process.env.PATH ?? '' },
    cwd: process.cwd(),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    osUser: 'tester',
    logger: createLogger({ level: 'silent' }),
  });
  return { code, stdout, stderr };
}

/** The one JSON object of a `--json` run. */
export function jsonOut(run: CliRun): {
  ok: boolean;
  data: unknown;
  message: { text: string; blocks: unknown[] };
} {
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  if (lines.length !== 1) throw new Error(`expected one JSON line, got:\n${run.stdout}\n${run.stderr}`);
  return JSON.parse(lines[0]!);
}

function tempDir(label: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `queue-ops-${label}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The scenarios of issue 36 §5, each a real queue system on a Redis of its own in the state one
 * runbook cause leaves it: real BullMQ workers, a real Celery worker, a loopback HTTP endpoint for
 * the slow dependency. The tests ask `why` of each; `npm run bench -- why` prints the matrix.
 */
export interface Scenario {
  /** The cause this scenario is built to have (`healthy`: none). */
  cause: string;
  system: string;
  /** `system` or `system/queue`, as `why` is asked. */
  target: string;
  configPath: string;
  redis: PrivateRedis;
  /** `why --json` through the command line, as `user`. */
  why(target?: string, user?: string): Promise<{ run: CliRun; data: WhyData; text: string }>;
  cli(words: string[], user?: string): Promise<CliRun>;
  close(): Promise<void>;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Built {
  system: ConfigInput['systems'][number];
  diagnosis?: { stuckAfterMinutes: number };
}

/** The common part: a Redis of its own, a config with a SQLite store, monitor samples on demand. */
async function scene(
  cause: string,
  name: string,
  options: { persist?: boolean } = {},
): Promise<{
  redis: PrivateRedis;
  dir: string;
  finish(
    built: Built,
    target: string,
    closers: (() => Promise<unknown>)[],
  ): Promise<Scenario & { sample(): Promise<void> }>;
}> {
  const redis = await startPrivateRedis(options.persist ? { persist: false } : {});
  const dir = tempDir(`why-${cause}`);
  return {
    redis,
    dir: dir.dir,
    async finish(built, target, closers) {
      const config: ConfigInput = {
        store: `sqlite:${join(dir.dir, 'q.db')}`,
        roles: TEST_ROLES,
        ...(built.diagnosis ? { diagnosis: built.diagnosis } : {}),
        systems: [built.system],
      };
      const configPath = writeConfigFile(dir.dir, config);
      const parsed = configSchema.parse(config);
      let store: Store | undefined;
      let backend: QueueBackend | undefined;
      const cli = (words: string[], user = 'U0ALICE') =>
        runCliHere(['--config', configPath, '--user', user, '--json', ...words]);
      return {
        cause,
        system: name,
        target,
        configPath,
        redis,
        cli,
        async why(asked = target, user = 'U0ALICE') {
          const run = await cli(['why', asked], user);
          const out = jsonOut(run);
          return { run, data: out.data as unknown as WhyData, text: out.message.text };
        },
        /** One monitor tick's sample of the system, stored as the monitor stores it. */
        async sample() {
          if (!store) {
            store = await openStore(parsed.store);
            await store.migrate();
          }
          const sys = parsed.systems[0]!;
          backend ??= sys.type === 'bullmq' ? createBullmqBackend(sys) : createCeleryBackend(sys);
          const rows = await store.escalation.listSamples(new Date(Date.now() - 3_600_000).toISOString());
          const history: Sample[] = rows.map((r) => decodeSample(r.data));
          const sample = await takeSample(
            { config: parsed, backends: createBackendRegistry([backend]) },
            history,
            Date.now(),
          );
          await store.escalation.appendSample(new Date(sample.at).toISOString(), encodeSample(sample));
        },
        async close() {
          for (const close of closers.reverse()) await close().catch(() => undefined);
          await backend?.close().catch(() => undefined);
          await store?.close?.().catch(() => undefined);
          await redis.stop().catch(() => undefined);
          dir.remove();
        },
      };
    },
  };
}

const bullmq = (name: string, url: string, more: object = {}) =>
  ({ name, type: 'bullmq', redis: url, prefix: 'hs', ...more }) as ConfigInput['systems'][number];

/** Adds `count` jobs named `name` at `perSecond` until `stop` is called; resolves the adds made. */
function producer(queue: Queue, name: string, perSecond: number): () => void {
  const timer = setInterval(() => {
    void queue.add(name, { n: 1 }).catch(() => undefined);
  }, 1000 / perSecond);
  return () => clearInterval(timer);
}

/** A worker killed while work keeps arriving (BullMQ): the queue has no consumer since. */
export async function workerKilled(): Promise<Scenario> {
  const s = await scene('no-workers', 'pushizo');
  const connection = connectionFor(s.redis.url);
  const queue = new Queue('dispatch-ios', { connection, prefix: 'hs' });
  const worker = new Worker('dispatch-ios', async () => undefined, {
    connection,
    prefix: 'hs',
    concurrency: 4,
    name: 'w1',
  });
  await worker.waitUntilReady();
  const stop = producer(queue, 'send-push', 50);
  const scenario = await s.finish({ system: bullmq('pushizo', s.redis.url) }, 'pushizo', [
    async () => stop(),
    () => queue.close(),
  ]);
  await sleep(1200);
  await scenario.sample();
  await sleep(600);
  await scenario.sample();
  // Killed: the connection drops without a goodbye, as a crashed process's would.
  await worker.close(true);
  await until('a backlog with nobody consuming', async () => (await queue.getWaitingCount()) >= 60);
  return scenario;
}

/** Long tasks holding every slot of a Celery worker, work reserved and waiting behind them. */
export async function longTasksHoldSlots(): Promise<Scenario> {
  const s = await scene('stuck-tasks', 'zeus');
  const brokerUrl = `${s.redis.url}/0`;
  const worker = await startCeleryWorker({ brokerUrl, queues: ['celery'], name: 'w-stuck', concurrency: 2 });
  await publishCelery({ brokerUrl }, [
    { task: 'tasks.sleepy', args: [120], queue: 'celery' },
    { task: 'tasks.sleepy', args: [120], queue: 'celery' },
    ...Array.from({ length: 8 }, () => ({ task: 'tasks.add', args: [1, 2], queue: 'celery' })),
  ]);
  const scenario = await s.finish(
    {
      system: { name: 'zeus', type: 'celery', redis: brokerUrl, queues: ['celery'] },
      diagnosis: { stuckAfterMinutes: 0.05 },
    },
    'zeus',
    [() => worker.stop()],
  );
  // Past `stuckAfterMinutes` (3 s) with both slots held.
  await sleep(4000);
  return scenario;
}

/** A Redis at maxmemory refusing writes (BullMQ, `noeviction`). */
export async function redisFull(): Promise<Scenario> {
  const s = await scene('redis-memory', 'pushizo');
  const client = new Redis(s.redis.url);
  const connection = connectionFor(s.redis.url);
  const queue = new Queue('events', { connection, prefix: 'hs' });
  // A live worker, busy with one long job: the queue has its consumer, nothing else is wrong.
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const worker = new Worker('events', () => gate, { connection, prefix: 'hs', concurrency: 1 });
  await worker.waitUntilReady();
  await queue.add('backfill', {});
  await until('the long job active', async () => (await queue.getActiveCount()) === 1);
  await queue.addBulk(
    Array.from({ length: 500 }, (_, i) => ({ name: 'track', data: { pad: 'x'.repeat(2000), i } })),
  );
  const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
  await client.config('SET', 'maxmemory', String(used + 64 * 1024));
  await client.config('SET', 'maxmemory-policy', 'noeviction');
  // Keep writing until Redis refuses (its own OOM error count goes up).
  for (let i = 0; i < 200; i++) {
    try {
      await queue.addBulk(
        Array.from({ length: 20 }, () => ({ name: 'track', data: { pad: 'x'.repeat(2000) } })),
      );
    } catch {
      if (i > 0) break;
    }
  }
  client.disconnect();
  return await s.finish({ system: bullmq('pushizo', s.redis.url) }, 'pushizo', [
    async () => {
      release();
      await worker.close(true);
    },
    () => queue.close(),
  ]);
}

/** A burst of one task name into a queue that ran at a steady trickle (BullMQ). */
export async function burstOfOneName(): Promise<Scenario> {
  const s = await scene('task-burst', 'pushizo');
  const connection = connectionFor(s.redis.url);
  const queue = new Queue('events', { connection, prefix: 'hs' });
  const worker = new Worker('events', async () => sleep(5), { connection, prefix: 'hs', concurrency: 2 });
  await worker.waitUntilReady();
  const stop = producer(queue, 'track', 20);
  const scenario = await s.finish({ system: bullmq('pushizo', s.redis.url) }, 'pushizo', [
    () => worker.close(),
    () => queue.close(),
  ]);
  for (let i = 0; i < 4; i++) {
    await sleep(500);
    await scenario.sample();
  }
  stop();
  await queue.addBulk(Array.from({ length: 3000 }, () => ({ name: 'check_alarms', data: { n: 1 } })));
  return scenario;
}

/** A Celery task in a retry loop: it retries itself every second and never succeeds. */
export async function retryLoop(): Promise<Scenario> {
  const s = await scene('retry-loop', 'zeus');
  const brokerUrl = `${s.redis.url}/0`;
  const worker = await startCeleryWorker({ brokerUrl, queues: ['celery'], name: 'w-retry', concurrency: 2 });
  await publishCelery(
    { brokerUrl },
    Array.from({ length: 6 }, () => ({ task: 'tasks.retrying', kwargs: { countdown: 1 }, queue: 'celery' })),
  );
  const scenario = await s.finish(
    { system: { name: 'zeus', type: 'celery', redis: brokerUrl, queues: ['celery'] } },
    'zeus',
    [() => worker.stop()],
  );
  await sleep(4500);
  return scenario;
}

/** A paused BullMQ queue with work behind it, paused through queue-ops (so the audit says who). */
export async function pausedQueue(): Promise<Scenario> {
  const s = await scene('paused', 'pushizo');
  const connection = connectionFor(s.redis.url);
  const queue = new Queue('webhooks', { connection, prefix: 'hs' });
  const worker = new Worker('webhooks', async () => undefined, { connection, prefix: 'hs', concurrency: 2 });
  await worker.waitUntilReady();
  const scenario = await s.finish({ system: bullmq('pushizo', s.redis.url) }, 'pushizo/webhooks', [
    () => worker.close(),
    () => queue.close(),
  ]);
  const paused = await scenario.cli(['pause', 'pushizo/webhooks']);
  if (paused.code !== 0) throw new Error(`pause failed: ${paused.stdout}${paused.stderr}`);
  await queue.addBulk(Array.from({ length: 80 }, () => ({ name: 'deliver', data: {} })));
  return scenario;
}

/** A handler timing out against a slow loopback endpoint (BullMQ), retries backing off. */
export async function slowEndpoint(): Promise<Scenario> {
  const s = await scene('slow-dependency', 'pushizo');
  const server: Server = createServer((_req, res) => {
    setTimeout(() => res.end('late'), 2000).unref();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const connection = connectionFor(s.redis.url);
  const queue = new Queue('webhooks', { connection, prefix: 'hs' });
  const worker = new Worker(
    'webhooks',
    async () => {
      const res = await fetch(url, { signal: AbortSignal.timeout(150) });
      await res.text();
    },
    { connection, prefix: 'hs', concurrency: 5 },
  );
  await worker.waitUntilReady();
  // Some jobs fail at once; others back off for another try (delayed rises).
  await queue.addBulk([
    ...Array.from({ length: 20 }, () => ({ name: 'deliver', data: {} })),
    ...Array.from({ length: 20 }, () => ({
      name: 'deliver',
      data: {},
      opts: { attempts: 3, backoff: { type: 'fixed', delay: 60_000 } },
    })),
  ]);
  const scenario = await s.finish({ system: bullmq('pushizo', s.redis.url) }, 'pushizo', [
    () => worker.close(true),
    () => queue.close(),
    () => new Promise((resolve) => server.close(resolve)),
  ]);
  await until('timeouts failing jobs', async () => (await queue.getFailedCount()) >= 10);
  return scenario;
}

/**
 * A Celery task timing out against a slow loopback endpoint, beside work that still completes:
 * the failures name the task, whose rate `why` offers to limit (Celery's limits name a task).
 */
export async function slowEndpointCelery(): Promise<Scenario> {
  const s = await scene('slow-dependency', 'zeus');
  const server: Server = createServer((_req, res) => {
    setTimeout(() => res.end('late'), 2000).unref();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/push`;
  const brokerUrl = `${s.redis.url}/0`;
  const worker = await startCeleryWorker({ brokerUrl, queues: ['celery'], name: 'w-slow', concurrency: 4 });
  await publishCelery({ brokerUrl }, [
    ...Array.from({ length: 12 }, () => ({ task: 'tasks.call_endpoint', args: [url, 0.2], queue: 'celery' })),
    ...Array.from({ length: 20 }, () => ({ task: 'tasks.add', args: [1, 2], queue: 'celery' })),
  ]);
  const scenario = await s.finish(
    { system: { name: 'zeus', type: 'celery', redis: brokerUrl, queues: ['celery'] } },
    'zeus',
    [() => worker.stop(), () => new Promise((resolve) => server.close(resolve))],
  );
  await until('timeouts failing the tasks', async () => {
    const dlq = jsonOut(await scenario.cli(['dlq', 'zeus/celery'])).data as { total?: number };
    return (dlq.total ?? 0) >= 12;
  });
  return scenario;
}

/** A Redis restarted from an older snapshot: the jobs written after it are gone (BullMQ). */
export async function restartedFromOlderSnapshot(): Promise<Scenario> {
  const s = await scene('jobs-vanished', 'pushizo');
  const connection = connectionFor(s.redis.url);
  let queue = new Queue('dispatch-android', { connection, prefix: 'hs' });
  const delayed = (n: number) =>
    Array.from({ length: n }, () => ({ name: 'send', data: {}, opts: { delay: 3_600_000 } }));
  await queue.addBulk(delayed(100));
  const client = new Redis(s.redis.url);
  await client.save();
  await queue.addBulk(delayed(400));
  await queue.close();
  client.disconnect();
  const scenario = await s.finish({ system: bullmq('pushizo', s.redis.url) }, 'pushizo', []);
  await scenario.sample();
  await s.redis.kill();
  const again = await startPrivateRedis({ port: s.redis.port, dir: s.redis.dir });
  // The scenario's Redis is the restarted one now: close that one at the end.
  Object.assign(scenario.redis, { stop: () => again.stop(), kill: () => again.kill(), pid: again.pid });
  queue = new Queue('dispatch-android', { connection, prefix: 'hs' });
  await until('the snapshot loaded', async () => (await queue.getDelayedCount()) === 100);
  await queue.close();
  return scenario;
}

/**
 * A TCP proxy in front of Redis that drops every connection through it every `everyMs`, as a
 * flaky link between the workers and Redis does; clients reconnect through it.
 */
async function droppingProxy(target: { host: string; port: number }, everyMs: number) {
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const upstream = connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const timer = setInterval(() => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  }, everyMs);
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The workers reach Redis through a link that keeps dropping their connections (BullMQ). */
export async function flakyWorkerLink(): Promise<Scenario> {
  const s = await scene('redis-network', 'pushizo');
  const proxy = await droppingProxy({ host: '127.0.0.1', port: s.redis.port }, 700);
  const viaProxy = {
    host: '127.0.0.1',
    port: proxy.port,
    maxRetriesPerRequest: null,
    retryStrategy: () => 50,
  };
  const queue = new Queue('events', { connection: connectionFor(s.redis.url), prefix: 'hs' });
  const workers = ['w1', 'w2'].map(
    (name) =>
      new Worker('events', async () => undefined, {
        connection: viaProxy,
        prefix: 'hs',
        concurrency: 2,
        name,
      }),
  );
  for (const w of workers) w.on('error', () => undefined);
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const stop = producer(queue, 'track', 10);
  const scenario = await s.finish({ system: bullmq('pushizo', s.redis.url) }, 'pushizo', [
    async () => stop(),
    ...workers.map((w) => () => w.close(true)),
    () => queue.close(),
    () => proxy.close(),
  ]);
  for (let i = 0; i < 6; i++) {
    await sleep(800);
    await scenario.sample();
  }
  return scenario;
}

/** A healthy system: a worker keeping up with a trickle, command-line runs coming and going. */
export async function healthy(): Promise<Scenario> {
  const s = await scene('healthy', 'pushizo');
  const connection = connectionFor(s.redis.url);
  const queue = new Queue('journeys', { connection, prefix: 'hs' });
  const worker = new Worker('journeys', async () => sleep(2), { connection, prefix: 'hs', concurrency: 4 });
  await worker.waitUntilReady();
  const stop = producer(queue, 'step', 20);
  const scenario = await s.finish({ system: bullmq('pushizo', s.redis.url) }, 'pushizo', [
    async () => stop(),
    () => worker.close(),
    () => queue.close(),
  ]);
  for (let i = 0; i < 3; i++) {
    await sleep(400);
    // Command-line runs connect and leave between the monitor's samples.
    await scenario.cli(['status', 'pushizo']);
    await scenario.sample();
  }
  return scenario;
}

/** Every scenario, in the order the matrix prints them. */
export const SCENARIOS: readonly { name: string; cause: string; build: () => Promise<Scenario> }[] = [
  { name: 'worker killed while work arrives', cause: 'no-workers', build: workerKilled },
  { name: 'long tasks hold every slot', cause: 'stuck-tasks', build: longTasksHoldSlots },
  { name: 'Redis at maxmemory refusing writes', cause: 'redis-memory', build: redisFull },
  { name: 'burst of one task name', cause: 'task-burst', build: burstOfOneName },
  { name: 'task in a retry loop', cause: 'retry-loop', build: retryLoop },
  { name: 'paused queue', cause: 'paused', build: pausedQueue },
  { name: 'handler times out on a slow endpoint', cause: 'slow-dependency', build: slowEndpoint },
  {
    name: 'Celery task times out on a slow endpoint',
    cause: 'slow-dependency',
    build: slowEndpointCelery,
  },
  {
    name: 'Redis restarted from an older snapshot',
    cause: 'jobs-vanished',
    build: restartedFromOlderSnapshot,
  },
  { name: 'workers’ link to Redis keeps dropping', cause: 'redis-network', build: flakyWorkerLink },
  { name: 'healthy, CLI runs coming and going', cause: 'healthy', build: healthy },
];
