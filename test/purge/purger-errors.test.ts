import { setTimeout as sleep } from 'node:timers/promises';
import { Redis, ReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import { isConnectionFailure, withUnavailable } from '../../src/backends/purger-errors.js';
import { toRedisUnavailable } from '../../src/backends/redis-client.js';
import { messages } from '../../src/i18n/index.js';
import { startPrivateRedis } from '../../src/lib/redis-server.js';

/**
 * What a purge or undo takes for "Redis went away" (it then waits and resumes) versus anything
 * else (it stops and says why). A bug of ours taken for the first would be retried every 30 s for
 * ever, with the user told it goes on by itself.
 */
describe('isConnectionFailure', () => {
  it('takes ioredis connection errors and unavailable replies for Redis going away', () => {
    expect(isConnectionFailure(new Error('Connection is closed.'))).toBe(true);
    expect(
      isConnectionFailure(
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      ),
    ).toBe(true);
    expect(isConnectionFailure(new Error('Command timed out'))).toBe(true);
    expect(isConnectionFailure(new ReplyError('LOADING Redis is loading the dataset in memory'))).toBe(true);
  });

  it('does not take a reply to what was sent, nor a bug of ours, for Redis going away', () => {
    expect(isConnectionFailure(new ReplyError('ERR wrong number of arguments'))).toBe(false);
    expect(isConnectionFailure(new SyntaxError('Unexpected token } in JSON at position 7'))).toBe(false);
    expect(isConnectionFailure(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(
      false,
    );
    expect(isConnectionFailure(new RangeError('Invalid array length'))).toBe(false);
  });
});

describe("a purger's call once its Redis is gone", () => {
  it('says the connection was lost, also of a call sent after it was (which ioredis refuses as not connected)', async () => {
    const server = await startPrivateRedis();
    // As the backends make a purger's connection: no offline queue, made only once it answered.
    const client = new Redis(server.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      const purger = withUnavailable(createBullmqPurger({ client, prefix: 'qo', queue: 'q' }), (error) =>
        toRedisUnavailable('hs', error),
      );
      expect(await purger.places(['waiting'])).toContainEqual(
        expect.objectContaining({ name: 'wait', size: 0 }),
      );
      await server.kill();
      while (client.status === 'ready') await sleep(10);
      // What ioredis itself says of a call sent now.
      await expect(client.llen('qo:q:wait')).rejects.toThrow(/Stream isn't writeable/);
      await expect(purger.places(['waiting'])).rejects.toMatchObject({
        code: 'RedisUnavailable',
        params: { system: 'hs', reason: messages().errors.redisReasons.connectionLost },
      });
    } finally {
      client.disconnect();
      await server.stop();
    }
  });
});
