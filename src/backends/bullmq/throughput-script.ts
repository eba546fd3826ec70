import { type LuaScript, luaScript } from '../lua.js';

/**
 * A set of at least this many finished jobs, all inside the span, is taken to be trimmed (by
 * `removeOnComplete`/`removeOnFail` with a count); a smaller one is a quiet or young queue.
 */
export const TRIMMED_AT_LEAST = 50;

/**
 * A sorted set of at most this many members is a listpack with Redis' default
 * `zset-max-listpack-entries`: ZCOUNT then parses every member's score as text (about 1.9 µs for
 * 100), where a bigger set (a skiplist) answers it in O(log n). Only which call comes first
 * depends on it, never a result.
 */
export const LISTPACK_AT_MOST = 128;

/** Fixed values per queue in {@link THROUGHPUT_BATCH}'s reply (raw durations follow when asked). */
export const THROUGHPUT_FIELDS = 13;

/** Queues per {@link THROUGHPUT_BATCH} call, as status batches them. */
export const THROUGHPUT_BATCH_QUEUES = 25;

/**
 * The Lua both {@link THROUGHPUT_BATCH} and the status script count finished jobs with (it expects
 * `rcall` = redis.call), so a rate means the same wherever it is read:
 * - `finishedAfter(key, since, card)`: jobs of a completed or failed set (scored by `finishedOn`)
 *   that finished after `since`, and where the set begins: -2 when it is empty (it keeps nothing to
 *   count from: `removeOnComplete: true`, or none finished yet), -1 when it reaches back past
 *   `since` (the count is exact), -3 when all of it is after `since` but it holds fewer than
 *   {@link TRIMMED_AT_LEAST} (a young or quiet queue, or one trimmed hard), else its oldest score
 *   (a set trimmed by a count or an age keeps less than asked: the rate is over what it keeps).
 *   On a small set ({@link LISTPACK_AT_MOST}) the oldest member is read first: when it is after
 *   `since` the count is the set's size and no ZCOUNT is needed (0.5 µs against 1.9 µs for 100
 *   members, `INFO commandstats`), and a busy queue trimmed by a count keeps just such a small set
 *   of recent jobs. A big set is counted first (O(log n)): one that reaches back, as one that keeps
 *   its jobs does, needs nothing more;
 * - `metricsIn(key, first)`: BullMQ's own per-minute counters, when its workers collect them
 *   (`metrics.maxDataPoints`): jobs counted in the whole minutes from `first` (epoch minutes) to
 *   now (the open minute is `count - prevCount`, the ones before are the `:data` list, newest first,
 *   from the minute before `prevTS`), and the running total; -1, -1 when not collected;
 * - `metricsCollected(prefix, names, from)`: whether any of the queues `names[from…]` has BullMQ's
 *   metrics, one EXISTS over all their metrics keys. A script asks it once, the first time a queue
 *   needs its metrics, and reads no queue's metrics when none has any (BullMQ collects them only
 *   when its workers are told to): one call a batch instead of two a queue.
 */
export const FINISHED_LUA = `
local function finishedAfter(key, since, card)
  if card == 0 then return 0, -2 end
  local oldest
  if card <= ${LISTPACK_AT_MOST} then
    oldest = tonumber(rcall('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
    -- Counting the old ones scans a listpack only as far as they go, from its head.
    if oldest <= tonumber(since) then return card - rcall('ZCOUNT', key, '-inf', since), -1 end
  else
    local n = rcall('ZCOUNT', key, '(' .. since, '+inf')
    if n < card then return n, -1 end
  end
  if card < ${TRIMMED_AT_LEAST} then return card, -3 end
  return card, oldest or tonumber(rcall('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
end
local function metricsCollected(prefix, names, from)
  local keys = {}
  for i = from, #names do
    keys[#keys + 1] = prefix .. names[i] .. ':metrics:completed'
    keys[#keys + 1] = prefix .. names[i] .. ':metrics:failed'
  end
  return #keys > 0 and rcall('EXISTS', unpack(keys)) > 0
end
local function metricsIn(key, first)
  local m = rcall('HMGET', key, 'count', 'prevTS', 'prevCount')
  local prevTS = tonumber(m[2])
  if not prevTS then return -1, -1 end
  local total = tonumber(m[1]) or 0
  local prevMinute = math.floor(prevTS / 60000)
  if prevMinute < first then return 0, total end
  local n = total - (tonumber(m[3]) or 0)
  local back = math.min(prevMinute - first, 1440)
  if back > 0 then
    for _, v in ipairs(rcall('LRANGE', key .. ':data', 0, back - 1)) do n = n + (tonumber(v) or 0) end
  end
  return n, total
end
local function firstMinute(now, since)
  return math.floor(now / 60000) - math.max(1, math.ceil((now - since) / 60000)) + 1
end
`;

