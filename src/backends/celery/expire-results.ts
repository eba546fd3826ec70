import type { Redis } from 'ioredis';
import { scanWithin } from '../bounded-scan.js';
import { luaScript, runScript } from '../lua.js';
import type { ExpireResultsOutcome, ExpireResultsPreview, ExpireResultsProgress } from '../queue-backend.js';
import { RESULT_KEY_PREFIX } from './keys.js';

/**
 * Giving Celery's stored results a TTL: the runbook's `EVAL` loop over `KEYS "celery-task-meta-*"`
 * (`if ttl == -1 then expire … 86400`), done without `KEYS` and without holding Redis: a SCAN walk
 * whose every step is one SCAN call or one script over the at most 1,000 keys it returned.
 */

/** Result keys of one batch without a TTL (PTTL −1); keys gone meanwhile (−2) are not counted. */
const COUNT_WITHOUT_TTL = luaScript(`
local n = 0
for _, key in ipairs(KEYS) do
  if redis.call('TTL', key) == -1 then n = n + 1 end
end
return n`);

/**
 * Sets ARGV[1] seconds on each key of the batch that still has no TTL, checked in the same atomic
 * step: a key Celery (or anyone) gave a TTL in between keeps its own.
 */
const EXPIRE_WITHOUT_TTL = luaScript(`
local ttl = tonumber(ARGV[1])
local n = 0
for _, key in ipairs(KEYS) do
  if redis.call('TTL', key) == -1 then
    redis.call('EXPIRE', key, ttl)
    n = n + 1
  end
end
return n`);

/** Keys a counting step looks at (SCAN COUNT): one TTL each. */
const SCAN_COUNT = 1000;
/** Keys an expiring step looks at: a TTL and an EXPIRE each, so half as many per script call. */
const EXPIRE_SCAN_COUNT = 500;

const COUNT_BUDGET_MS = 20_000;

/**
 * Counts result keys without a TTL over the whole keyspace (exact), unless the walk takes longer
 * than `maxMillis` of our time (default 20 s), in which case the count is a lower bound and says so.
 */
export async function countResultsWithoutTtl(
  client: Redis,
  options: { maxMillis?: number; now?: () => number } = {},
): Promise<ExpireResultsPreview> {
  const total = await client.dbsize();
  let withoutTtl = 0;
  let results = 0;
  const walk = await scanWithin(
    client,
    {
      maxKeys: Number.POSITIVE_INFINITY,
      maxMillis: options.maxMillis ?? COUNT_BUDGET_MS,
      count: SCAN_COUNT,
      match: `${RESULT_KEY_PREFIX}*`,
      ...(options.now ? { now: options.now } : {}),
    },
    async (keys) => {
      results += keys.length;
      withoutTtl += Number(await runScript(client, COUNT_WITHOUT_TTL, keys, []));
    },
  );
  return { withoutTtl, results, complete: walk.stoppedBy === 'done', total };
}

/**
 * Gives every result key without a TTL `ttlSeconds`, batch by batch (SCAN, then one script over
 * what it returned), until the cursor comes back: a walk that never stops early, since an action
 * that was approved should finish. SCAN may return a key twice; the second time it has a TTL.
 */
export async function expireResultsWithoutTtl(
  client: Redis,
  ttlSeconds: number,
  progress?: ExpireResultsProgress,
): Promise<ExpireResultsOutcome> {
  const total = await client.dbsize();
  let expired = 0;
  let results = 0;
  await scanWithin(
    client,
    {
      maxKeys: Number.POSITIVE_INFINITY,
      maxMillis: Number.POSITIVE_INFINITY,
      count: EXPIRE_SCAN_COUNT,
      match: `${RESULT_KEY_PREFIX}*`,
    },
    async (keys, scanned) => {
      results += keys.length;
      expired += Number(await runScript(client, EXPIRE_WITHOUT_TTL, keys, [String(ttlSeconds)]));
      progress?.(Math.min(scanned, total), total, expired);
    },
  );
  return { expired, results, ttlSeconds };
}
