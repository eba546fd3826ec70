import { type LuaScript, luaScript } from '../lua.js';

/**
 * A batch of BullMQ's `reprocessJob` (what `Job.retry('failed', { resetAttemptsMade: true,
 * resetAttemptsStarted: true })` runs) in one script call, for the ids given, in the order given
 * (newest failure first). For each id the outcome is the one `reprocessJob` of the queue's major
 * gives when run id by id in that order:
 *   - no job hash, or not in the failed set any more: nothing written (the id stays where it is);
 *   - else: off the failed set; `finishedOn`, `processedOn`, `failedReason`, `atm` and `ats`
 *     removed (all its attempts again); back in `wait` (LPUSH, or RPUSH for a `lifo` job), or in
 *     6.x `prioritized` for a job with a priority (score from the queue's priority counter, as
 *     `addJobWithPriority` computes it), or in 5.x the `paused` list of a paused queue; a child
 *     moved back into its parent's dependencies; one `waiting` event each, in order; the queue's
 *     marker set unless it is paused or at its concurrency.
 * Returns the positions (1-based) of the ids it left alone: usually none, so the reply is short.
 * test/backends/bullmq/retry-script.test.ts checks it writes what `reprocessJob` writes.
 *
 * Per job it makes two calls (HDEL, XADD) where `Queue.retryJobs()` makes three (HDEL, HGET,
 * XADD); everything else is once per batch. Where the time goes was measured instruction by
 * instruction (docs/benchmarks.md), hence these choices:
 *   - Which ids are still failed, and each job's `opts`, `parentKey` and `priority`: the ids were
 *     read newest first, so a batch usually is the failed set's run from its first id's rank. One
 *     `SORT failed BY nosort DESC LIMIT rank n GET # GET <base>*->opts …` answers that run's ids
 *     and the three fields of each in one flat reply: when its ids are the ids given, all are
 *     still failed and nothing more is read per job. Turning a reply into Lua values costs more
 *     than the command (an HMGET's three-field table: about 4,800 instructions a job, against
 *     2,000 for HMGET itself), hence one reply for the batch. SORT would turn a small (listpack)
 *     set into a skiplist as it reads it, so it reads only a set already one (any of more than
 *     128 jobs); a Redis that refuses it (an ACL without @dangerous, asked first where Redis can
 *     be asked; a cluster whose prefix has no hash tag) answers an error and the batch takes the
 *     other way.
 *   - Otherwise (a filtered selection, ids retried or failed again since they were read, a small
 *     set): ZMSCORE answers each score as a double Redis formats as text (`%.17g`), which costs
 *     more per id than the job's HDEL, so the members between the first and the last id's score
 *     come from one ZREVRANGEBYSCORE over that window, members only. An id outside the window is
 *     asked for alone (ZSCORE); a window much wider than the batch falls back to ZMSCORE. Then one
 *     HMGET of `opts`, `parentKey` and `priority` per job moved.
 *   - Existence: HDEL answers how many fields it removed, and a failed job always has some; only
 *     a job it removed nothing from is checked with EXISTS. HDEL of a missing hash writes nothing.
 *   - The `waiting` events are added without MAXLEN and the stream trimmed once, after them, to
 *     `opts.maxLenEvents` (~): approximate trimming removes whole nodes from the head while as
 *     many entries as the cap remain, so the stream comes out as trimming at every XADD leaves it.
 *     Each trim removes at most Redis' default of 100 nodes' worth: a stream already further over
 *     its cap (the cap lowered since) loses that much once per batch instead of at each event.
 * What `reprocessJob` does once per job and cannot change within one atomic call (the paused and
 * concurrency flags, `opts.maxLenEvents`) is read once per batch, and the writes that only depend
 * on order are made in one command each (one ZREM, or a ZREMRANGEBYRANK of a run all moved, one
 * LPUSH, one RPUSH, one INCRBY and one ZADD).
 *
 * KEYS: failed, wait, paused, meta, active, marker, prioritized, pc, events
 * ARGV[1]: the queue's key base `<prefix>:<queue>:`; ARGV[2]: the major ('5' or '6');
 * ARGV[3…]: the job ids.
 */
