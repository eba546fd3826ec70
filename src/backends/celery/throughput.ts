import type { Redis } from 'ioredis';
import { type ScanBudget, scanWithin } from '../bounded-scan.js';
import { luaScript, runScript } from '../lua.js';
import type { QueueThroughput } from '../queue-backend.js';
import { type FinishedResults, naiveIso, parseDateDone } from './failures.js';
import { RESULT_KEY_PREFIX } from './keys.js';

/**
 * For each result key: `status, date_done, queue` when it is a SUCCESS or FAILURE done after
 * ARGV[1] (naive ISO UTC, which sorts as text, as Celery writes it). Read inside Redis: the value,
 * which can hold results and tracebacks, never leaves it.
 */
const FINISHED_SINCE = luaScript(`
local since = ARGV[1]
local out = {}
for _, key in ipairs(KEYS) do
  local value = redis.pcall('GET', key)
  if type(value) == 'string' then
    local status = string.match(value, '"status"%s*:%s*"([A-Z]+)"')
    if status == 'SUCCESS' or status == 'FAILURE' then
      local done = string.match(value, '"date_done"%s*:%s*"([^"]*)"') or ''
      if string.sub(done, 1, 26) > since then
        out[#out + 1] = status
        out[#out + 1] = done
        out[#out + 1] = string.match(value, '"queue"%s*:%s*"([^"]*)"') or ''
      end
    end
  end
end
return out`);

/** The default walk: a result backend is often the whole keyspace, so it is bounded. */
export const THROUGHPUT_SCAN: Pick<ScanBudget, 'maxKeys' | 'maxMillis'> = {
  maxKeys: 200_000,
  maxMillis: 300,
};

/** What the result backend says finished after `since`, per queue, and how much of it was read. */
export interface CeleryFinished {
  byQueue: Map<string, { completed: number; failed: number }>;
  /** Results done in the span that name no queue (the app does not set `result_extended`). */
  unattributed: number;
  /** The walk saw every key; else the counts are scaled up from the part it saw. */
  complete: boolean;
  /** Any result key at all was found: without one no rate can be known (the app stores none). */
  anyResults: boolean;
}

/** The failure index's counts (`FailureIndex.finishedSince`) in this shape: whole, never scaled. */
export function finishedFromIndex(results: FinishedResults): CeleryFinished {
  const byQueue = new Map<string, { completed: number; failed: number }>();
  let unattributed = 0;
  for (const [queue, counts] of results.byQueue) {
    if (queue === null) unattributed += counts.completed + counts.failed;
    else byQueue.set(queue, { ...counts });
  }
  return { byQueue, unattributed, complete: true, anyResults: results.anyResults };
}

export async function readCeleryFinished(
  client: Redis,
  since: number,
  budget: Pick<ScanBudget, 'maxKeys' | 'maxMillis'> = THROUGHPUT_SCAN,
): Promise<CeleryFinished> {
  const byQueue = new Map<string, { completed: number; failed: number }>();
  let unattributed = 0;
  let anyResults = false;
  const sinceText = naiveIso(since);
  const total = await client.dbsize();
  const walk = { ...budget, count: 1000, match: `${RESULT_KEY_PREFIX}*` };
  const { scanned, stoppedBy } = await scanWithin(client, walk, async (keys) => {
    anyResults = true;
    const reply = (await runScript(client, FINISHED_SINCE, keys, [sinceText])) as string[];
    for (let i = 0; i + 2 < reply.length; i += 3) {
      const at = parseDateDone(reply[i + 1]);
      if (at === null || at <= since) continue;
      const queue = reply[i + 2]!;
      if (!queue) {
        unattributed++;
        continue;
      }
      const entry = byQueue.get(queue) ?? { completed: 0, failed: 0 };
      if (reply[i] === 'SUCCESS') entry.completed++;
      else entry.failed++;
      byQueue.set(queue, entry);
    }
  });
  const complete = stoppedBy === 'done';
  if (!complete && scanned > 0 && scanned < total) {
    // SCAN visits keys in no particular order: the part read stands for the whole.
    const scale = total / scanned;
    for (const entry of byQueue.values()) {
      entry.completed = Math.round(entry.completed * scale);
      entry.failed = Math.round(entry.failed * scale);
    }
    unattributed = Math.round(unattributed * scale);
  }
  return { byQueue, unattributed, complete, anyResults };
}

/**
 * A queue's throughput from the result backend. Celery stores neither when a task was sent nor
 * when it started (only `date_done`), so wait and run are unknown, and said to be. The rates are
 * unknown too, never 0, when the backend holds no result at all (`noResults`), or when results
 * were stored in the span but none names its queue (`unattributed`: no `result_extended`).
 */
export function celeryThroughput(finished: CeleryFinished, queue: string, spanMs: number): QueueThroughput {
  const durations = {
    wait: { unknown: 'noEnqueueTime' },
    run: { unknown: 'noStartTime' },
    sampled: 0,
  } as const;
  const why = !finished.anyResults
    ? 'noResults'
    : finished.byQueue.size === 0 && finished.unattributed > 0
      ? 'unattributed'
      : undefined;
  if (why)
    return {
      source: 'results',
      spanMs,
      completed: null,
      failed: null,
      completedPerMinute: null,
      failedPerMinute: null,
      unknown: { completed: why, failed: why },
      ...durations,
    };
  const counts = finished.byQueue.get(queue) ?? { completed: 0, failed: 0 };
  const minutes = Math.max(1, spanMs) / 60_000;
  return {
    source: 'results',
    spanMs,
    completed: counts.completed,
    failed: counts.failed,
    completedPerMinute: counts.completed / minutes,
    failedPerMinute: counts.failed / minutes,
    ...durations,
    ...(finished.complete ? {} : { estimated: true }),
  };
}
