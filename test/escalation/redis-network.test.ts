import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createBackendRegistry } from '../../src/backends/registry.js';
import { parseConfig } from '../../src/config/load.js';
import type { BullmqSystemConfig, Config } from '../../src/config/schema.js';
import type { Sample } from '../../src/escalation/samples.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { connectionFor } from '../helpers/bullmq-jobs.js';
import { runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, configYaml } from '../helpers/config-file.js';
import { type LatencyProxy, startLatencyProxy } from '../helpers/latency-proxy.js';
import { plainMonitor } from '../helpers/plain-monitor.js';

/**
 * Issue 36 §2: the unstable network to Redis, detected by the monitor's own ticks with the
 * default rules. Real BullMQ workers reach a private Redis through a TCP proxy; the bot reaches it
 * directly. When the proxy keeps cutting the workers' connections, their reconnections show in
 * every tick (connections that stay young) and `redis-network` fires; the same system, healthy,
 * with command-line runs coming and going (their connections are the bot's own), never does.
 */
const QUEUE = 'dispatch-ios';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('redis-network: a link that keeps dropping the workers, and a healthy one', () => {
  let redis: PrivateRedis;
  let proxy: LatencyProxy;
  const dir = tempDir('redis-network');
  const storeUrl = `sqlite:${join(dir.dir, 'queue-ops.db')}`;
  const configFile = join(dir.dir, 'queue-ops.yml');
  let config: Config;
  let store: Store;
  let backends: ReturnType<typeof createBackendRegistry>;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
    const url = new URL(redis.url);
    proxy = await startLatencyProxy({ host: url.hostname, port: Number(url.port) }, 0);
    const yaml = configYaml({
      slack: { incidentChannel: 'C0INCIDENT' },
      store: storeUrl,
      roles: { viewer: ['*'] },
      systems: [bullmqSystem('pushizo', redis.url, 'bull', { queues: [QUEUE] })],
      escalation: { intervalSeconds: 1 },
    });
    writeFileSync(configFile, yaml);
    config = parseConfig(yaml, {});
  });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  afterAll(async () => {
    await proxy?.close();
    await redis?.stop();
    dir.remove();
  });

  /** A fresh store and monitor, two workers through the proxy, and a producer on Redis itself. */
  async function setUp(db: string) {
    store = await openStore(storeUrl.replace('queue-ops.db', db));
    await store.migrate();
    backends = createBackendRegistry(config.systems.map((s) => createBullmqBackend(s as BullmqSystemConfig)));
    closers.push(
      () => store.close(),
      () => backends.close(),
    );
    // Back within 100 ms of a cut (BullMQ's own backoff waits a second or more): the tick sees them.
    const viaProxy = {
      ...connectionFor(redis.url),
      host: '127.0.0.1',
      port: proxy.port,
      retryStrategy: () => 100,
    };
    for (const name of ['w1', 'w2']) {
      const worker = new Worker(QUEUE, async () => 'sent', { connection: viaProxy, name, prefix: 'bull' });
      worker.on('error', () => undefined);
      closers.push(() => worker.close(true));
    }
    const queue = new Queue(QUEUE, { connection: connectionFor(redis.url), prefix: 'bull' });
    closers.push(() => queue.close());
    await queue.add('send', { n: 1 });
    return plainMonitor(config, store, backends, 'test');
  }

  const networkOf = (sample: Sample) => sample.systems[0]!.network!;

  it('fires when the workers connections keep dropping', async () => {
    const monitor = await setUp('unstable.db');
    await sleep(300);
    const first = await monitor.tick();
    expect(first.leader).toBe(true);
    let last = first;
    for (let i = 0; i < 4; i++) {
      await sleep(600);
      expect(proxy.dropAll()).toBeGreaterThan(0);
      // The workers reconnect before the next tick reads.
      await sleep(800);
      last = await monitor.tick();
    }
    if (!last.leader) throw new Error('not leader');
    const network = networkOf(last.sample);
    expect(network.signals).toContain('reconnects');
    expect(network.reconnects).toBeGreaterThan(0);
    expect(network.pings).toBeGreaterThanOrEqual(1);
    expect(network.rttMaxMs).toBeGreaterThanOrEqual(network.rttP50Ms);
    expect(last.firing.map((a) => a.rule)).toContain('redis-network');
    const alert = last.firing.find((a) => a.rule === 'redis-network')!;
    expect(alert).toMatchObject({ subject: 'pushizo', severity: 'warning' });
    expect(alert.value).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('stays quiet on a healthy system whose command-line runs come and go', async () => {
    const monitor = await setUp('healthy.db');
    await sleep(300);
    let last = await monitor.tick();
    for (let i = 0; i < 5; i++) {
      // A command-line run between two ticks: its connections come and go, named as the bot's.
      const run = await runCliInProcess(['--config', configFile, 'status'], { cwd: dir.dir });
      expect(run.code, run.stderr).toBe(0);
      await sleep(500);
      last = await monitor.tick();
      if (!last.leader) throw new Error('not leader');
      const network = networkOf(last.sample);
      expect(network.signals).toEqual([]);
    }
    if (!last.leader) throw new Error('not leader');
    const network = networkOf(last.sample);
    // The command-line runs did connect (Redis counts them) but are not churn.
    expect(network.receivedDelta).toBeGreaterThan(0);
    expect(network.reconnects).toBe(0);
    expect(last.firing.map((a) => a.rule)).not.toContain('redis-network');
  }, 60_000);
});
