import { createHash } from 'node:crypto';
import { luaScript } from '../lua.js';

/**
 * Everything `status` needs about one queue, read-only, in one script call so that a whole system
 * stays one pipelined round trip: the next job's id has to be read before its timestamp, which a
 * plain pipeline cannot do.
 *
 * KEYS: wait, paused, active, prioritized, delayed, failed, completed, waiting-children, meta
 * ARGV[1]: the queue's key base `<prefix>:<queue>:` (job hashes are `<base><id>`)
 *
 * Returns { wait, paused, active, prioritized, delayed, failed, completed, waitingChildren,
 * isPaused (0|1), timestamp of the next job to be picked ('' when none) }.
 *
 * A list whose tail is a legacy "0:…" marker (BullMQ < 5 put markers in the wait list) counts one
 * less, as `getCounts-1.lua` does, but without its RPOP: this script never writes.
 */
export const QUEUE_SNAPSHOT_LUA = `
local function peek(key)
  local n = redis.call('LLEN', key)
  if n == 0 then return 0, nil end
  local id = redis.call('LINDEX', key, -1)
  if string.sub(id, 1, 2) == '0:' then
    n = n - 1
    if n == 0 then return 0, nil end
    id = redis.call('LINDEX', key, -2)
  end
  return n, id
end
local waitN, waitId = peek(KEYS[1])
local pausedN, pausedId = peek(KEYS[2])
local nextId = waitId or pausedId
if not nextId then
  local first = redis.call('ZRANGE', KEYS[4], 0, 0)
  nextId = first[1]
end
local ts = ''
if nextId then
  ts = redis.call('HGET', ARGV[1] .. nextId, 'timestamp') or ''
end
return {
  waitN,
  pausedN,
  redis.call('LLEN', KEYS[3]),
  redis.call('ZCARD', KEYS[4]),
  redis.call('ZCARD', KEYS[5]),
  redis.call('ZCARD', KEYS[6]),
  redis.call('ZCARD', KEYS[7]),
  redis.call('ZCARD', KEYS[8]),
  redis.call('HEXISTS', KEYS[9], 'paused'),
  ts
}
`;

export const QUEUE_SNAPSHOT_SHA = createHash('sha1').update(QUEUE_SNAPSHOT_LUA).digest('hex');

/** The keys the snapshot script declares, in its KEYS order. */
export function snapshotKeys(prefix: string, queue: string): string[] {
  const base = `${prefix}:${queue}:`;
  return [
    'wait',
    'paused',
    'active',
    'prioritized',
    'delayed',
    'failed',
    'completed',
    'waiting-children',
    'meta',
  ].map((suffix) => base + suffix);
}

/**
 * A purge's read of one batch: `count` job ids from where workers take next (the tail of a list,
 * the lowest scores of a zset), skipping `offset` already read and not yet deleted, and for each
 * job its hash and its logs, encoded as JSON on the server so a million jobs cross the network as
 * a million strings instead of twenty million fields. Read-only.
 *
 * KEYS[1]: the list or zset. ARGV: kind (`list`|`zset`), offset, count, key base `<prefix>:<queue>:`.
 * Returns flat triples `id, score ('' for lists), {"hash":{…},"logs":[…]}`; ids without a hash
 * (a legacy `0:` marker, a job removed meanwhile) are left out.
 */
export const PURGE_READ = luaScript(`
local kind, offset, count, base = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local ids, scores = {}, {}
if kind == 'list' then
  local got = redis.call('LRANGE', KEYS[1], -(offset + count), -(offset + 1))
  for i = #got, 1, -1 do ids[#ids + 1] = got[i] end
else
  local got = redis.call('ZRANGE', KEYS[1], offset, offset + count - 1, 'WITHSCORES')
  for i = 1, #got, 2 do
    ids[#ids + 1] = got[i]
    scores[#ids] = got[i + 1]
  end
end
local out = {}
for i, id in ipairs(ids) do
  local flat = redis.call('HGETALL', base .. id)
  if #flat > 0 then
    local hash = {}
    for j = 1, #flat, 2 do hash[flat[j]] = flat[j + 1] end
    out[#out + 1] = id
    out[#out + 1] = scores[i] or ''
    out[#out + 1] = cjson.encode({ hash = hash, logs = redis.call('LRANGE', base .. id .. ':logs', 0, -1) })
  end
end
return out`);

/**
 * Deletes jobs of one batch only where they still are: a job a worker took meanwhile (no longer
 * in this list or zset) keeps its hash and is reported 0. LREM counts from the tail, where the
 * batch sits, so each removal finds its job in a step or two. Only LREM, ZREM and UNLINK: none
 * needs memory, so this runs on a Redis at maxmemory.
 *
 * KEYS[1]: the list or zset. ARGV: kind, key base, then the ids. Returns 1/0 per id.
 */
export const PURGE_DELETE = luaScript(`
local kind, base = ARGV[1], ARGV[2]
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local removed
  if kind == 'list' then
    removed = redis.call('LREM', KEYS[1], -1, id)
  else
    removed = redis.call('ZREM', KEYS[1], id)
  end
  if removed > 0 then redis.call('UNLINK', base .. id, base .. id .. ':logs') end
  out[#out + 1] = removed
end
return out`);

/**
 * Undo: puts archived jobs back, each line \`{"p":place,"id":…,"s":score,"j":{"hash":…,"logs":…}}\`,
 * in the order given (lists: RPUSH, so the last line given is the next one a worker takes), never
 * over a job that exists again (its id is returned instead). Adds BullMQ's own markers so that
 * blocked workers wake up: \`0\` for waiting jobs unless the queue is paused, the next delayed
 * timestamp for delayed ones.
 *
 * KEYS: none (every key is under ARGV[1], the key base). Returns { restored, existing ids… }.
 */
export const PURGE_RESTORE = luaScript(`
local base = ARGV[1]
local lists = { wait = true, paused = true }
local restored, existing = 0, {}
local ready, delayed = false, false
for i = 2, #ARGV do
  local rec = cjson.decode(ARGV[i])
  local key = base .. rec.id
  if redis.call('EXISTS', key) == 1 then
    existing[#existing + 1] = rec.id
  else
    local fields = {}
    for f, v in pairs(rec.j.hash) do
      fields[#fields + 1] = f
      fields[#fields + 1] = v
    end
    if #fields > 0 then redis.call('HSET', key, unpack(fields)) end
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
local out = { restored }
for _, id in ipairs(existing) do out[#out + 1] = id end
return out`);

/** Undo's check before anything is written: which of these job ids have a hash again. */
export const PURGE_EXISTING = luaScript(`
local out = {}
for i = 2, #ARGV do
  if redis.call('EXISTS', ARGV[1] .. ARGV[i]) == 1 then out[#out + 1] = ARGV[i] end
end
return out`);
