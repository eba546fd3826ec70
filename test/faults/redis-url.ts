import { inject } from 'vitest';

/**
 * The test Redis for test/faults/*: one place to read it from, so that when the global setup hands
 * out one Redis per worker (main's test/helpers/test-redis.ts, `testRedisUrl()`), this is the only
 * line to change.
 */
export function faultsRedisUrl(): string {
  return inject('redisUrl');
}
