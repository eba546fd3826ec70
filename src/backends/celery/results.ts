import type { Redis } from 'ioredis';
import { scanWithin } from '../bounded-scan.js';
import { luaScript, runScript } from '../lua.js';
import type { ResultsBudget, ResultsReading } from '../queue-backend.js';
import { RESULT_KEY_PREFIX } from './keys.js';

/**
 * For each key: its PTTL, MEMORY USAGE and `date_done` (read from the value inside Redis, so the
 * value itself, which can hold arguments and tracebacks, never leaves it). One call per SCAN
 * batch of at most 1,000 keys: O(1) per key apart from finding `date_done` in the value.
 */
const READ_RESULTS = luaScript(`
local out = {}
for _, key in ipairs(KEYS) do
  local ttl = redis.call('PTTL', key)
  if ttl ~= -2 then
    local value = redis.pcall('GET', key)
    local done = ''
    if type(value) == 'string' then
      done = string.match(value, '"date_done"%s*:%s*"([^"]*)"') or ''
    end
    out[#out + 1] = key
    out[#out + 1] = ttl
    out[#out + 1] = redis.call('MEMORY', 'USAGE', key) or 0
    out[#out + 1] = done
  end
end
return out`);

const SCAN_COUNT = 1000;

/** Celery writes `date_done` as naive ISO in UTC (`2026-12-01T10:00:00.123456`). */
function parseDateDone(text: string): number | null {
  if (!text) return null;
  const at = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`);
  return Number.isNaN(at) ? null : at;
}

export async function readResults(
  client: Redis,
  budget: ResultsBudget = {},
  now: () => number = Date.now,
): Promise<ResultsReading> {
  const maxKeys = budget.maxKeys ?? 1_000_000;
  const maxMillis = budget.maxMillis ?? 3_000;
  const total = await client.dbsize();
  let count = 0;
  let withoutTtl = 0;
  let bytes = 0;
  let oldest: ResultsReading['oldest'] = null;
  const walk = { maxKeys, maxMillis, count: SCAN_COUNT, match: `${RESULT_KEY_PREFIX}*`, now };
  const { scanned, stoppedBy } = await scanWithin(client, walk, async (keys) => {
    const reply = (await runScript(client, READ_RESULTS, keys, [])) as (string | number)[];
    for (let i = 0; i + 3 < reply.length; i += 4) {
      count++;
      if (Number(reply[i + 1]) === -1) withoutTtl++;
      bytes += Number(reply[i + 2]);
      const at = parseDateDone(String(reply[i + 3]));
      if (at !== null && (oldest === null || at < oldest.at))
        oldest = { at, id: String(reply[i]).slice(RESULT_KEY_PREFIX.length) };
    }
  });
  const complete = stoppedBy === 'done';
  // SCAN's COUNT is a hint: the last step may look at fewer keys than asked.
  const looked = complete ? total : Math.min(scanned, total);
  const scale = !complete && looked > 0 ? total / looked : null;
  return {
    count,
    withoutTtl,
    bytes,
    oldest,
    sample: { scanned: looked, total, complete, stoppedBy },
    estimate:
      scale === null
        ? null
        : {
            count: Math.round(count * scale),
            withoutTtl: Math.round(withoutTtl * scale),
            bytes: Math.round(bytes * scale),
          },
  };
}
