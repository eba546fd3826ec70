import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createBackendRegistry } from '../../src/backends/registry.js';
import { type BullmqSystemConfig, configSchema } from '../../src/config/schema.js';
import { trendSource } from '../../src/escalation/alerts.js';
import { createMonitor } from '../../src/escalation/monitor.js';
import { createOutbox } from '../../src/escalation/outbox.js';
import {
  decodeSample,
  decodeSystemColumns,
  encodeSample,
  type Sample,
} from '../../src/escalation/samples.js';
import { loadTrend } from '../../src/escalation/trend.js';
import { createLogger } from '../../src/lib/logger.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import { connectionFor, deletePrefix, randomName, systemFor } from '../helpers/bullmq-jobs.js';
import { LIBS } from '../helpers/bullmq-libs.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * The monitor's sample history as stored: a queue's fields as columns (a sample of 1,000 queues
 * is a quarter of what it was as objects), read back exactly as taken; rows stored before, one
 * object per queue, still count for the rules' windows and are still drawn by `trend`. Real
 * SQLite, and for the monitor a real BullMQ queue on the test's Redis.
 */
const redisUrl = testRedisUrl();
const MINUTE = 60_000;
const { Queue } = LIBS[0]!.lib;

/** One system's queue as the monitor samples it, with the fields only some queues have. */
function sampleAt(at: number, queues: Sample['systems'][number]['queues']): Sample {
  return {
    at,
    systems: [
      {
        name: 'pushizo',
        type: 'bullmq',
        ok: true,
        memory: { used: 1_000_000, max: 0, policy: 'noeviction' },
        workers: ['w1|127.0.0.1:5000'],
        persistence: { rdb: 'ok', aof: null },
        queues,
      },
      { name: 'zeus', type: 'celery', ok: false, error: 'Redis unreachable', workers: null, queues: [] },
    ],
  };
}

const queue = (name: string, waiting: number) => ({
  name,
  waiting,
  active: 0,
  delayed: 0,
  failed: 0,
  oldestWaitingSeconds: waiting ? 90 : null,
  workers: 0,
});