/**
 * How fast a batch of queues is processing, read-only, in one script call. Per queue:
 * - jobs finished after ARGV[3], and where each set begins, and BullMQ's own metrics when its
 *   workers collect them: {@link FINISHED_LUA}, as the status script counts them;
 * - the newest ARGV[4] of each set after ARGV[3] (ZREVRANGEBYSCORE … LIMIT, never the whole
 *   set): their `timestamp`, `delay`, `processedOn` and `finishedOn` (4 fields, never `data`),
 *   and, sorted here, the p50 and p95 of wait (processedOn − due) and run (finishedOn − processedOn).
 * An idle queue costs its few O(1)/O(log n) calls; a busy one at most 2 × ARGV[4] HMGETs more.
 *
 * KEYS[1]: the first queue's meta (routes the call on a cluster, as STATUS_BATCH).
 * ARGV[1]: `<prefix>:`; ARGV[2]: now (epoch ms); ARGV[3]: since (epoch ms); ARGV[4]: sample per
 * set; ARGV[5]: '1' to append each sampled job's wait and run; ARGV[6…]: queue names.
 * Returns per queue: completed, failed, completedOldest, failedOldest (as `finishedAfter` says where
 * each set begins), metricsCompleted, metricsCompletedTotal, metricsFailed,
 * metricsFailedTotal (-1: not collected), sampled, waitP50, waitP95, runP50, runP95 (ms, -1: none),
 * then with ARGV[5] = '1', `sampled` pairs of wait, run.
 */
export const THROUGHPUT_BATCH: LuaScript = luaScript(`
local rcall = redis.call
local prefix, now, since, take, raw = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5] == '1'
${FINISHED_LUA}
local first = firstMinute(now, since)
local function pct(list, p)
  if #list == 0 then return -1 end
  return list[math.max(1, math.ceil(p * #list))]
end
local out = {}
local o = 0
-- Whether any queue of the batch has BullMQ's metrics: one EXISTS, asked at the first queue.
local metrics = nil
for i = 6, #ARGV do
  local base = prefix .. ARGV[i] .. ':'
  local completed, completedOldest = finishedAfter(base .. 'completed', since, rcall('ZCARD', base .. 'completed'))
  local failed, failedOldest = finishedAfter(base .. 'failed', since, rcall('ZCARD', base .. 'failed'))
  local mc, mct, mf, mft = -1, -1, -1, -1
  if metrics == nil then metrics = metricsCollected(prefix, ARGV, i) end
  if metrics then
    mc, mct = metricsIn(base .. 'metrics:completed', first)
    mf, mft = metricsIn(base .. 'metrics:failed', first)
  end
  local waits, runs, both = {}, {}, {}
  for _, set in ipairs({ 'completed', 'failed' }) do
    local n = set == 'completed' and completed or failed
    if n > 0 and take > 0 then
      local ids = rcall('ZREVRANGEBYSCORE', base .. set, '+inf', '(' .. since, 'LIMIT', 0, take)
      for _, id in ipairs(ids) do
        local job = rcall('HMGET', base .. id, 'timestamp', 'delay', 'processedOn', 'finishedOn')
        local added, started, done = tonumber(job[1]), tonumber(job[3]), tonumber(job[4])
        if added and started and done then
          local wait = math.max(0, started - (added + (tonumber(job[2]) or 0)))
          local run = math.max(0, done - started)
          waits[#waits + 1] = wait
          runs[#runs + 1] = run
          if raw then
            both[#both + 1] = wait
            both[#both + 1] = run
          end
        end
      end
    end
  end
  table.sort(waits)
  table.sort(runs)
  out[o + 1] = completed
  out[o + 2] = failed
  out[o + 3] = completedOldest
  out[o + 4] = failedOldest
  out[o + 5] = mc
  out[o + 6] = mct
  out[o + 7] = mf
  out[o + 8] = mft
  out[o + 9] = #runs
  out[o + 10] = pct(waits, 0.5)
  out[o + 11] = pct(waits, 0.95)
  out[o + 12] = pct(runs, 0.5)
  out[o + 13] = pct(runs, 0.95)
  o = o + 13
  for _, v in ipairs(both) do
    o = o + 1
    out[o] = v
  end
end
return out`);

/**
 * Delayed jobs by when they are due: four ZCOUNTs of the delayed set. BullMQ (5.x and 6.x) scores
 * a delayed job `due * 0x1000 + counter` (getDelayedScore.lua), so "due by t" is a score below
 * `(t + 1) * 0x1000`. Overdue jobs (due, not yet promoted) count as due in the next 5 minutes.
 * KEYS[1]: the delayed set; ARGV[1]: now (epoch ms). Returns next 5 min, hour, day, later.
 */
export const DELAYED_DUE: LuaScript = luaScript(`
local key, now = KEYS[1], tonumber(ARGV[1])
local function by(ms) return string.format('%.0f', (now + ms + 1) * 4096 - 1) end
local m5 = redis.call('ZCOUNT', key, '-inf', by(300000))
local h1 = redis.call('ZCOUNT', key, '-inf', by(3600000))
local d1 = redis.call('ZCOUNT', key, '-inf', by(86400000))
local all = redis.call('ZCARD', key)
return { m5, h1 - m5, d1 - h1, all - d1 }`);
