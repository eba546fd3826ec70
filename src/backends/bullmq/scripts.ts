import { type LuaScript, luaScript } from '../lua.js';
import { TAKE_NEAR_TAIL_LUA } from '../tail-window.js';
import { MARKER_MOVED, UNDO_MARKER_LUA } from '../undo-marker.js';

export type { LuaScript };

/**
 * The hashes of a batch read by Lua (READ_SELECTED: a filtered selection's, and a whole-state
 * purge's when its raw pipe cannot read them): given the locals `ids` and `scores` (the batch, in
 * walk order), `base` (the key base), `kind` and `budget` (stop once the hashes pass that many
 * bytes), it returns `{ ids, scores, logs, hashes… }`: each job's hash as cjson writes its HGETALL
 * (a JSON array of field, value, …), so the client builds each archive line from ready JSON with
 * no per-job command or JSON parsing. Building the whole line here costs Redis twice as much (a Lua
 * table and a string concatenation per job), and Redis is the one thread every worker shares. Logs
 * are read only when one EXISTS over the whole batch says some job has any (almost none do). A job
 * without a hash (a legacy `0:` marker in the wait list, a job removed since) is left out.
 * Read-only: runs on a Redis at maxmemory.
 *
 * Replies, tail (lowest score) first: ids a JSON array; scores a JSON array of strings for a zset,
 * '' for a list; logs '' when no job has any, else a JSON array of each job's log lines; then the
 * hashes, one JSON array a line, in blocks of about 32 KB (a string a job costs the client an
 * object each; one string for all costs Lua 5.1's table.concat more than the rest of the script).
 */
export const READ_HASHES = `
local logKeys = {}
for i = 1, #ids do logKeys[i] = base .. ids[i] .. ':logs' end
local anyLogs = false
for s = 1, #logKeys, 1000 do
  if redis.call('EXISTS', unpack(logKeys, s, math.min(s + 999, #logKeys))) > 0 then anyLogs = true end
end
local out = { '[]', '', '' }
local taken, takenScores, takenLogs = {}, {}, {}
local group, grouped, bytes = {}, 0, 0
for i = 1, #ids do
  local fields = redis.call('HGETALL', base .. ids[i])
  if #fields > 0 then
    local hash = cjson.encode(fields)
    taken[#taken + 1] = ids[i]
    takenScores[#taken] = scores[i]
    if anyLogs then
      -- cjson writes an empty table as {}: no logs are written by hand.
      local got = redis.call('LRANGE', logKeys[i], 0, -1)
      takenLogs[#taken] = #got > 0 and cjson.encode(got) or '[]'
    end
    group[#group + 1] = hash
    grouped = grouped + #hash
    if grouped >= 32768 then
      out[#out + 1] = table.concat(group, '\\n')
      group, grouped = {}, 0
    end
    bytes = bytes + #hash
    if bytes >= budget then break end
  end
end
if #group > 0 then out[#out + 1] = table.concat(group, '\\n') end
if #taken > 0 then
  out[1] = cjson.encode(taken)
  if kind ~= 'list' then out[2] = cjson.encode(takenScores) end
  if anyLogs then out[3] = '[' .. table.concat(takenLogs, ',') .. ']' end
end
return out`;

/**
 * Deletes jobs of one batch only where they still are: a job a worker took meanwhile (no longer
 * in this list or zset) keeps its hash and is reported 0. Every Redis call inside a script costs
 * far more than the same command pipelined, so the common case is a handful of calls per batch:
 * - list: the batch was read from the tail and producers push at the head, so it is still the
 *   tail, minus what workers took from it meanwhile; one LRANGE checks exactly that and one
 *   LTRIM removes it. Anything else (a LIFO job pushed on the tail since, a recovery deleting a
 *   batch that is no longer at the tail) is looked for among the last 2n + 64 entries only: they
 *   are popped and those not in the batch pushed back in their order (take_near_tail). So a call never
 *   touches more than that window, however long the list: after a Redis came back from a snapshot
 *   older than the purge, the jobs of chunks already deleted are back in front of a recovered
 *   chunk's, and an LREM per id scanned past all of them (a call of 500 held Redis 135-290 ms
 *   behind 10,000). An id beyond the window is reported 0 and stays queued: the walk reads it
 *   again from the tail and deletes it then (the engine knows it as archived, "met again").
 * - zset: ZMSCORE says which are still there; one ZREM removes them.
 * Then one UNLINK of their hashes and logs. LRANGE/LTRIM/RPOP/ZREM/UNLINK need no memory, and
 * the RPUSH after an RPOP gives back less than it took, so this runs on a Redis at maxmemory.
 *
 * KEYS[1]: the list or zset. ARGV: kind, key base, then the ids (list: tail first). Returns 1/0
 * per id.
 */
