import type { Evidence, Fix, Outcome } from '../types.js';
import { deepest, fix, inScope, line } from './common.js';

/** Used memory at this share of maxmemory is the `redis-memory` rule's line. */
const NEAR = 0.9;
const FULL = 0.95;
const POSSIBLE = 0.8;

/**
 * Zeus 3: used memory near maxmemory, writes Redis refused for memory (its own OOM error count),
 * keys evicted under a policy other than `noeviction` (those are lost jobs), and the largest
 * contributors: the deepest queues, Celery results kept without a TTL.
 */
export function redisMemory(e: Evidence): Outcome {
  const redis = e.redis;
  if (!redis) return { result: 'unknown', reason: e.redisError ?? 'redisNotRead' };
  const ratio = redis.maxBytes > 0 ? redis.usedBytes / redis.maxBytes : 0;
  const refused = redis.oomRejections ?? 0;
  const evicted = redis.policy !== 'noeviction' ? (redis.evictedKeys ?? 0) : 0;
  const full = refused > 0 || evicted > 0 || ratio >= NEAR;
  if (!full && ratio < POSSIBLE) return { result: 'not-found' };

  const largest = deepest(
    inScope(e).filter((q) => q.waiting > 0),
    3,
  );
  const evidence = [];
  if (redis.maxBytes > 0)
    evidence.push(
      line('memoryUsed', {
        usedBytes: redis.usedBytes,
        maxBytes: redis.maxBytes,
        percent: Math.round(ratio * 100),
        policy: redis.policy,
      }),
    );
  if (refused > 0) evidence.push(line('writesRefused', { count: refused }));
  if (evicted > 0) evidence.push(line('keysEvicted', { count: evicted, policy: redis.policy }));
  const top = e.queues.find((q) => q.name === largest[0]);
  if (top) evidence.push(line('largestQueue', { queue: top.name, waiting: top.waiting }));
  const fixes: Fix[] = [];
  if (e.offers.expireResults) fixes.push(...fix('expire-results', e.system));
  if (top) fixes.push(...fix('purge', `${e.system}/${top.name}`, 'waiting'));
  return {
    result: 'found',
    finding: {
      confidence: refused > 0 || evicted > 0 || ratio >= FULL ? 'strong' : 'possible',
      queues: largest,
      evidence: evidence.slice(0, 4),
      fixes,
      weight: refused + evicted + Math.round(ratio * 1000),
      rule: 'redis-memory',
    },
  };
}
