import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCeleryBackend } from '../../../src/backends/celery/index.js';
import { type CelerySystemConfig, configSchema } from '../../../src/config/schema.js';
import { OpsError } from '../../../src/errors.js';
import { freePort } from '../../../src/lib/redis-server.js';
import { publishCelery, redisDbUrl } from '../../helpers/celery-worker.js';
import { freezeTimers } from '../../helpers/frozen-timers.js';
import { testRedisUrl } from '../../helpers/test-redis.js';

// This file owns Redis DB 10.
const broker = redisDbUrl(testRedisUrl(), 10);

function system(overrides: Record<string, unknown>): CelerySystemConfig {
  return configSchema.parse({ systems: [{ name: 'zeus', type: 'celery', redis: broker, ...overrides }] })
    .systems[0] as CelerySystemConfig;
}

/** Accepts TCP connections and never answers: a Redis that hangs. */
let hanging: Server;
let hangingPort: number;
const sockets: Socket[] = [];
beforeAll(async () => {
  hanging = createServer((socket) => {
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  hangingPort = (hanging.address() as { port: number }).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => hanging.close(resolve));
  const db = new Redis(broker);
  await db.flushdb();
  await db.quit();
});

describe('celery backend when Redis misbehaves', () => {
  it('reports a Redis that accepts connections but never answers as RedisUnavailable within 5 seconds', async () => {
    const backend = createCeleryBackend(
      system({ redis: `redis://:secret-password@127.0.0.1:${hangingPort}/0`, queues: ['celery'] }),
    );
    try {
      for (const call of [() => backend.status(), () => backend.dlq('celery', 10), () => backend.workers()]) {
        // The 5 s are counted on stopped timers, not on this machine's clock: they are moved 5 s
        // on at once, and the call must settle with no timer after them (one that needs a later
        // timer never settles, and the test times out). The server never answers anything.
        freezeTimers();
        let error: unknown;
        try {
          const failed = call().catch((e: unknown) => e);
          await vi.advanceTimersByTimeAsync(5_000);
          error = await failed;
        } finally {
          vi.useRealTimers();
        }
        expect(error).toBeInstanceOf(OpsError);
        expect((error as OpsError).code).toBe('RedisUnavailable');
        expect(JSON.stringify((error as OpsError).params)).not.toContain('secret-password');
      }
    } finally {
      await backend.close();
    }
  });

  it('still reports depth when workers cannot be inspected, with a warning that hides the password', async () => {
    // A user that may read but not publish: pidbox needs PUBLISH, the status pipeline does not.
    const admin = new Redis(broker);
    const user = `qo-celery-nopub-${process.pid}`;
    await admin.call('ACL', 'SETUSER', user, 'on', '>secret-password', '~*', '&*', '+@all', '-publish');
    const url = new URL(broker);
    url.username = user;
    url.password = 'secret-password';
    const backend = createCeleryBackend(system({ redis: url.toString(), queues: ['celery'] }));
    try {
      const status = await backend.status();
      expect(status.queues[0]).toMatchObject({ name: 'celery', waiting: 0, isPaused: false });
      expect(status.workers).toEqual([]);
      expect(status.warnings.map((w) => w.code)).toEqual(['WorkerInspectFailed']);
      expect(String(status.warnings[0]?.params?.reason)).toMatch(/NOPERM/);
      expect(JSON.stringify(status)).not.toContain('secret-password');
    } finally {
      await backend.close();
      await admin.call('ACL', 'DELUSER', user);
      await admin.quit();
    }
  });

  it('still reports depth when only a separate result backend is down, with a warning', async () => {
    await publishCelery({ brokerUrl: broker }, [
      { task: 'tasks.add', args: [1, 2], queue: 'celery:default' },
    ]);
    const closed = await freePort();
    const backend = createCeleryBackend(
      system({ resultBackend: `redis://:secret-password@127.0.0.1:${closed}/1`, inspectTimeoutMs: 200 }),
    );
    try {
      const status = await backend.status(['celery:default']);
      expect(status.queues[0]).toMatchObject({ name: 'celery:default', waiting: 1, failed: 0 });
      expect(status.warnings).toEqual([
        { code: 'ResultBackendMissing', params: { reason: 'connection refused' } },
      ]);
      const error = await backend.dlq('celery:default', 5).catch((e: unknown) => e);
      expect((error as OpsError).code).toBe('RedisUnavailable');
      expect(JSON.stringify((error as OpsError).params)).not.toContain('secret-password');
    } finally {
      await backend.close();
    }
  });
});
