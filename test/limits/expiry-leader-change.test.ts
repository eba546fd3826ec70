import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { silentLogger } from '../../src/lib/logger.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { type GateProxy, startGateProxy } from '../helpers/gate-proxy.js';
import { asAlice, limitsConfig } from '../helpers/limits-setup.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * `concurrency … --for` running out while the monitor's lease changes hands. Two replicas share
 * one SQLite store and one real Redis. Replica A held the lease, read the limit as due and stalled
 * on its way to Redis (the gate holds what it sends); the lease moved to B, which lifted the limit,
 * and Alice set a new one through B. Then A wakes and what it sent lands. The new limit must stand
 * in Redis as in the store: the old leader's late restore must not undo it.
 */
describe('a --for limit running out while the leader changes', () => {
  const redisUrl = testRedisUrl();
  const prefix = randomName('lease');
  const dir = mkdtempSync(join(tmpdir(), 'qo-limit-lease-'));
  let clock = Date.parse('2030-01-01T10:00:00.000Z');
  let gate: GateProxy;
  let a: QueueOps;
  let b: QueueOps;
  let redis: Redis;
  let queue: Queue;

  const configFor = (url: string) => limitsConfig(url, prefix, dir);
  const concurrencyInRedis = () => redis.hget(`${prefix}:sends:meta`, 'concurrency');

  beforeAll(async () => {
    const { hostname, port } = new URL(redisUrl);
    gate = await startGateProxy({ host: hostname, port: Number(port) });
    queue = new Queue('sends', { connection: connectionFor(redisUrl), prefix });
    await queue.add('send', {});
    redis = new Redis(redisUrl);
    const common = { env: {}, logger: silentLogger(), now: () => new Date(clock) };
    a = await createQueueOps({ ...common, config: configFor(gate.url) });
    b = await createQueueOps({ ...common, config: configFor(redisUrl) });
  });

  afterAll(async () => {
    gate.release();
    await a?.close();
    await b?.close();
    await gate?.close();
    await queue?.close();
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the new limit set after the lift stands, in Redis and in the store, and the expiry is audited once', async () => {
    const set = await b.dispatcher.handle(asAlice('concurrency', 'pushizo/sends', '3', '--for', '1m'));
    expect(set.ok, set.message.text).toBe(true);
    expect(await concurrencyInRedis()).toBe('3');
    // A's connection is up before the stall (the gate then holds commands, not the handshake).
    expect((await a.dispatcher.handle(asAlice('status', 'pushizo/sends'))).ok).toBe(true);

    clock += 61_000;
    gate.hold();
    const stalled = a.limits.liftExpired();
    await gate.waiting();

    // The lease is B's now: it lifts the limit, then Alice sets a new one through B.
    expect((await b.limits.liftExpired()).map((l) => l.value)).toEqual([3]);
    expect(await concurrencyInRedis()).toBeNull();
    const again = await b.dispatcher.handle(asAlice('concurrency', 'pushizo/sends', '5'));
    expect(again.ok, again.message.text).toBe(true);
    expect(await concurrencyInRedis()).toBe('5');

    gate.release();
    expect(await stalled).toEqual([]);

    expect(await concurrencyInRedis()).toBe('5');
    expect((await b.store.activeLimits('pushizo')).map((l) => [l.target, l.kind, l.value])).toEqual([
      ['sends', 'concurrency', 5],
    ]);
    const expired = (await b.audit.recent(50)).filter((e) => e.action === 'limit.expired');
    expect(expired).toHaveLength(1);
  });
});
