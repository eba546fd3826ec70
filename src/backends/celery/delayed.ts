import type { Redis } from 'ioredis';
import { luaScript, runScript } from '../lua.js';
import type { DelayedDue } from '../queue-backend.js';
import { UNACKED_ROUTING_KEY } from './retry-loops.js';

/**
 * How far a reading of Celery's delayed tasks looked: `unacked` entries examined, of how many the
 * hash held, and whether that was all of them.
 */
export interface DelayedScan {
  looked: number;
  of: number;
  complete: boolean;
}

/** What one reading walks at most: entries, and time of ours (each script call is one step). */
export const DELAYED_SCAN = {
  maxEntries: 20_000,
  maxMillis: 300,
  step: 500,
  maxBytesPerStep: 2 * 1024 * 1024,
};

/**
 * One step of the walk over kombu's `unacked` hash (a field per message a worker took and has not
 * acknowledged: `[message, exchange, routing_key]`): HSCAN from ARGV[1], COUNT ARGV[2], and for each
 * entry routed to ARGV[3] whose headers carry an `eta` (protocol 2; a countdown is sent as an ETA),
 * its due time against ARGV[4] (epoch ms): next 5 minutes (overdue ones too, as BullMQ's are),
 * hour, day, later. Only the routing key and `headers.eta` are read, by pattern; the body, with
 * the arguments, is never decoded. A step stops early past ARGV[5] bytes.
 * Returns {cursor, examined, next5m, nextHour, nextDay, later, cut (1: the byte budget left entries
 * of this step unread)}.
 */
const DELAYED_STEP = luaScript(`
local cursor, count, queue, now, maxBytes = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
-- An ISO 8601 time (Celery's eta: 2026-11-29T07:03:16.489306+00:00) as epoch ms; naive is UTC.
local function epoch(text)
  local y, mo, d, h, mi, s = string.match(text, '^(%d%d%d%d)%-(%d%d)%-(%d%d)[T ](%d%d):(%d%d):(%d%d)')
  if not y then return nil end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  local frac = string.match(text, ':%d%d%.(%d+)')
  local ms = 0
  if frac then ms = tonumber(string.sub(frac .. '000', 1, 3)) end
  -- Days from the civil date (H. Hinnant's algorithm).
  if mo <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (mo + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  local days = era * 146097 + doe - 719468
  local t = ((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60 + tonumber(s)
  local sign, oh, om = string.match(text, '([+-])(%d%d):?(%d%d)$')
  if sign then
    local offset = (tonumber(oh) * 60 + tonumber(om)) * 60
    if sign == '+' then t = t - offset else t = t + offset end
  end
  return t * 1000 + ms
end
local reply = redis.call('HSCAN', KEYS[1], cursor, 'COUNT', count)
local examined, bytes, cut = 0, 0, 0
local m5, h1, d1, later = 0, 0, 0, 0
for i = 2, #reply[2], 2 do
  local value = reply[2][i]
  examined = examined + 1
  bytes = bytes + #value
  if string.match(value, '${UNACKED_ROUTING_KEY}') == queue then
    local eta = string.match(value, '"eta"%s*:%s*"([^"]+)"')
    local due = eta and epoch(eta)
    if due then
      local wait = due - now
      if wait <= 300000 then m5 = m5 + 1
      elseif wait <= 3600000 then h1 = h1 + 1
      elseif wait <= 86400000 then d1 = d1 + 1
      else later = later + 1 end
    end
  end
  if bytes > maxBytes and i < #reply[2] then
    cut = 1
    break
  end
end
return { reply[1], examined, m5, h1, d1, later, cut }`);

/**
 * Celery's delayed (ETA / countdown) tasks of one queue by when they are due, from a bounded walk
 * of `unacked`, where kombu keeps every message a worker took until it is acknowledged: a worker
 * takes an ETA task at once and holds it, unacknowledged, until it is due. Several script calls
 * (HSCAN steps of `step` entries), never the whole hash in one: at most `maxEntries` entries and
 * `maxMillis`, and the answer says how far it looked. A step cut short by its byte budget moves on
 * with the cursor HSCAN gave, so a few entries of that step may go unread: the walk then counts
 * as incomplete.
 */
export async function readCeleryDelayed(
  client: Redis,
  unacked: string,
  queue: string,
  now: number,
  budget: Partial<typeof DELAYED_SCAN> = {},
): Promise<{ due: DelayedDue; scan: DelayedScan }> {
  const { maxEntries, maxMillis, step, maxBytesPerStep } = { ...DELAYED_SCAN, ...budget };
  const of = await client.hlen(unacked);
  const due: DelayedDue = { next5m: 0, nextHour: 0, nextDay: 0, later: 0 };
  let cursor = '0';
  let looked = 0;
  let whole = true;
  const started = Date.now();
  if (of > 0) {
    do {
      if (looked >= maxEntries || Date.now() - started >= maxMillis) {
        whole = false;
        break;
      }
      const [next, examined, m5, h1, d1, later, cut] = (await runScript(
        client,
        DELAYED_STEP,
        [unacked],
        [cursor, step, queue, now, maxBytesPerStep],
      )) as [string, number, number, number, number, number, number];
      if (Number(cut) === 1) whole = false;
      cursor = String(next);
      looked += Number(examined);
      due.next5m += Number(m5);
      due.nextHour += Number(h1);
      due.nextDay += Number(d1);
      due.later += Number(later);
    } while (cursor !== '0');
  }
  // HSCAN may return an entry twice (a rehash mid-walk), so `looked` can pass `of`: it is capped.
  return { due, scan: { looked: Math.min(looked, of), of, complete: whole } };
}
