import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { testRedisUrl } from './helpers/test-redis.js';

it('the private redis-server the tests run against answers PING and is not the shared 6379', async () => {
  const url = testRedisUrl();
  expect(url).not.toContain(':6379');
  const redis = new Redis(url);
  expect(await redis.ping()).toBe('PONG');
  await redis.quit();
});
