import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import type { QueueBackend } from '../../src/backends/queue-backend.js';
import { createBackendRegistry } from '../../src/backends/registry.js';
import { statusReadOptions } from '../../src/commands/status.js';
import { configSchema } from '../../src/config/schema.js';
import { takeSample } from '../../src/escalation/sampler.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { LIBS } from '../helpers/bullmq-libs.js';
import { type LatencyProxy, startLatencyProxy } from '../helpers/latency-proxy.js';
import { plainMonitor } from '../helpers/plain-monitor.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * Issue 36 §7: the network detectors (PING round trips, INFO stats and clients, CLIENT LIST ages)
 * add at most one round trip to a monitor tick. Counted, not timed: the bot reaches the test's
 * Redis through a proxy that counts request bursts that follow an answer (`roundTrips()`), with a
 * delay long enough that no read's own writes straddle an answer. Their INFO and CLIENT LIST, and
 * the first PING, travel with the status read; the one more is the PING sent once it is answered.
 */
const redisUrl = testRedisUrl();
const { Queue } = LIBS[0]!.lib;
const QUEUES = ['dispatch-ios', 'webhooks', 'events'];
/** Each way: a 20 ms round trip, far above any gap between a read's own writes. */
const DELAY_MS = 10;

describe('round trips a monitor tick makes beyond the status read', () => {
  const prefix = randomName('trips');
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-trips-'));
  let proxy: LatencyProxy;
  let backend: QueueBackend;
  let store: SqliteStore;
  const config = () =>
    configSchema.parse({
      slack: { incidentChannel: 'C0BENCH' },
      store: `sqlite:${join(dir, 'q.db')}`,
      systems: [
        {
          name: 'pushizo',
          type: 'bullmq',
          redis: `redis://127.0.0.1:${proxy.port}`,
          prefix,
          queues: QUEUES,
        },
      ],
    });

  beforeAll(async () => {
    for (const name of QUEUES) {
      const queue = new Queue(name, { connection: connectionFor(redisUrl), prefix });
      await queue.addBulk(Array.from({ length: 5 }, (_, i) => ({ name: 'send', data: { i } })));
      await queue.close();
    }
    const target = new URL(redisUrl);
    proxy = await startLatencyProxy({ host: target.hostname, port: Number(target.port) }, DELAY_MS);
    const system = config().systems[0]!;
    if (system.type !== 'bullmq') throw new Error('unreachable');
    backend = createBullmqBackend(system);
    store = createSqliteStore(join(dir, 'q.db'));
    await store.migrate();
    // Connected and its scripts loaded: what is counted below is a tick's steady state.
    await backend.status();
  });

  afterAll(async () => {
    await backend?.close();
    await store?.close();
    await proxy?.close();
    await deletePrefix(redisUrl, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Round trips `work` makes (its second run: the first may load scripts or connect). */
  const tripsOf = async (work: () => Promise<unknown>) => {
    await work();
    const before = proxy.roundTrips();
    await work();
    return proxy.roundTrips() - before;
  };

  it('the detectors add one: the PING sent once the read is answered; everything else rides with the read', async () => {
    const withDetectors = createBackendRegistry([backend]);
    // The monitor before the detectors: one INFO persistence beside the read.
    const withoutDetectors = createBackendRegistry([{ ...backend, network: undefined }]);
    const read = await tripsOf(() => backend.status(undefined, statusReadOptions(false)));
    const bare = await tripsOf(() =>
      takeSample({ config: config(), backends: withoutDetectors }, [], Date.now()),
    );
    const sampled = await tripsOf(() =>
      takeSample({ config: config(), backends: withDetectors }, [], Date.now()),
    );
    const monitor = plainMonitor(config(), store, withDetectors);
    const tick = await tripsOf(() => monitor.tick());
    expect(read).toBe(1);
    expect(bare).toBe(read);
    expect(sampled).toBe(read + 1);
    expect(tick).toBe(read + 1);

    const sample = await takeSample({ config: config(), backends: withDetectors }, [], Date.now());
    const network = sample.systems[0]!.network!;
    // The first PING waits behind the read, the one after it measures the link alone: each 20 ms and more.
    expect(network.pings).toBeGreaterThanOrEqual(1);
    // Less 1 ms: the proxy's timers fire on Node's millisecond clock, the PING is timed on the
    // high-resolution one (19.93 ms was seen for two 10 ms delays).
    expect(network.rttP50Ms).toBeGreaterThanOrEqual(2 * DELAY_MS - 1);
    expect(network.clients).toBeGreaterThanOrEqual(1);
  });
});
