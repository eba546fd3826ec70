import { type LuaScript, luaScript } from '../lua.js';
import { FINISHED_LUA } from './throughput-script.js';

/** Values per queue in {@link STATUS_BATCH}'s reply. */
export const STATUS_FIELDS = 14;
/** Values per queue that follow them when the rates are asked (ARGV[3] is a time). */
export const RATE_FIELDS = 6;

/**
 * Queues per {@link STATUS_BATCH} call: about eleven O(1) calls each, so a call of 100 holds Redis
 * for well under a millisecond, and 1,000 queues are ten calls in the same round trip.
 */
export const STATUS_BATCH_QUEUES = 100;

/**
 * Everything `status` needs about a batch of queues, read-only, in one script call: per queue
 * the counts of every state, the paused flag, when the next job to be picked became due (the next
 * job's id has to be read before its timestamp, which a plain pipeline cannot do), and the
 * failures since ARGV[2], and, when asked, the jobs completed and failed since ARGV[3] (the rates
 * `status` and every monitor sample show: a few O(log n) calls a queue, counted as
 * THROUGHPUT_BATCH counts them, without its timing of jobs). One call per batch (it was one per queue, with nine key names each):
 * the client sends only the queue names and reads back one flat array of integers; at 1,000
 * queues the client spent most of a status call building and parsing the per-queue calls.
 *
 * The keys are built here from the prefix. KEYS[1] (the first queue's meta) is declared so that a
 * cluster client routes the call; every key of the system lives in that key's slot, since on a
 * cluster the prefix must be one hash tag (config/systems/bullmq.ts).
 *
 * ARGV[1]: `<prefix>:`; ARGV[2]: epoch ms or '+inf' (count no failures); ARGV[3]: epoch ms or
 * '+inf' (no rates); ARGV[4]: now (epoch ms, for BullMQ's metrics minutes); ARGV[5…]: queue names.
 * Returns, per queue in order: wait, paused, active, prioritized, delayed, failed, completed,
 * waiting-children, isPaused (0|1), due (epoch ms, -1 when no job waits), failedSince, and the
 * global limits from the meta hash (the one HMGET that also says paused): concurrency, rate limit
 * max and duration (ms), each -1 when not set. Then, with rates: completed and failed after ARGV[3],
 * where each set begins (as FINISHED_LUA's `finishedAfter` says), and the jobs BullMQ's metrics
 * counted in the minutes since ARGV[3] where the kept jobs cannot say (-1: not collected, or not
 * read), completed then failed.
 *
 * A list whose tail is a legacy "0:…" marker (BullMQ < 5 put markers in the wait list) counts one
 * less, as `getCounts-1.lua` does, but without its RPOP: this script never writes.
 */
export const STATUS_BATCH: LuaScript = luaScript(`
local rcall = redis.call
local prefix, since, rateSince, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
${FINISHED_LUA}
local rates = rateSince ~= '+inf'
local sinceAfter = nil
if since ~= '+inf' then sinceAfter = '(' .. since end
local first = 0
if rates then first = firstMinute(now, tonumber(rateSince)) end
-- The rates' span covers the time since ARGV[2]: a queue with no failure in it has none since.
local sinceInSpan = rates and sinceAfter ~= nil and tonumber(since) >= tonumber(rateSince)
local function peek(key)
  local n = rcall('LLEN', key)
  if n == 0 then return 0, nil end
  local id = rcall('LINDEX', key, -1)
  if string.sub(id, 1, 2) == '0:' then
    n = n - 1
    if n == 0 then return 0, nil end
    id = rcall('LINDEX', key, -2)
  end
  return n, id
end
local function int(value)
  local n = tonumber(value)
  if n == nil then return -1 end
  return math.floor(n)
end
local out = {}
local o = 0
-- nil until a queue needs BullMQ's metrics (then: does any queue from there on have them).
local metrics = nil
for i = 5, #ARGV do
  local base = prefix .. ARGV[i] .. ':'
  local waitN, waitId = peek(base .. 'wait')
  local pausedN, pausedId = peek(base .. 'paused')
  local nextId = waitId or pausedId
  if not nextId then nextId = rcall('ZRANGE', base .. 'prioritized', 0, 0)[1] end
  -- Waiting since it became due: created, its delay run out, or (a retry) its last attempt begun.
  local due = -1
  if nextId then
    local job = rcall('HMGET', base .. nextId, 'timestamp', 'delay', 'processedOn')
    local created = tonumber(job[1])
    if created then
      due = created + (tonumber(job[2]) or 0)
      local started = tonumber(job[3]) or 0
      if started > due then due = started end
    end
  end
  local failedN = rcall('ZCARD', base .. 'failed')
  local failedInSpan, failedOldest
  if rates then failedInSpan, failedOldest = finishedAfter(base .. 'failed', rateSince, failedN) end
  -- Counted straight away, even on a small (listpack) set that ZCOUNT scans: an integer reply
  -- costs the script less than the newest member and its score read into Lua to rule a count
  -- out (over 1,000 sets of 50 older failures: 0.3 µs a set against 1.6 µs, EVALSHA timed whole).
  -- Not at all where the rates just found no failure in a span that covers the time since.
  local failedSince = 0
  if sinceAfter and failedN > 0 and not (sinceInSpan and failedInSpan == 0) then
    failedSince = rcall('ZCOUNT', base .. 'failed', sinceAfter, '+inf')
  end
  out[o + 1] = waitN
  out[o + 2] = pausedN
  out[o + 3] = rcall('LLEN', base .. 'active')
  out[o + 4] = rcall('ZCARD', base .. 'prioritized')
  out[o + 5] = rcall('ZCARD', base .. 'delayed')
  local completedN = rcall('ZCARD', base .. 'completed')
  out[o + 6] = failedN
  out[o + 7] = completedN
  out[o + 8] = rcall('ZCARD', base .. 'waiting-children')
  local meta = rcall('HMGET', base .. 'meta', 'paused', 'concurrency', 'max', 'duration')
  out[o + 9] = meta[1] and 1 or 0
  out[o + 10] = due
  out[o + 11] = failedSince
  out[o + 12] = int(meta[2])
  out[o + 13] = int(meta[3])
  out[o + 14] = int(meta[4])
  o = o + 14
  if rates then
    local completed, completedOldest = finishedAfter(base .. 'completed', rateSince, completedN)
    out[o + 1] = completed
    out[o + 2] = completedOldest
    out[o + 3] = failedInSpan
    out[o + 4] = failedOldest
    -- BullMQ's metrics only where the kept jobs cannot say (see finishedAfter): two calls a busy
    -- queue saves, and what a queue that keeps its jobs reports is the same either way. Whether
    -- any queue left in the batch has metrics is asked once, when the first one needs them.
    out[o + 5] = -1
    out[o + 6] = -1
    if completedOldest ~= -1 or failedOldest ~= -1 then
      if metrics == nil then metrics = metricsCollected(prefix, ARGV, i) end
      if metrics and completedOldest ~= -1 then out[o + 5] = metricsIn(base .. 'metrics:completed', first) end
      if metrics and failedOldest ~= -1 then out[o + 6] = metricsIn(base .. 'metrics:failed', first) end
    end
    o = o + 6
  end
end
return out`);
