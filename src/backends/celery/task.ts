import type { Redis } from 'ioredis';
import { luaScript, runScript } from '../lua.js';
import { RESULT_KEY_PREFIX } from './keys.js';

/** Where a Celery task is, as `job <system> <task-id>` shows it. Never its arguments. */
export interface CeleryTaskView {
  id: string;
  /**
   * `queued`, `unacked` (delivered, not yet acknowledged: a worker holds it, or an ETA task),
   * `active` / `reserved` / `scheduled` (a worker's own word), else the result backend's status
   * (`SUCCESS`, `FAILURE`, `RETRY`, `REVOKED`, `STARTED`).
   */
  state: string;
  name: string | null;
  /** The list it waits in, its priority and how many messages workers take before it. */
  where: { queue: string; list: string; priority: number; position: number } | null;
  /** The worker that reported it (`inspect query_task`). */
  worker: string | null;
  result: {
    status: string;
    dateDone: string | null;
    retries: number | null;
    traceback: string[];
    /** `ExcType: message` of a failure. */
    error: string | null;
    queue: string | null;
  } | null;
  /** How far the search of the queues went: messages looked at, and whether a bound stopped it. */
  searched: { messages: number; complete: boolean };
}

/** Messages looked at per list at most; the answer says when a list was longer. */
export const TASK_SEARCH_MAX = 100_000;
const TRACEBACK_LINES = 6;

/**
 * Finds a task's message in lists and the unacked hash, read-only: each list is read from the tail
 * (where workers take next) in pages, a message matched by its id text first and then by its
 * decoded `headers.id`, so a uuid inside another task's arguments is not taken for it.
 *
 * KEYS: the lists to search (priority lists of the queues), then the unacked hash (last)
 * ARGV: task id, max messages per list, page size
 * Returns { list index (1-based, 0: none), position from the tail, messages looked at, complete (1|0),
 *   unacked (1|0), task name }
 */
const FIND_TASK = luaScript(`
local id = ARGV[1]
local max = tonumber(ARGV[2])
local page = tonumber(ARGV[3])
local looked = 0
local complete = 1
local lists = #KEYS - 1
for i = 1, lists do
  local n = redis.call('LLEN', KEYS[i])
  local limit = n
  if limit > max then
    limit = max
    complete = 0
  end
  local from = 0
  while from < limit do
    local last = from + page - 1
    if last >= limit then last = limit - 1 end
    local items = redis.call('LRANGE', KEYS[i], -1 - last, -1 - from)
    looked = looked + #items
    for k = #items, 1, -1 do
      local raw = items[k]
      if string.find(raw, id, 1, true) then
        local ok, message = pcall(cjson.decode, raw)
        if ok and type(message) == 'table' and type(message.headers) == 'table' and message.headers.id == id then
          return { i, from + (#items - k), looked, complete, 0, tostring(message.headers.task or '') }
        end
      end
    end
    from = last + 1
  end
end
local cursor = '0'
repeat
  local reply = redis.call('HSCAN', KEYS[#KEYS], cursor, 'COUNT', 500)
  cursor = reply[1]
  local fields = reply[2]
  for k = 2, #fields, 2 do
    local raw = fields[k]
    looked = looked + 1
    if string.find(raw, id, 1, true) then
      local ok, entry = pcall(cjson.decode, raw)
      if ok and type(entry) == 'table' and type(entry[1]) == 'table' then
        local message = entry[1]
        if type(message.headers) == 'table' and message.headers.id == id then
          return { 0, 0, looked, complete, 1, tostring(message.headers.task or '') }
        end
      end
    end
  end
until cursor == '0' or looked > max * 2
if cursor ~= '0' then complete = 0 end
return { 0, 0, looked, complete, 0, '' }`);

const PAGE = 1_000;

export interface TaskLists {
  /** Each list with the queue and priority step it stands for, highest priority first. */
  lists: { key: string; queue: string; priority: number }[];
  unackedKey: string;
}

/** What the queues say: the list and place of the task's message, or that it is unacked. */
export async function findTaskMessage(
  client: Redis,
  id: string,
  where: TaskLists,
): Promise<{
  where: CeleryTaskView['where'];
  unacked: boolean;
  name: string | null;
  searched: CeleryTaskView['searched'];
}> {
  const reply = (await runScript(
    client,
    FIND_TASK,
    [...where.lists.map((l) => l.key), where.unackedKey],
    [id, TASK_SEARCH_MAX, PAGE],
  )) as (number | string)[];
  const [listIndex, position, looked, complete, unacked] = reply.slice(0, 5).map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const name = String(reply[5] ?? '');
  const list = listIndex > 0 ? where.lists[listIndex - 1] : undefined;
  return {
    where: list ? { queue: list.queue, list: list.key, priority: list.priority, position } : null,
    unacked: unacked === 1,
    name: name || null,
    searched: { messages: looked, complete: complete === 1 },
  };
}

/** The stored result, reduced to what may be shown: never `result` of a success, args or kwargs. */
export function parseTaskResult(raw: string | null): CeleryTaskView['result'] & { name: string | null } | null {
  if (raw === null) return null;
  let meta: Record<string, unknown>;
  try {
    meta = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return null;
  }
  const status = String(meta.status ?? 'UNKNOWN');
  const failure = (status === 'FAILURE' || status === 'RETRY') && meta.result && typeof meta.result === 'object'
    ? (meta.result as { exc_type?: unknown; exc_message?: unknown })
    : undefined;
  const message = Array.isArray(failure?.exc_message) ? failure.exc_message.map(String).join(', ') : String(failure?.exc_message ?? '');
  const traceback = typeof meta.traceback === 'string' ? meta.traceback.split('\n').filter((l) => l.trim() !== '') : [];
  const delivery = meta.delivery_info as { routing_key?: unknown } | undefined;
  return {
    status,
    dateDone: typeof meta.date_done === 'string' ? meta.date_done : null,
    retries: typeof meta.retries === 'number' ? meta.retries : null,
    // The end of a traceback says what went wrong: its last lines, as `celery` logs read.
    traceback: traceback.slice(-TRACEBACK_LINES),
    error: failure ? `${String(failure.exc_type ?? 'Error')}${message ? `: ${message.split('\n', 1)[0]}` : ''}` : null,
    queue: typeof delivery?.routing_key === 'string' ? delivery.routing_key : null,
    name: typeof meta.name === 'string' ? meta.name : null,
  };
}

export async function readTaskResult(client: Redis, id: string): Promise<ReturnType<typeof parseTaskResult>> {
  return parseTaskResult(await client.get(`${RESULT_KEY_PREFIX}${id}`));
}
