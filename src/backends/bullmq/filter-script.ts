import type { Redis } from 'ioredis';
import { asciiLower, groupPrefix, type JobFilter, timeWindow } from '../job-filter.js';
import { type LuaScript, luaScript, runScript } from '../lua.js';
import { READ_HASHES } from './scripts.js';

/**
 * One bounded window of a list or zset, filtered in Redis: which of its jobs match a filter,
 * reading three fields of each job's hash (name, failedReason and one time field) and nothing
 * else. Read-only. The bot never sees the jobs that do not match, nor any job's data.
 *
 * KEYS[1]: the list or zset. ARGV: kind (`list`: walked from the tail, where workers take next;
 * `zset`: lowest score first; `zrev`: highest score first), key base, from (entries of the walk
 * to skip), count (entries to look at), time field, from-ms or '', to-ms or '', error text
 * (compared with both sides' ASCII letters lower-cased) or '', its group prefix (a `dlq` group
 * cut with `…`) or '', name or '', and how many matching ids to return at most.
 * Returns `{ looked, matched, ids… }`: entries looked at (fewer than count: the end), matches
 * among them, and the first of those ids in walk order.
 */
export const SELECT_MATCHING: LuaScript = luaScript(`
local kind, base = ARGV[1], ARGV[2]
local from, count = tonumber(ARGV[3]), tonumber(ARGV[4])
local field = ARGV[5]
local lo, hi = tonumber(ARGV[6]), tonumber(ARGV[7])
local err, prefix, name = ARGV[8], ARGV[9], ARGV[10]
local want = tonumber(ARGV[11])
local ids
if kind == 'list' then
  local got = redis.call('LRANGE', KEYS[1], -(from + count), -(from + 1))
  ids = {}
  for i = #got, 1, -1 do ids[#ids + 1] = got[i] end
elseif kind == 'zrev' then
  ids = redis.call('ZREVRANGE', KEYS[1], from, from + count - 1)
else
  ids = redis.call('ZRANGE', KEYS[1], from, from + count - 1)
end
local matched, out = 0, { 0, 0 }
for i = 1, #ids do
  local f = redis.call('HMGET', base .. ids[i], 'name', 'failedReason', field, 'timestamp')
  -- A job exists when its hash has a name or a timestamp (BullMQ writes both with every job).
  local ok = f[1] or f[4]
  if ok and name ~= '' and f[1] ~= name then ok = false end
  if ok and err ~= '' then
    local reason = f[2] and string.lower(f[2]) or ''
    ok = string.find(reason, err, 1, true) ~= nil
      or (prefix ~= '' and string.sub(reason, 1, #prefix) == prefix)
  end
  if ok and (lo or hi) then
    local at = tonumber(f[3])
    if not at or (lo and at < lo) or (hi and at > hi) then ok = false end
  end
  if ok then
    matched = matched + 1
    if matched <= want then out[#out + 1] = ids[i] end
  end
end
out[1] = #ids
out[2] = matched
return out`);

/**
 * A purge's batch read by ids (a selection's), with the reply READ_HASHES describes, so the
 * same code builds the archive lines: `{ ids, scores, logs, hashes… }`. An id no longer in the
 * zset, or without a hash, is left out (it is not there to purge any more); a list's ids are taken
 * as they are (the delete checks the list). Never stops early: a selection is walked by position,
 * so every id asked is answered (a purge reads at most 250 a call).
 *
 * KEYS[1]: the list or zset. ARGV: kind (`list`|`zset`), key base, ids….
 */
export const READ_SELECTED: LuaScript = luaScript(`
local kind, base = ARGV[1], ARGV[2]
local asked = {}
for i = 3, #ARGV do asked[#asked + 1] = ARGV[i] end
if #asked == 0 then return {} end
local ids, scores = {}, {}
if kind == 'list' then
  ids = asked
else
  local got = redis.call('ZMSCORE', KEYS[1], unpack(asked))
  for i = 1, #asked do
    if got[i] then
      ids[#ids + 1] = asked[i]
      scores[#ids] = got[i]
    end
  end
end
if #ids == 0 then return { '[]', '', '' } end
local budget = math.huge
${READ_HASHES}`);

/**
 * Entries one {@link SELECT_MATCHING} call looks at: about a millisecond of Redis on a quiet
 * machine, like a retry batch (`npm run bench -- filters` prints the longest call).
 */
export const SELECT_WINDOW = 250;

/** How a list or zset is walked: from where workers take next, or (`zrev`) newest failure first. */
export type WalkOrder = 'list' | 'zset' | 'zrev';

/** A filter as {@link SELECT_MATCHING} takes it, at `now`. */
export function filterArgs(filter: JobFilter, now: number, timeField: string): string[] {
  const { from, to } = timeWindow(filter, now);
  const error = filter.error === undefined ? '' : asciiLower(filter.error);
  const prefix = filter.error === undefined ? '' : asciiLower(groupPrefix(filter.error) ?? '');
  return [
    timeField,
    from === undefined ? '' : String(from),
    to === undefined ? '' : String(to),
    error,
    prefix,
    filter.name ?? '',
  ];
}

/**
 * Walks one list or zset window by window (each one short script call) and returns how many
 * entries match, and the first `want` matching ids in walk order. Memory in the bot: those ids.
 * `client` may be a function that runs the script (a backend's, whose replies keep its deadline
 * alive: the walk is bounded by silence, not by its length).
 * A walk over a set that changes meanwhile sees each window as it is when that call runs.
 */
export async function walkMatching(
  client: Redis | ((keys: string[], args: (string | number)[]) => Promise<unknown>),
  key: string,
  order: WalkOrder,
  base: string,
  args: readonly string[],
  want: number,
  options: { window?: number; stopAtWant?: boolean } = {},
): Promise<{ matched: number; ids: string[]; looked: number }> {
  const window = options.window ?? SELECT_WINDOW;
  const send =
    client instanceof Function
      ? client
      : (keys: string[], values: (string | number)[]) => runScript(client, SELECT_MATCHING, keys, values);
  const ids: string[] = [];
  let matched = 0;
  let from = 0;
  for (;;) {
    const reply = (await send(
      [key],
      [order, base, from, window, ...args, Math.max(0, want - ids.length)],
    )) as (string | number)[];
    const looked = Number(reply[0]);
    matched += Number(reply[1]);
    for (let i = 2; i < reply.length; i++) ids.push(String(reply[i]));
    from += looked;
    if (looked < window) break;
    if (options.stopAtWant && ids.length >= want) break;
  }
  return { matched, ids, looked: from };
}
