import { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import { createBullmqPurger } from '../../src/backends/bullmq/purge.js';
import type { QueuePurger } from '../../src/backends/queue-backend.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../helpers/test-redis.js';

export interface BullmqPurgerFixture {
  /** A fresh BullMQ prefix per test; the queue is `q`. */
  prefix: string;
  /** A plain connection to seed and inspect with. */
  redis: Redis;
  /** The purger of `<prefix>:q`, on its own connection. */
  purger: QueuePurger;
}

/** Registers the hooks of a test that drives one BullMQ queue's purger directly. */
export function useBullmqPurger(stem: string): BullmqPurgerFixture {
  const redisUrl = testRedisUrl();
  const fixture = {} as BullmqPurgerFixture;
  beforeEach(() => {
    fixture.prefix = randomName(stem);
    fixture.redis = new Redis(redisUrl);
    fixture.purger = createBullmqPurger({ client: new Redis(redisUrl), prefix: fixture.prefix, queue: 'q' });
  });
  afterEach(async () => {
    await fixture.purger.close();
    fixture.redis.disconnect();
    await deletePrefix(redisUrl, fixture.prefix);
  });
  return fixture;
}
