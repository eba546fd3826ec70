/**
 * Lua shared by the purge deletes of both backends: `take_near_tail(key, window, take)` pops the
 * last `window` entries of list `key`, offers each to `take` from the tail inward (true: it goes),
 * and pushes the rest back in their order. One pass over the window, never a scan of the whole
 * list (an LREM per entry scanned past everything in front of it). RPOP comes first because at
 * maxmemory a script's first write must not be one that can grow memory (an LSET would be
 * refused); the RPUSH after it gives back less than it took.
 */
export const TAKE_NEAR_TAIL_LUA = `
local function take_near_tail(key, window, take)
  local near = redis.call('RPOP', key, window) or {}
  local gone = {}
  for j = 1, #near do
    if take(near[j]) then gone[j] = true end
  end
  local keep = {}
  for j = #near, 1, -1 do
    if not gone[j] then keep[#keep + 1] = near[j] end
  end
  for s = 1, #keep, 1000 do
    redis.call('RPUSH', key, unpack(keep, s, math.min(s + 999, #keep)))
  end
end
`;