describe('stored samples', () => {
  const dirs: string[] = [];
  const stores: SqliteStore[] = [];
  const openStore = async () => {
    const dir = mkdtempSync(join(tmpdir(), 'queue-ops-samples-'));
    dirs.push(dir);
    const store = createSqliteStore(join(dir, 'queue-ops.db'));
    stores.push(store);
    await store.migrate();
    return store;
  };
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('read back exactly as taken, fields only some queues have included, and a quarter of the size', () => {
    const taken = sampleAt(Date.parse('2030-03-01T09:00:00.000Z'), [
      { ...queue('dispatch-ios', 12), failedNew: 3, head: { id: 'm-1', firstSeen: 1 }, throughput: 4.5 },
      { ...queue('webhooks', 0), paused: true },
      { ...queue('events', 7), failedNew: 0, waitP95Seconds: 1.2, runP95Seconds: 0.3 },
    ]);
    expect(decodeSample(encodeSample(taken))).toEqual(taken);
    // What a bot watching 1,000 queues writes every tick.
    const big = sampleAt(
      0,
      Array.from({ length: 1000 }, (_, i) => ({ ...queue(`q${i}`, 700), failedNew: 0 })),
    );
    expect(decodeSample(encodeSample(big))).toEqual(big);
    expect(encodeSample(big).length).toBeLessThan(JSON.stringify(big).length / 3);
  });

  it("one system's columns, read straight from either stored version, hold what decodeSample reads", () => {
    const taken = sampleAt(Date.parse('2030-03-01T09:00:00.000Z'), [
      { ...queue('dispatch-ios', 12), failedNew: 3, head: { id: 'm-1', firstSeen: 1 }, throughput: 4.5 },
      { ...queue('webhooks', 0), paused: true },
      { ...queue('events', 7), failedNew: 0, waitP95Seconds: 1.2, runP95Seconds: 0.3 },
    ]);
    const fields = [
      'name',
      'waiting',
      'oldestWaitingSeconds',
      'failedNew',
      'head',
      'throughput',
      'paused',
    ] as const;
    for (const text of [encodeSample(taken), JSON.stringify(taken)]) {
      for (const { queues, ...system } of taken.systems) {
        const columns = decodeSystemColumns(text, system.name)!;
        expect({ at: columns.at, system: columns.system, names: columns.names }).toEqual({
          at: taken.at,
          system,
          names: queues.map((q) => q.name),
        });
        for (const field of fields) {
          const column = columns.column(field);
          expect(queues.map((_, i) => column(i))).toEqual(queues.map((q) => q[field]));
        }
      }
      expect(decodeSystemColumns(text, 'nope')).toBeUndefined();
    }
  });

  it('trend draws a window holding samples stored as objects (before) and as columns alike', async () => {
    const store = await openStore();
    const now = Date.now();
    for (let i = 0; i < 6; i++) {
      const sample = sampleAt(now - (6 - i) * MINUTE, [queue('dispatch-ios', i * 10), queue('webhooks', 1)]);
      await store.escalation.appendSample(
        new Date(sample.at).toISOString(),
        i < 3 ? JSON.stringify(sample) : encodeSample(sample),
      );
    }
    const trend = await loadTrend(
      trendSource(store.escalation),
      [],
      { system: 'pushizo', queue: 'dispatch-ios', window: '1h' },
      now,
    );
    expect(trend.points.map((p) => p.values.waiting)).toEqual([0, 10, 20, 30, 40, 50]);
  });

  describe('the monitor over a history stored before', () => {
    const prefix = randomName('samples');
    const closers: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });
    afterAll(async () => {
      await deletePrefix(redisUrl, prefix);
    });

    it('counts the samples stored as objects toward `for`, and stores its own as columns', async () => {
      const name = 'dispatch-ios';
      const jobs = new Queue(name, { connection: connectionFor(redisUrl), prefix });
      closers.push(() => jobs.close());
      await jobs.addBulk(Array.from({ length: 5 }, (_, i) => ({ name: 'send', data: { i } })));
      const system = { ...systemFor(redisUrl, prefix, [name]), name: 'pushizo' };
      const config = configSchema.parse({
        systems: [system],
        escalation: {
          groupBy: 'none',
          rules: [{ name: 'backlog', queues: ['pushizo/*'], metric: 'waiting', above: 2, for: '2m' }],
        },
      });
      const backend = createBullmqBackend(config.systems[0] as BullmqSystemConfig);
      closers.push(() => backend.close());

      const tickOver = async (history: Sample[]) => {
        const store = await openStore();
        for (const sample of history)
          await store.escalation.appendSample(new Date(sample.at).toISOString(), JSON.stringify(sample));
        const logger = createLogger({ level: 'silent' });
        const now = () => new Date();
        const deps = { store: store.escalation, settings: config.escalation, owner: 't', now, logger };
        const monitor = createMonitor({
          config,
          backends: createBackendRegistry([backend]),
          store,
          outbox: createOutbox({ ...deps, locale: 'en' }),
          logger,
          now,
          owner: 't',
        });
        const outcome = await monitor.tick();
        const rows = await store.escalation.listSamples(new Date(0).toISOString());
        return { outcome, rows };
      };

      // Three minutes of the backlog, stored by a version before columns.
      const before = [3, 2, 1].map((ago) => sampleAt(Date.now() - ago * MINUTE, [queue(name, 5)]));
      const upgraded = await tickOver(before);
      expect(upgraded.outcome).toMatchObject({ leader: true });
      const opened = upgraded.outcome.leader ? upgraded.outcome.opened : [];
      expect(opened.map((a) => a.key)).toEqual([`backlog|pushizo/${name}`]);
      expect(upgraded.rows).toHaveLength(4);
      const own = upgraded.rows.at(-1)!;
      expect(encodeSample(decodeSample(own.data))).toBe(own.data);
      expect(decodeSample(own.data).systems[0]!.queues).toMatchObject([{ name, waiting: 5 }]);

      // The same backlog seen for the first time: not two minutes yet.
      const fresh = await tickOver([]);
      expect(fresh.outcome.leader && fresh.outcome.opened).toEqual([]);
    });
  });
});