export const PURGE_DELETE = luaScript(`${TAKE_NEAR_TAIL_LUA}
local kind, base = ARGV[1], ARGV[2]
local n = #ARGV - 2
local out, gone = {}, {}
for i = 1, n do out[i] = 0 end
if kind == 'list' then
  local tail = redis.call('LRANGE', KEYS[1], -n, -1)
  local m = #tail
  local first = nil
  if m > 0 then
    for i = 1, n do
      if ARGV[i + 2] == tail[m] then first = i break end
    end
  end
  local whole = false
  if first ~= nil then
    local k = n - first + 1
    whole = k <= m
    if whole then
      for x = 0, k - 1 do
        if tail[m - x] ~= ARGV[first + x + 2] then whole = false break end
      end
    end
    if whole then
      redis.call('LTRIM', KEYS[1], 0, -(k + 1))
      for i = first, n do out[i] = 1 end
    end
  end
  if not whole then
    local want = {}
    for i = 1, n do want[ARGV[i + 2]] = i end
    take_near_tail(KEYS[1], 2 * n + 64, function(entry)
      local i = want[entry]
      if i == nil then return false end
      want[entry] = nil
      out[i] = 1
      return true
    end)
  end
else
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(ARGV, 3))
  local present = {}
  for i = 1, n do
    if scores[i] then
      out[i] = 1
      present[#present + 1] = ARGV[i + 2]
    end
  end
  for s = 1, #present, 500 do
    redis.call('ZREM', KEYS[1], unpack(present, s, math.min(s + 499, #present)))
  end
end
for i = 1, n do
  if out[i] == 1 then
    gone[#gone + 1] = base .. ARGV[i + 2]
    gone[#gone + 1] = base .. ARGV[i + 2] .. ':logs'
  end
end
for s = 1, #gone, 1000 do
  redis.call('UNLINK', unpack(gone, s, math.min(s + 999, #gone)))
end
return out`);

/**
 * Undo: puts archived jobs back, each line \`{"p":place,"id":…,"s":score,"j":{"fields":…,"logs":…}}\`
 * (or \`"hash":{…}\` in place of \`fields\`, as archives written before held it),
 * in the order given (lists: RPUSH, so the last line given is the next one a worker takes), never
 * over a job that exists again (its id is returned instead). Adds BullMQ's own markers so that
 * blocked workers wake up: \`0\` for waiting jobs unless the queue is paused, the next delayed
 * timestamp for delayed ones.
 *
 * KEYS[1]: the undo's marker (see undo-marker.ts), checked first and moved in the same call.
 * ARGV[1..3]: the undo step; ARGV[4]: the key base (every job key is under it); ARGV[5…]: lines.
 * Returns { restored, existing ids… }, or { -1 } without writing when another run moved the marker.
 */
export const PURGE_RESTORE = luaScript(`${UNDO_MARKER_LUA}
if not check_marker() then return { ${MARKER_MOVED} } end
local base = ARGV[4]
local lists = { wait = true, paused = true }
local restored, existing = 0, {}
local ready, delayed = false, false
for i = 5, #ARGV do
  local rec = cjson.decode(ARGV[i])
  local key = base .. rec.id
  if redis.call('EXISTS', key) == 1 then
    existing[#existing + 1] = rec.id
  else
    -- fields: HGETALL's list, as archived now; hash: the object archives held before.
    local fields = rec.j.fields
    if fields == nil then
      fields = {}
      for f, v in pairs(rec.j.hash) do
        fields[#fields + 1] = f
        fields[#fields + 1] = v
      end
    end
    for s = 1, #fields, 1000 do
      redis.call('HSET', key, unpack(fields, s, math.min(s + 999, #fields)))
    end
    local logs = rec.j.logs
    for s = 1, #logs, 1000 do
      redis.call('RPUSH', key .. ':logs', unpack(logs, s, math.min(s + 999, #logs)))
    end
    if lists[rec.p] then
      redis.call('RPUSH', base .. rec.p, rec.id)
      if rec.p == 'wait' then ready = true end
    else
      redis.call('ZADD', base .. rec.p, rec.s, rec.id)
      if rec.p == 'prioritized' then ready = true end
      if rec.p == 'delayed' then delayed = true end
    end
    restored = restored + 1
  end
end
if ready and redis.call('HEXISTS', base .. 'meta', 'paused') == 0 then
  redis.call('ZADD', base .. 'marker', 0, '0')
end
if delayed then
  local next = redis.call('ZRANGE', base .. 'delayed', 0, 0, 'WITHSCORES')
  if next[2] then redis.call('ZADD', base .. 'marker', math.floor(tonumber(next[2]) / 4096), '1') end
end
move_marker(restored)
local out = { restored }
for _, id in ipairs(existing) do out[#out + 1] = id end
return out`);

/** Undo's check before anything is written: which of these job ids have a hash again. KEYS[1] only routes (see purge.ts). */
export const PURGE_EXISTING = luaScript(`
local out = {}
for i = 2, #ARGV do
  if redis.call('EXISTS', ARGV[1] .. ARGV[i]) == 1 then out[#out + 1] = ARGV[i] end
end
return out`);
