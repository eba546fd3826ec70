import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createCeleryBackend } from '../../src/backends/celery/index.js';
import type { QueueBackend } from '../../src/backends/queue-backend.js';
import type { BullmqSystemConfig, CelerySystemConfig } from '../../src/config/schema.js';
import { celeryEnvelope } from '../../src/demo/seed-celery.js';
import { isOpsError } from '../../src/errors.js';
import { messages } from '../../src/i18n/index.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { parseSystem } from '../helpers/redis-shapes.js';

/**
 * A URL whose database the server does not have (`/99` on a Redis of 16). ioredis reports the
 * refused SELECT as an error event and goes on in database 0: without the check, status showed
 * database 0's queues under the system's name, and a purge would have taken them.
 */
describe('a system whose Redis URL names a database the server does not have', () => {
  let server: PrivateRedis;
  beforeAll(async () => {
    server = await startPrivateRedis();
    // Queues in database 0, where a client whose SELECT failed would end up.
    const queue = new Queue('dispatch', {
      prefix: 'db0',
      connection: { host: '127.0.0.1', port: server.port },
    });
    await queue.add('push', {});
    await queue.close();
    const redis = new Redis(server.url);
    await redis.lpush(
      'celery',
      JSON.stringify(celeryEnvelope({ queue: 'celery', task: 't', args: [], priority: 0 })),
    );
    redis.disconnect();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const cases: [string, () => QueueBackend][] = [
    [
      'BullMQ',
      () =>
        createBullmqBackend(
          parseSystem<BullmqSystemConfig>({
            name: 'pushizo',
            type: 'bullmq',
            redis: `${server.url}/99`,
            prefix: 'db0',
          }),
        ),
    ],
    [
      'Celery',
      () =>
        createCeleryBackend(
          parseSystem<CelerySystemConfig>({
            name: 'zeus',
            type: 'celery',
            redis: `${server.url}/99`,
            queues: ['celery'],
            inspectTimeoutMs: 100,
          }),
        ),
    ],
  ];

  for (const [kind, create] of cases) {
    it(`${kind}: status is refused, naming the database, and shows nothing of database 0`, async () => {
      const backend = create();
      try {
        for (let attempt = 0; attempt < 2; attempt++) {
          // The first call (connecting) and the next (on the connection already open) alike.
          const error = await backend.status().then(
            (status) => status,
            (e: unknown) => e,
          );
          expect(isOpsError(error) && error.code, JSON.stringify(error)).toBe('RedisUnavailable');
          const line = messages('en').errors.describe(error as never);
          expect(line).toContain('no database 99');
          expect(line).toContain('check the number at the end of the URL');
        }
      } finally {
        await backend.close();
      }
    });
  }

  it('a database the server has still works (database 3, empty)', async () => {
    const backend = createBullmqBackend(
      parseSystem<BullmqSystemConfig>({
        name: 'pushizo',
        type: 'bullmq',
        redis: `${server.url}/3`,
        prefix: 'db0',
      }),
    );
    try {
      expect((await backend.status()).queues).toEqual([]);
    } finally {
      await backend.close();
    }
  });
});