export const RETRY_FAILED_BATCH: LuaScript = luaScript(`
local rcall = redis.call
local find = string.find
local base, major = ARGV[1], ARGV[2]
local n = #ARGV - 2
local skipped, ns = {}, 0
if n == 0 then return skipped end
local failedKey = KEYS[1]
local withPriority = major ~= '5'

-- The batch as the failed set's run from its first id's rank, newest first: when it is exactly
-- the ids given, every one is still failed, and the same SORT read each job's fields. SORT would
-- turn a small (listpack) set into a skiplist, so only a set already one is read this way; a
-- '*' in the key base would be taken for the pattern's; a Redis that refuses SORT's GET (ACL,
-- cluster without a hash tag) leaves the ids to the checks below. A bot whose ACL denies SORT is
-- asked first (7.0+), so its ACL LOG does not get a denial each batch.
local rows, rank
if rcall('OBJECT', 'ENCODING', failedKey) == 'skiplist' and not find(base, '*', 1, true) and
  (not redis.acl_check_cmd or redis.acl_check_cmd('SORT', failedKey)) then
  rank = rcall('ZREVRANK', failedKey, ARGV[3])
  -- Ids spread over the set (a filtered selection) are not a run: not read twice.
  if rank and rcall('ZREVRANK', failedKey, ARGV[n + 2]) == rank + n - 1 then
    local got = redis.pcall('SORT', failedKey, 'BY', 'nosort', 'DESC', 'LIMIT', rank, n, 'GET', '#',
      'GET', base .. '*->opts', 'GET', base .. '*->parentKey', 'GET', base .. '*->priority')
    if not got.err then
      rows = got
      for i = 1, n do
        if got[4 * i - 3] ~= ARGV[i + 2] then
          rows = nil
          break
        end
      end
    end
  end
end

-- Otherwise the ids still failed, as a set; when windowed, an id outside the window is asked for alone.
local member, windowed = {}, false
if not rows then
  local bounds = rcall('ZMSCORE', failedKey, ARGV[3], ARGV[n + 2])
  local hi, lo = bounds[1], bounds[2]
  if hi and lo then
    if tonumber(hi) < tonumber(lo) then hi, lo = lo, hi end
    if rcall('ZCOUNT', failedKey, lo, hi) <= 2 * n then
      windowed = true
      local window = rcall('ZREVRANGEBYSCORE', failedKey, hi, lo)
      for j = 1, #window do member[window[j]] = true end
    end
  end
  if not windowed then
    local scores = rcall('ZMSCORE', failedKey, unpack(ARGV, 3))
    for i = 1, n do
      if scores[i] then member[ARGV[i + 2]] = true end
    end
  end
end

local attrs = rcall('HMGET', KEYS[4], 'paused', 'concurrency', 'opts.maxLenEvents')
local pausedOrMaxed = false
local target = KEYS[2]
if attrs[1] then
  pausedOrMaxed = true
  if major == '5' then target = KEYS[3] end
elseif attrs[2] then
  pausedOrMaxed = rcall('LLEN', KEYS[5]) >= tonumber(attrs[2])
end
local maxEvents = attrs[3] or 10000
local events = KEYS[9]

-- Job.retry reads opts.lifo from the job's options; unreadable options are not lifo. Jobs of a
-- queue mostly share one options string, so it is looked at again only when it changes.
local lastOpts, lastLifo = false, false
local gone, ng = {}, 0
local lpush, nl, rpush, nr = {}, 0, {}, 0
local prio, prioIds, np = {}, {}, 0
for i = 1, n do
  local id = ARGV[i + 2]
  local jobKey = base .. id
  local failed = rows
  if not rows then
    -- false once moved: an id given twice is moved once, as reprocessJob would.
    local known = member[id]
    failed = known or (known == nil and windowed and rcall('ZSCORE', failedKey, id))
  end
  if not failed or (rcall('HDEL', jobKey, 'finishedOn', 'processedOn', 'failedReason', 'atm', 'ats') == 0 and
    rcall('EXISTS', jobKey) == 0) then
    ns = ns + 1
    skipped[ns] = i
  else
    ng = ng + 1
    gone[ng] = id
    local opts, parentKey, p
    if rows then
      local at = 4 * i
      opts, parentKey, p = rows[at - 2], rows[at - 1], rows[at]
    else
      member[id] = false
      local f = rcall('HMGET', jobKey, 'opts', 'parentKey', 'priority')
      opts, parentKey, p = f[1], f[2], f[3]
    end
    if p == '0' or not p or not withPriority or (tonumber(p) or 0) == 0 then
      if opts ~= lastOpts then
        lastOpts = opts
        lastLifo = false
        if opts and find(opts, '"lifo":true', 1, true) then
          local ok, decoded = pcall(cjson.decode, opts)
          lastLifo = ok and type(decoded) == 'table' and decoded.lifo == true
        end
      end
      if lastLifo then
        nr = nr + 1
        rpush[nr] = id
      else
        nl = nl + 1
        lpush[nl] = id
      end
    else
      np = np + 1
      prio[np] = tonumber(p)
      prioIds[np] = id
    end
    if parentKey and rcall('EXISTS', parentKey) == 1 then
      if rcall('ZREM', parentKey .. ':unsuccessful', jobKey) == 1 or
        rcall('HDEL', parentKey .. ':failed', jobKey) == 1 then
        rcall('SADD', parentKey .. ':dependencies', jobKey)
      end
    end
    rcall('XADD', events, '*', 'event', 'waiting', 'jobId', id, 'prev', 'failed')
  end
end
if ng == 0 then return skipped end

if not attrs[3] then rcall('HSET', KEYS[4], 'opts.maxLenEvents', maxEvents) end
rcall('XTRIM', events, 'MAXLEN', '~', maxEvents)
if rows and ns == 0 then
  -- All of the run moved: it leaves by rank, without a lookup per id.
  rcall('ZREMRANGEBYRANK', failedKey, -(rank + n), -(rank + 1))
else
  rcall('ZREM', failedKey, unpack(gone))
end
if nl > 0 then rcall('LPUSH', target, unpack(lpush)) end
if nr > 0 then rcall('RPUSH', target, unpack(rpush)) end
if np > 0 then
  local last = rcall('INCRBY', KEYS[8], np)
  local args = {}
  for j = 1, np do
    local counter = last - np + j
    args[2 * j - 1] = prio[j] * 0x100000000 + counter % 0x100000000
    args[2 * j] = prioIds[j]
  end
  rcall('ZADD', KEYS[7], unpack(args))
end
if not pausedOrMaxed then rcall('ZADD', KEYS[6], 0, '0') end
return skipped`);

/** The keys {@link RETRY_FAILED_BATCH} declares, in its KEYS order. */
export function retryBatchKeys(prefix: string, queue: string): string[] {
  const base = `${prefix}:${queue}:`;
  return ['failed', 'wait', 'paused', 'meta', 'active', 'marker', 'prioritized', 'pc', 'events'].map(
    (suffix) => base + suffix,
  );
}
