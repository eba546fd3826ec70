import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { runLeaderJobsOnce } from '../../src/background/jobs.js';
import { LIMIT_LEASE } from '../../src/escalation/monitor.js';
import { runMonitorOnce } from '../../src/escalation/once.js';
import { createEscalation, type Escalation } from '../../src/escalation/runtime.js';
import { silentLogger } from '../../src/lib/logger.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { asAlice, limitsConfig } from '../helpers/limits-setup.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * One lifter at a time for limits whose `--for` ran out. A bot with no alert channel lifts them
 * under the limits' own lease; a cron `monitor --once` beside it is the monitor's leader, a lease
 * of its own. Both lifting one limit would put a Celery task's rate back twice, a late one over a
 * newer limit. So `monitor --once` lifts only when the limits' lease is free or its own, and gives
 * it back when it ends. Two processes on one SQLite store and one real Redis.
 */
describe('a --for limit is lifted by one process, whichever leases they lead under', () => {
  const redisUrl = testRedisUrl();
  const prefix = randomName('onelift');
  const dir = mkdtempSync(join(tmpdir(), 'qo-one-lifter-'));
  let clock = Date.parse('2030-01-01T10:00:00.000Z');
  let bot: QueueOps;
  let cron: QueueOps;
  let botEscalation: Escalation;
  let cronEscalation: Escalation;
  let redis: Redis;
  let queue: Queue;

  const config = () => limitsConfig(redisUrl, prefix, dir);
  const concurrencyInRedis = () => redis.hget(`${prefix}:sends:meta`, 'concurrency');
  const activeValues = async () => (await cron.store.activeLimits('pushizo')).map((l) => l.value);
  const cronOnce = () =>
    runMonitorOnce({
      escalation: cronEscalation,
      leaderJobsOnce: () =>
        runLeaderJobsOnce({ escalation: cronEscalation, limits: cron.limits }, silentLogger()),
      store: cron.store.escalation,
      locale: 'en',
      hasToken: false,
      hasChannel: false,
      drainMs: 0,
    });

  beforeAll(async () => {
    queue = new Queue('sends', { connection: connectionFor(redisUrl), prefix });
    await queue.add('send', {});
    redis = new Redis(redisUrl);
    const common = { env: {}, logger: silentLogger(), now: () => new Date(clock) };
    bot = await createQueueOps({ ...common, config: config() });
    cron = await createQueueOps({ ...common, config: config() });
    botEscalation = createEscalation({ runtime: bot, logger: silentLogger(), label: 'bot' });
    cronEscalation = createEscalation({ runtime: cron, logger: silentLogger(), label: 'cli' });
  });

  afterAll(async () => {
    await bot?.close();
    await cron?.close();
    await queue?.close();
    redis?.disconnect();
    await deletePrefix(redisUrl, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  it('monitor --once ticks but leaves the lift to the bot holding the limits lease, and lifts once it is free', async () => {
    const set = await bot.dispatcher.handle(asAlice('concurrency', 'pushizo/sends', '3', '--for', '1m'));
    expect(set.ok, set.message.text).toBe(true);
    expect(await concurrencyInRedis()).toBe('3');

    // The bot with no alert channel leads by the limits' lease.
    expect(await botEscalation.monitor.limitLease.claim()).toBe(true);
    clock += 61_000;
    expect(await botEscalation.monitor.limitLease.claim()).toBe(true);

    // The cron run is the monitor's leader and samples, but the limit is not its to lift.
    const first = await cronOnce();
    expect((first.data as { leader: boolean }).leader).toBe(true);
    expect(await activeValues()).toEqual([3]);
    expect(await concurrencyInRedis()).toBe('3');
    // It did not take the limits' lease either: the bot still holds it.
    expect((await cron.store.escalation.getLease(LIMIT_LEASE))?.owner).toBe(botEscalation.owner);

    // The bot goes away (its lease given back): the next cron run lifts the limit, and gives the
    // limits' lease back when it ends, so the bot (or the next run) can take it at once.
    await botEscalation.monitor.stop();
    await cronOnce();
    expect(await activeValues()).toEqual([]);
    expect(await concurrencyInRedis()).toBeNull();
    expect(await cron.store.escalation.getLease(LIMIT_LEASE)).toBeUndefined();
    const expired = (await cron.audit.recent(50)).filter((e) => e.action === 'limit.expired');
    expect(expired).toHaveLength(1);
  });
});
