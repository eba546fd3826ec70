import { luaScript } from '../lua.js';
import type { RetryLoops } from '../queue-backend.js';

/**
 * The routing key of an `unacked` entry (`[message, exchange, routing_key]`, as kombu's QoS stores
 * it): its last string, read by pattern so the message is never parsed.
 */
export const UNACKED_ROUTING_KEY = ',%s*"([^"]*)"%s*%]%s*$';

/** Messages one reading looks at at most (a pattern match each, no JSON parse). */
export const RETRY_SAMPLE = 500;
/** Bytes of messages one reading looks at at most: big messages make a smaller sample, not a slow one. */
export const RETRY_SAMPLE_BYTES = 2 * 1024 * 1024;
const RETRY_TASKS_KEPT = 5;

/**
 * KEYS: priority lists…, then the `unacked` hash. ARGV[1]: messages to look at; ARGV[2]: the queue
 * whose `unacked` entries count ('' = every queue); ARGV[3]: bytes to look at. The message body (base64 arguments) is never
 * decoded: the headers are JSON text before it, and only `retries` and `task` are read, by pattern.
 * Returns {looked, held, name, count, max, name, count, max, …}; `held` is what the lists and
 * `unacked` hold in total.
 */
export const RETRY_LOOPS = luaScript(`
local budget = tonumber(ARGV[1])
local only = ARGV[2]
local maxBytes = tonumber(ARGV[3])
local looked, held, bytes = 0, 0, 0
local tally, order = {}, {}
local function see(text)
  bytes = bytes + #text
  local retries = tonumber(string.match(text, '"retries"%s*:%s*(%d+)'))
  if retries and retries > 0 then
    local task = string.match(text, '"task"%s*:%s*"([^"]*)"') or '?'
    local t = tally[task]
    if not t then
      t = {0, 0}
      tally[task] = t
      order[#order + 1] = task
    end
    t[1] = t[1] + 1
    if retries > t[2] then t[2] = retries end
  end
end
-- A few messages per call, from the end workers take next: a big message costs its bytes once.
local STEP = 25
local listBudget = math.floor(budget / 2)
for i = 1, #KEYS - 1 do
  local n = redis.call('LLEN', KEYS[i])
  held = held + n
  local from = 0
  while from < n and looked < listBudget and bytes < maxBytes do
    local take = math.min(STEP, n - from, listBudget - looked)
    for _, message in ipairs(redis.call('LRANGE', KEYS[i], -(from + take), -(from + 1))) do
      looked = looked + 1
      see(message)
    end
    from = from + take
  end
end
local unacked = KEYS[#KEYS]
local total = redis.call('HLEN', unacked)
local cursor, steps, whole = '0', 0, true
local matching, examined = 0, 0
if total > 0 then
  repeat
    -- Entries of other queues cost their reading too: at most 4 × budget entries are examined.
    if looked >= budget or bytes >= maxBytes or examined >= 4 * budget then
      whole = false
      break
    end
    local reply = redis.call('HSCAN', unacked, cursor, 'COUNT', STEP)
    cursor = reply[1]
    local entries = reply[2]
    for i = 2, #entries, 2 do
      local value = entries[i]
      examined = examined + 1
      if only == '' or string.match(value, '${UNACKED_ROUTING_KEY}') == only then
        matching = matching + 1
        looked = looked + 1
        see(value)
      else
        bytes = bytes + #value
      end
    end
  until cursor == '0'
end
-- Named a queue: its share of \`unacked\` is known only when the walk went through the whole hash.
if only ~= '' and whole then held = held + matching else held = held + total end
local out = {looked, held}
for _, task in ipairs(order) do
  out[#out + 1] = task
  out[#out + 1] = tally[task][1]
  out[#out + 1] = tally[task][2]
end
return out`);

/**
 * The script's reply as a reading of the Celery tasks in a retry loop ({@link RetryLoops}), as the
 * runbook finds them in the worker's log (`grep "Retry in" | sort | uniq -c`): from the `retries`
 * header of queued messages (the next ones to run of each priority list) and of delivered ones
 * (`unacked`, where a `self.retry(countdown=…)` waits for its ETA in a worker). A bounded sample:
 * at most `RETRY_SAMPLE` messages, half of them from the lists; by task name, at most
 * `RETRY_TASKS_KEPT` names.
 */
export function parseRetryLoops(reply: unknown): RetryLoops {
  const values = Array.isArray(reply) ? (reply as (string | number)[]) : [];
  const sampled = Number(values[0] ?? 0);
  const held = Number(values[1] ?? 0);
  const tasks: RetryLoops['tasks'] = [];
  for (let i = 2; i + 2 < values.length; i += 3)
    tasks.push({ name: String(values[i]), count: Number(values[i + 1]), maxRetries: Number(values[i + 2]) });
  tasks.sort((a, b) => b.count - a.count || b.maxRetries - a.maxRetries || a.name.localeCompare(b.name));
  return {
    sampled,
    complete: sampled >= held,
    retrying: tasks.reduce((sum, t) => sum + t.count, 0),
    tasks: tasks.slice(0, RETRY_TASKS_KEPT),
  };
}
