import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCeleryBackend } from '../../../src/backends/celery/index.js';
import { type CelerySystemConfig, configSchema } from '../../../src/config/schema.js';
import type { OpsError } from '../../../src/errors.js';
import { type PrivateRedis, startPrivateRedis } from '../../../src/lib/redis-server.js';
import { otherConnections, redisMonitor } from '../../helpers/redis-monitor.js';

// A redis-server of its own: MONITOR sees every command sent to it, by anyone.
let redis: PrivateRedis;
beforeAll(async () => {
  redis = await startPrivateRedis();
});
afterAll(async () => {
  // Every client the test opened is closed before its Redis goes: one left would reconnect to a
  // closed port and print "[ioredis] Unhandled error event" into the run.
  const left = await otherConnections(redis.url);
  await redis.stop();
  expect(left).toBe(0);
});

describe('celery backend, an unknown queue', () => {
  it('is looked for again with one fresh discovery, not a keyspace SCAN on every typo', async () => {
    const admin = new Redis(redis.url);
    const queues = Array.from({ length: 30 }, (_, i) => `celery:q${String(i).padStart(2, '0')}`);
    for (const queue of queues) await admin.sadd('_kombu.binding.celery', `${queue}\x06\x16\x06\x16${queue}`);
    let clock = Date.now();
    const backend = createCeleryBackend(
      configSchema.parse({
        systems: [{ name: 'zeus', type: 'celery', redis: redis.url, inspectTimeoutMs: 200 }],
      }).systems[0] as CelerySystemConfig,
      { now: () => clock },
    );
    const { monitor, close: closeMonitor } = await redisMonitor(redis.url);
    const scans: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      const scan = String(args[0]).toLowerCase() === 'scan' && args[1] === '0';
      if (scan && args.includes('_kombu.binding.*')) scans.push(args.join(' '));
    });
    try {
      const typo = async () => (await backend.status(['celery:q0']).catch((e: unknown) => e)) as OpsError;
      const first = await typo();
      expect(first.code).toBe('UnknownQueue');
      expect(first.params).toMatchObject({ system: 'zeus', queue: 'celery:q0', suggestion: 'celery:q00' });
      // Thirty queues exist; the answer names twenty, as BullMQ's does.
      expect(first.params.valid).toHaveLength(20);
      expect((await typo()).code).toBe('UnknownQueue');
      expect((await typo()).code).toBe('UnknownQueue');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(scans).toHaveLength(1);

      // A queue bound since then is found by name once the last discovery is a few seconds old.
      await admin.sadd('_kombu.binding.celery', 'celery:new\x06\x16\x06\x16celery:new');
      clock += 6_000;
      expect((await backend.status(['celery:new'])).queues.map((q) => q.name)).toEqual(['celery:new']);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(scans).toHaveLength(2);
    } finally {
      closeMonitor();
      admin.disconnect();
      await backend.close();
    }
  });
});
