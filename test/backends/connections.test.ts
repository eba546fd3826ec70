import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { type ConnectionOptions, Queue, Worker } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import type { BullmqSystemConfig, CelerySystemConfig } from '../../src/config/schema.js';
import { celeryEnvelope } from '../../src/demo/seed-celery.js';
import { seedRawBullmqJobs } from '../../src/demo/seed-raw.js';
import { runPurge, runUndo } from '../../src/purge/engine.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import { randomName, waitFor } from '../helpers/bullmq-jobs.js';
import {
  makeTestCa,
  parseSystem,
  type RedisProcess,
  type SentinelGroup,
  startSentinelGroup,
  startTlsRedis,
  type TestCa,
} from '../helpers/redis-shapes.js';
import { archivingPurge } from '../purge/engine-fixture.js';

/**
 * Every path of a backend connects through its one connection factory (bullmq/connections.ts,
 * celery/connections.ts), with the system's whole endpoint. `fail` (its job-lock connection) and
 * the Celery purger used to connect with the bare URL: over TLS with a private CA the certificate
 * was refused, and with `sentinel.sentinels` the URL's host (not used otherwise) was dialled.
 */

/** A job held active by a real BullMQ worker, `fail`ed through the backend: state, reason, lock. */
async function failHeldJob(connection: RedisOptions, system: BullmqSystemConfig): Promise<void> {
  const queue = new Queue('send-push', {
    prefix: system.prefix,
    connection: connection as ConnectionOptions,
  });
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const worker = new Worker('send-push', () => held, {
    prefix: system.prefix,
    connection: { ...connection, maxRetriesPerRequest: null } as ConnectionOptions,
  });
  worker.on('error', () => {});
  const backend = createBullmqBackend(system);
  try {
    const job = await queue.add('push', { n: 1 }, { attempts: 5 });
    await waitFor('the worker to take the job', async () => (await job.getState()) === 'active');
    expect(await backend.jobLock('send-push', job.id!)).toMatchObject({ state: 'active', name: 'push' });
    const outcome = await backend.failJob('send-push', job.id!, 'provider hung');
    expect(outcome).toMatchObject({ before: 'active', state: 'failed', lockWasHeld: true });
    const after = await queue.getJob(job.id!);
    expect(await after!.getState()).toBe('failed');
    expect(after!.failedReason).toBe('provider hung');
  } finally {
    release();
    await backend.close();
    await worker.close(true);
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

/** 30 Celery messages purged into the archive through the backend's purger, then undone. */
async function purgeCeleryQueue(connection: RedisOptions, system: CelerySystemConfig): Promise<void> {
  const queue = system.queues![0]!;
  const writer = new Redis(connection);
  const tmp = mkdtempSync(join(tmpdir(), 'qo-conn-purge-'));
  const store = createSqliteStore(join(tmp, 'queue-ops.db'));
  await store.migrate();
  const backend = createCeleryBackend(system);
  try {
    await writer.lpush(
      queue,
      ...Array.from({ length: 30 }, (_, n) =>
        JSON.stringify(celeryEnvelope({ queue, task: 'tasks.add', args: [n, 1], priority: 0 })),
      ),
    );
    const before = await writer.lrange(queue, 0, -1);
    const record = await archivingPurge(store, tmp, {
      id: randomName('r-conn'),
      backend: 'celery',
      system: system.name,
      queue,
      total: 30,
      owner: 'test',
    });
    const purger = await backend.purger(queue);
    const { record: done } = await runPurge(record, { store, purger, owner: 'test', chunkSize: 10 });
    expect(done).toMatchObject({ state: 'done', archived: 30, purged: 30 });
    expect(await writer.llen(queue)).toBe(0);
    expect(await runUndo(done, { purger })).toMatchObject({ restored: 30 });
    await purger.close();
    expect((await writer.lrange(queue, 0, -1)).sort()).toEqual(before.sort());
  } finally {
    await writer.del(queue);
    writer.disconnect();
    await backend.close();
    await store.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * 300 BullMQ jobs purged into the archive through the backend's purger, then undone: the hashes
 * are read through the raw pipe, which connects to the Redis the purge's client found (through
 * TLS with the system's CA, or the master the sentinels named), not by Lua.
 */
async function purgeBullmqQueue(connection: RedisOptions, system: BullmqSystemConfig): Promise<void> {
  const writer = new Redis(connection);
  const tmp = mkdtempSync(join(tmpdir(), 'qo-conn-purge-'));
  const store = createSqliteStore(join(tmp, 'queue-ops.db'));
  await store.migrate();
  const backend = createBullmqBackend(system);
  try {
    await seedRawBullmqJobs(writer, { prefix: system.prefix, queue: 'events', count: 300 });
    const before = await writer.lrange(`${system.prefix}:events:wait`, 0, -1);
    const record = await archivingPurge(store, tmp, {
      id: randomName('r-conn'),
      system: system.name,
      queue: 'events',
      total: 300,
      owner: 'test',
    });
    const purger = await backend.purger('events');
    const { record: done } = await runPurge(record, { store, purger, owner: 'test', chunkSize: 100 });
    expect(done).toMatchObject({ state: 'done', archived: 300, purged: 300 });
    expect(await writer.llen(`${system.prefix}:events:wait`)).toBe(0);
    const pipe = String(await writer.client('LIST'))
      .split('\n')
      .find((line) => line.includes(` name=queue-ops:${system.name}:purge:read `));
    expect(pipe).toContain(' cmd=hgetall ');
    expect(await runUndo(done, { purger })).toMatchObject({ restored: 300 });
    await purger.close();
    expect(await writer.lrange(`${system.prefix}:events:wait`, 0, -1)).toEqual(before);
  } finally {
    // The server is this describe's own, its prefix a fresh one: nothing to clear.
    writer.disconnect();
    await backend.close();
    await store.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

describe('fail and a Celery purge against a Redis behind TLS with a private CA', () => {
  let ca: TestCa;
  let server: RedisProcess;
  const tlsConnection = (): RedisOptions => ({
    host: '127.0.0.1',
    port: server.port,
    tls: { ca: readFileSync(ca.ca) },
  });
  beforeAll(async () => {
    ca = makeTestCa();
    server = await startTlsRedis(ca);
  });
  afterAll(async () => {
    await server?.stop();
    ca?.cleanup();
  });

  it('fails a job a worker holds, over rediss:// with the CA file from config', async () => {
    await failHeldJob(
      tlsConnection(),
      parseSystem<BullmqSystemConfig>({
        name: 'pushizo',
        type: 'bullmq',
        redis: `rediss://127.0.0.1:${server.port}`,
        prefix: randomName('tlsfail'),
        tls: { ca: ca.ca },
      }),
    );
  });

  it('purges a BullMQ queue through the raw pipe and undoes it, over rediss:// with the CA file', async () => {
    await purgeBullmqQueue(
      tlsConnection(),
      parseSystem<BullmqSystemConfig>({
        name: 'pushizo',
        type: 'bullmq',
        redis: `rediss://127.0.0.1:${server.port}`,
        prefix: randomName('tlspurge'),
        tls: { ca: ca.ca },
      }),
    );
  });

  it('purges a Celery queue into the archive and undoes it, over rediss:// with the CA file', async () => {
    await purgeCeleryQueue(
      tlsConnection(),
      parseSystem<CelerySystemConfig>({
        name: 'zeus',
        type: 'celery',
        redis: `rediss://127.0.0.1:${server.port}/0`,
        tls: { ca: ca.ca },
        queues: [randomName('tls_purge')],
        inspectTimeoutMs: 100,
      }),
    );
  });
});

describe('fail and a Celery purge against a Redis found through Sentinel', () => {
  let group: SentinelGroup;
  const viaSentinel = (): RedisOptions => ({
    sentinels: [{ host: '127.0.0.1', port: group.sentinel.port }],
    name: group.name,
  });
  // The URL's host is never dialled: the sentinels from config are (README "Watched Redis").
  const sentinelShape = () => ({
    redis: 'redis://127.0.0.1:1/0',
    sentinel: { sentinels: [`127.0.0.1:${group.sentinel.port}`], name: group.name },
  });
  beforeAll(async () => {
    group = await startSentinelGroup('mymaster');
  });
  afterAll(async () => {
    await group?.stop();
  });

  it('fails a job a worker holds, through sentinel.sentinels from config', async () => {
    await failHeldJob(
      viaSentinel(),
      parseSystem<BullmqSystemConfig>({
        name: 'pushizo',
        type: 'bullmq',
        prefix: randomName('senfail'),
        ...sentinelShape(),
      }),
    );
  });

  it('purges a BullMQ queue through the raw pipe to the master and undoes it, through sentinel.sentinels from config', async () => {
    await purgeBullmqQueue(
      viaSentinel(),
      parseSystem<BullmqSystemConfig>({
        name: 'pushizo',
        type: 'bullmq',
        prefix: randomName('senpurge'),
        ...sentinelShape(),
      }),
    );
  });

  it('purges a Celery queue into the archive and undoes it, through sentinel.sentinels from config', async () => {
    await purgeCeleryQueue(
      viaSentinel(),
      parseSystem<CelerySystemConfig>({
        name: 'zeus',
        type: 'celery',
        queues: [randomName('sen_purge')],
        inspectTimeoutMs: 100,
        ...sentinelShape(),
      }),
    );
  });
});

describe('the connection factories', () => {
  /** Every .ts file under src/, relative to it. */
  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
    });
  const root = join(import.meta.dirname, '../../src');

  it('are the only code of a backend that opens a Redis connection', () => {
    const opening = /\bcreateRedisClient\(|\bcreateRedisCluster\(|\bnew (Redis|Cluster|IORedis)\(/;
    const openers = sources(root)
      .filter((path) =>
        readFileSync(path, 'utf8')
          .split('\n')
          .some((line) => !/^\s*(\/?\*|\/\/)/.test(line) && opening.test(line)),
      )
      .map((path) => relative(root, path))
      .sort();
    // The demo seeds its own Redis; everything watched goes through the factories.
    expect(openers.filter((path) => !path.startsWith('demo/'))).toEqual([
      'backends/bullmq/connections.ts',
      'backends/celery/connections.ts',
      'backends/redis-client.ts',
    ]);
  });
});
