import type { Redis } from 'ioredis';
import { luaScript, runScript } from '../lua.js';
import type { QueuedJob } from '../queue-backend.js';

/**
 * The jobs a worker takes next, next first, read-only: the tail of `wait` (workers take from its
 * right end), then of the legacy `paused` list, then the lowest-scored `prioritized` (BullMQ takes
 * a waiting job before a prioritized one). Each job's `name` only, never `data`. A legacy "0:"
 * marker in a list (BullMQ < 5) is skipped, as the status script skips it.
 *
 * KEYS[1]: the queue's meta (routes the call on a cluster); ARGV[1]: `<prefix>:<queue>:`;
 * ARGV[2]: how many. Returns id, name pairs.
 */
const NEXT_JOBS = luaScript(`
local base, n = ARGV[1], tonumber(ARGV[2])
local ids = {}
for _, list in ipairs({ 'wait', 'paused' }) do
  if #ids < n then
    local tail = redis.call('LRANGE', base .. list, -(n + 1), -1)
    for i = #tail, 1, -1 do
      if #ids < n and string.sub(tail[i], 1, 2) ~= '0:' then ids[#ids + 1] = tail[i] end
    end
  end
end
if #ids < n then
  for _, id in ipairs(redis.call('ZRANGE', base .. 'prioritized', 0, n - #ids - 1)) do ids[#ids + 1] = id end
end
local out = {}
for _, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', base .. id, 'name') or ''
end
return out`);

export async function readNextJobs(
  client: Redis,
  prefix: string,
  queue: string,
  limit: number,
): Promise<QueuedJob[]> {
  const n = Math.min(10, Math.max(1, Math.floor(limit)));
  const flat = (await runScript(
    client,
    NEXT_JOBS,
    [`${prefix}:${queue}:meta`],
    [`${prefix}:${queue}:`, n],
  )) as string[];
  const jobs: QueuedJob[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) jobs.push({ id: flat[i]!, name: flat[i + 1]! });
  return jobs;
}
