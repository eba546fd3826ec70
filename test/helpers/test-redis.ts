import { inject } from 'vitest';

/**
 * The private Redis of the worker running this file (the global setup starts one per worker).
 * Two files running at once never share a server, so one file's FLUSHDB, MONITOR or Celery worker
 * never meets another's keys or commands.
 */
export function testRedisUrl(): string {
  const urls = inject('redisUrls');
  const poolId = Number(process.env.VITEST_POOL_ID ?? '1');
  const url = urls[(poolId - 1) % urls.length];
  if (url === undefined) throw new Error('no private Redis was started for this test worker');
  return url;
}
