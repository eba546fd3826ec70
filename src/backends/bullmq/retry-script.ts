import { type LuaScript, luaScript } from '../lua.js';

/**
 * A batch of BullMQ's `reprocessJob` (what `Job.retry('failed', { resetAttemptsMade: true,
 * resetAttemptsStarted: true })` runs) in one script call, for the ids given, in the order given
 * (newest failure first). For each id the outcome is the one `reprocessJob` of the queue's major
 * gives when run id by id in that order:
 *   - no job hash: -1, nothing written (the id stays in the failed set);
 *   - not in the failed set any more: -3, nothing written;
 *   - else 1: off the failed set; `finishedOn`, `processedOn`, `failedReason`, `atm` and `ats`
 *     removed (all its attempts again); back in `wait` (LPUSH, or RPUSH for a `lifo` job), or in
 *     6.x `prioritized` for a job with a priority (score from the queue's priority counter, as
 *     `addJobWithPriority` computes it), or in 5.x the `paused` list of a paused queue; a child
 *     moved back into its parent's dependencies; one `waiting` event each, in order; the queue's
 *     marker set unless it is paused or at its concurrency.
 * What `reprocessJob` does once per job and cannot change within one atomic call (the paused and
 * concurrency flags, `opts.maxLenEvents`) is read once per batch, and the writes that only depend
 * on order are made in one command each (one ZREM, one LPUSH, one RPUSH, one INCRBY and one ZADD):
 * about three calls per job (HMGET, HDEL, XADD), as `Queue.retryJobs()` makes, against ten.
 * test/backends/bullmq/retry-script.test.ts checks it writes what `reprocessJob` writes.
 *
 * A job exists when its hash has any of `timestamp`, `opts`, `priority` or `parentKey` (BullMQ
 * writes the first three with every job), which one HMGET reads with what the move needs.
 *
 * KEYS: failed, wait, paused, meta, active, marker, prioritized, pc, events
 * ARGV[1]: the queue's key base `<prefix>:<queue>:`; ARGV[2]: the major ('5' or '6');
 * ARGV[3…]: the job ids. Returns one number per id.
 */
export const RETRY_FAILED_BATCH: LuaScript = luaScript(`
local rcall = redis.call
-- Job.retry reads opts.lifo from the job's options; unreadable options are not lifo.
local function isLifo(opts)
  local ok, decoded = pcall(cjson.decode, opts)
  return ok and type(decoded) == 'table' and decoded.lifo == true
end
local base, major = ARGV[1], ARGV[2]
local n = #ARGV - 2
local out, ids = {}, {}
for i = 1, n do
  ids[i] = ARGV[i + 2]
  out[i] = -3
end
if n == 0 then return out end
local scores = rcall('ZMSCORE', KEYS[1], unpack(ids))
local moved, fields = {}, {}
for i = 1, n do
  local f = rcall('HMGET', base .. ids[i], 'timestamp', 'opts', 'priority', 'parentKey')
  if not (f[1] or f[2] or f[3] or f[4]) then
    out[i] = -1
  elseif scores[i] then
    out[i] = 1
    moved[#moved + 1] = i
    fields[i] = f
  end
end
if #moved == 0 then return out end

local attrs = rcall('HMGET', KEYS[4], 'paused', 'concurrency')
local pausedOrMaxed = false
local target = KEYS[2]
if attrs[1] then
  pausedOrMaxed = true
  if major == '5' then target = KEYS[3] end
elseif attrs[2] then
  pausedOrMaxed = rcall('LLEN', KEYS[5]) >= tonumber(attrs[2])
end
local maxEvents = rcall('HGET', KEYS[4], 'opts.maxLenEvents')
if not maxEvents then
  maxEvents = 10000
  rcall('HSET', KEYS[4], 'opts.maxLenEvents', maxEvents)
end

local gone, lpush, rpush, prio, prioIds = {}, {}, {}, {}, {}
for _, i in ipairs(moved) do
  local id, f = ids[i], fields[i]
  local jobKey = base .. id
  gone[#gone + 1] = id
  rcall('HDEL', jobKey, 'finishedOn', 'processedOn', 'failedReason', 'atm', 'ats')
  local priority = 0
  if major ~= '5' then priority = tonumber(f[3]) or 0 end
  if priority ~= 0 then
    prio[#prio + 1] = priority
    prioIds[#prioIds + 1] = id
  elseif f[2] and string.find(f[2], '"lifo":true', 1, true) and isLifo(f[2]) then
    rpush[#rpush + 1] = id
  else
    lpush[#lpush + 1] = id
  end
  local parentKey = f[4]
  if parentKey and rcall('EXISTS', parentKey) == 1 then
    if rcall('ZREM', parentKey .. ':unsuccessful', jobKey) == 1 or
      rcall('HDEL', parentKey .. ':failed', jobKey) == 1 then
      rcall('SADD', parentKey .. ':dependencies', jobKey)
    end
  end
  rcall('XADD', KEYS[9], 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', id, 'prev', 'failed')
end
rcall('ZREM', KEYS[1], unpack(gone))
if #lpush > 0 then rcall('LPUSH', target, unpack(lpush)) end
if #rpush > 0 then rcall('RPUSH', target, unpack(rpush)) end
if #prioIds > 0 then
  local last = rcall('INCRBY', KEYS[8], #prioIds)
  local args = {}
  for j = 1, #prioIds do
    local counter = last - #prioIds + j
    args[#args + 1] = prio[j] * 0x100000000 + counter % 0x100000000
    args[#args + 1] = prioIds[j]
  end
  rcall('ZADD', KEYS[7], unpack(args))
end
if not pausedOrMaxed then rcall('ZADD', KEYS[6], 0, '0') end
return out`);

/** The keys {@link RETRY_FAILED_BATCH} declares, in its KEYS order. */
export function retryBatchKeys(prefix: string, queue: string): string[] {
  const base = `${prefix}:${queue}:`;
  return ['failed', 'wait', 'paused', 'meta', 'active', 'marker', 'prioritized', 'pc', 'events'].map(
    (suffix) => base + suffix,
  );
}
