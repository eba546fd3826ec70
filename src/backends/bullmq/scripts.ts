import { createHash } from 'node:crypto';

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

/** A Lua script and the SHA1 that EVALSHA calls it by. */
export interface LuaScript {
  lua: string;
  sha: string;
  /** How many of a call's arguments are keys. */
  keys: number;
}

export function luaScript(lua: string, keys: number): LuaScript {
  return { lua, sha: createHash('sha1').update(lua).digest('hex'), keys };
}

/**
 * BullMQ's own `reprocessJob` script (what `Job.retry()` runs), exactly as the major that wrote
 * the queue ships it, includes resolved: 9 keys in 6.x (it re-adds a job with a priority to
 * `prioritized`), 8 in 5.x (it knows the `paused` list). Read from the package, not copied, so it
 * stays the library's code.
 */
const reprocessScripts = new Map<5 | 6, Promise<LuaScript>>();
export function reprocessJobScript(major: 5 | 6): Promise<LuaScript> {
  let script = reprocessScripts.get(major);
  if (!script) {
    // A variable specifier: the packages ship no types for their script modules.
    const specifier =
      major === 5
        ? 'bullmq5/dist/cjs/scripts/reprocessJob-8.js'
        : 'bullmq/dist/cjs/scripts/reprocessJob-9.js';
    script = (import(specifier) as Promise<{ reprocessJob: { content: string; keys: number } }>).then((m) =>
      luaScript(m.reprocessJob.content, m.reprocessJob.keys),
    );
    reprocessScripts.set(major, script);
  }
  return script;
}
