import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import type { BullmqSystemConfig } from '../../src/config/schema.js';
import { configSchema } from '../../src/config/schema.js';
import { runPurge, runUndo } from '../../src/purge/engine.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { PurgeRecord } from '../../src/store/store.js';
import { waitFor } from '../helpers/bullmq-jobs.js';
import { type RedisClusterProcesses, startRedisCluster } from '../helpers/redis-shapes.js';
import { archivingPurge } from '../purge/engine-fixture.js';

describe('BullMQ on a three-master Redis Cluster', () => {
  let cluster: RedisClusterProcesses;
  let connection: Cluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
    connection = new Cluster(
      cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
      { redisOptions: { maxRetriesPerRequest: null } },
    );
  }, 60_000);
  afterAll(async () => {
    connection?.disconnect();
    await cluster?.stop();
  });

  const system = (extra: Record<string, unknown> = {}) =>
    configSchema.parse({
      systems: [
        {
          name: 'pushizo',
          type: 'bullmq',
          redis: `redis://127.0.0.1:${cluster.ports[0]}`,
          nodes: cluster.ports.slice(1).map((p) => `redis://127.0.0.1:${p}`),
          cluster: true,
          prefix: '{hs}',
          ...extra,
        },
      ],
    }).systems[0] as BullmqSystemConfig;

  it('refuses a prefix without a {hash-tag}, naming the fix', () => {
    const result = configSchema.safeParse({
      systems: [{ name: 'p', type: 'bullmq', redis: 'redis://h:7000', cluster: true, prefix: 'hs' }],
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'systems.0.prefix: expected a {hash-tag} prefix on Redis Cluster, as BullMQ requires (e.g. "{hs}")',
    ]);
  });

  describe('reads and pause', () => {
    let dispatch: Queue;
    let events: Queue;
    let failing: Worker;
    let backend: ReturnType<typeof createBullmqBackend>;

    beforeAll(async () => {
      dispatch = new Queue('dispatch-ios', { prefix: '{hs}', connection });
      events = new Queue('events', { prefix: '{hs}', connection });
      await dispatch.addBulk([1, 2, 3, 4].map((n) => ({ name: 'push', data: { n } })));
      await events.add('track', {}, { attempts: 1 });
      failing = new Worker(
        'events',
        async (): Promise<void> => {
          throw new Error('webhook 500');
        },
        { prefix: '{hs}', connection, name: 'events-worker' },
      );
      await waitFor('a failure', async () => (await events.getFailedCount()) === 1);
      backend = createBullmqBackend(system());
    }, 60_000);

    afterAll(async () => {
      await backend?.close();
      await failing?.close();
      await dispatch?.close();
      await events?.close();
    });

    it('discovers the queues on every master', async () => {
      expect(await backend.listQueues()).toEqual(['dispatch-ios', 'events']);
    });

    it('reads status in one round trip, to the master of the {hs} slot', async () => {
      await backend.status(); // the first one also loads the scripts on that master
      const before = backend.stats().roundTrips;
      const status = await backend.status();
      // One pipelined round trip, to the master that holds the {hs} slot, as README says.
      expect(backend.stats().roundTrips - before).toBe(1);
      const byName = Object.fromEntries(status.queues.map((q) => [q.name, q]));
      expect(byName['dispatch-ios']?.waiting).toBe(4);
      expect(byName.events?.failed).toBe(1);
      expect(status.redis.usedMemoryBytes).toBeGreaterThan(0);
      expect(status.workers.map((w) => w.name)).toContain('events-worker');
    });

    it('reads dead letters with their errors', async () => {
      expect((await backend.dlq('events', 5)).jobs[0]?.error).toBe('webhook 500');
    });

    it('pauses and resumes a queue', async () => {
      expect(await backend.pause('dispatch-ios')).toMatchObject({ isPaused: true });
      expect(await dispatch.isPaused()).toBe(true);
      expect(await backend.resume('dispatch-ios')).toMatchObject({ isPaused: false });
    });
  });

  describe('purge and undo', () => {
    let queue: Queue;
    let tmp: string;
    let store: ReturnType<typeof createSqliteStore>;
    let backend: ReturnType<typeof createBullmqBackend>;
    let purged: PurgeRecord;

    beforeAll(async () => {
      queue = new Queue('purge-me', { prefix: '{hs}', connection });
      await queue.addBulk(Array.from({ length: 1500 }, (_, n) => ({ name: 'push', data: { n } })));
      tmp = mkdtempSync(join(tmpdir(), 'qo-cluster-purge-'));
      store = createSqliteStore(join(tmp, 'queue-ops.db'));
      await store.migrate();
      backend = createBullmqBackend(system());
    }, 60_000);

    afterAll(async () => {
      await backend?.close();
      await queue?.obliterate({ force: true });
      await queue?.close();
      await store?.close();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    });

    it('purges a queue into the archive', async () => {
      const record = await archivingPurge(store, tmp, {
        id: 'r-cluster',
        system: 'pushizo',
        queue: 'purge-me',
        total: 1500,
        owner: 'test',
      });
      const purger = await backend.purger('purge-me');
      const { record: done } = await runPurge(record, { store, purger, owner: 'test', chunkSize: 500 });
      // The hashes were read through a raw pipe to the master of the {hs} slot, not by Lua.
      const pipes = await Promise.all(
        connection.nodes('master').map(async (node) =>
          String(await node.client('LIST'))
            .split('\n')
            .filter((line) => line.includes(' name=queue-ops:pushizo:purge:read '))
            .map((line) => `${node.options.port} ${/ cmd=(\S+) /.exec(line)?.[1]}`),
        ),
      );
      const slotMaster = connection.slots[calculateSlot('{hs}:purge-me:wait')]![0]!;
      expect(pipes.flat()).toEqual([`${slotMaster.split(':')[1]} hgetall`]);
      await purger.close();
      purged = done;
      expect(done).toMatchObject({ state: 'done', archived: 1500, purged: 1500 });
      expect(await queue.getWaitingCount()).toBe(0);
      expect(await queue.getJob('1')).toBeUndefined();
    }, 60_000);

    it('undo brings the purged jobs back', async () => {
      const restorer = await backend.purger('purge-me');
      expect(await runUndo(purged, { purger: restorer })).toEqual({
        restored: 1500,
        existing: [],
        alreadyThere: 0,
      });
      await restorer.close();
      expect(await queue.getWaitingCount()).toBe(1500);
    }, 60_000);

    it('a real worker then runs every restored job', async () => {
      const seen = new Set<number>();
      const worker = new Worker(
        'purge-me',
        async (job) => {
          seen.add((job.data as { n: number }).n);
        },
        { prefix: '{hs}', connection },
      );
      await waitFor('every job run', async () => seen.size === 1500);
      await worker.close();
    }, 60_000);
  });
});
