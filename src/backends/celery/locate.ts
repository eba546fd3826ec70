import type { Redis } from 'ioredis';
import { luaScript, runScript } from '../lua.js';
import type { TaskLocation } from '../queue-backend.js';
import { type KombuLayout, priorityKeys, RESULT_KEY_PREFIX, unackedKey } from './keys.js';
import type { BroadcastResult } from './pidbox.js';
import { parseTaskResult } from './task.js';

/** Messages one script call reads: a bounded step, so a long queue never holds Redis for long. */
const LIST_CHUNK = 1000;
const HASH_CHUNK = 500;

/**
 * Which of ARGV[3..] are the task id (`headers.id`, or `properties.correlation_id` as Celery's
 * protocol 1 has it) of a message in LRANGE KEYS[1] ARGV[1] ARGV[2], each with its index in the
 * list and its task name (`headers.task`; never the arguments). Only a message whose text holds the id is decoded: a child task naming it as `parent_id`
 * or `root_id` is not it.
 */
const FIND_IN_LIST = luaScript(`
local messages = redis.call('LRANGE', KEYS[1], ARGV[1], ARGV[2])
local found = {}
for at, raw in ipairs(messages) do
  for i = 3, #ARGV do
    local id = ARGV[i]
    if string.find(raw, id, 1, true) then
      local ok, m = pcall(cjson.decode, raw)
      if ok and type(m) == 'table' then
        local h = m['headers']
        local p = m['properties']
        if (type(h) == 'table' and h['id'] == id) or (type(p) == 'table' and p['correlation_id'] == id) then
          found[#found + 1] = id
          found[#found + 1] = tonumber(ARGV[1]) + at - 1
          local task = type(h) == 'table' and h['task'] or ''
          if type(task) ~= 'string' then task = '' end
          found[#found + 1] = task
        end
      end
    end
  end
end
return found
`);

export interface LocateDeps {
  client: Redis;
  resultClient: Redis;
  layout: KombuLayout;
  queues: () => Promise<string[]>;
  /** Celery's `inspect query_task`, to every worker. */
  queryTask: (ids: readonly string[]) => Promise<BroadcastResult>;
}

/** The task id of a message (`headers.id`, else `properties.correlation_id`). */
function messageId(message: unknown): string | undefined {
  const m = message as { headers?: { id?: unknown }; properties?: { correlation_id?: unknown } } | null;
  const id = m?.headers?.id ?? m?.properties?.correlation_id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Where each task id is known, as `revoke` previews it: a worker holding it (`query_task`: active,
 * reserved or scheduled), a queue's priority lists or the unacked hash (a message waiting or
 * delivered), the result backend (`celery-task-meta-<id>`). An id found nowhere is one no worker,
 * list or result knows: most likely a typo.
 */
export async function locateTasks(deps: LocateDeps, ids: readonly string[]): Promise<TaskLocation[]> {
  const out = new Map<string, TaskLocation>(ids.map((id) => [id, { id }]));

  const [asked, results] = await Promise.all([
    deps.queryTask(ids),
    (async () => {
      const pipeline = deps.resultClient.pipeline();
      for (const id of ids) pipeline.get(RESULT_KEY_PREFIX + id);
      return (await pipeline.exec()) ?? [];
    })(),
  ]);

  for (const { worker, reply } of asked.replies) {
    if (!reply || typeof reply !== 'object' || Array.isArray(reply)) continue;
    for (const [id, value] of Object.entries(reply as Record<string, unknown>)) {
      const at = out.get(id);
      if (!at || at.worker) continue;
      // Celery's words (`active`, `reserved`, `scheduled`); anything else is not repeated.
      const said = Array.isArray(value) ? value[0] : undefined;
      const state = typeof said === 'string' && /^[a-z]{1,20}$/.test(said) ? said : 'held';
      // The request's task name (never its arguments, which the same object carries).
      const request = Array.isArray(value) ? (value[1] as { name?: unknown } | undefined) : undefined;
      const task = typeof request?.name === 'string' ? request.name : undefined;
      at.worker = { name: worker, state, ...(task ? { task } : {}) };
    }
  }

  ids.forEach((id, i) => {
    const [error, raw] = results[i] ?? [null, null];
    if (error) throw error;
    if (typeof raw !== 'string') return;
    let status = 'stored';
    try {
      const parsed = JSON.parse(raw) as { status?: unknown };
      if (typeof parsed.status === 'string' && /^[A-Z_]{1,20}$/.test(parsed.status)) status = parsed.status;
    } catch {
      // A result Celery wrote in another serializer: it exists, its state unread.
    }
    const at = out.get(id)!;
    at.result = status;
    // What `job` shows of it, read from this one GET (never its arguments or return value).
    const stored = parseTaskResult(raw);
    if (stored) at.stored = stored;
  });

  // The queues' lists, in bounded steps, only for ids neither a worker nor a result accounts for.
  let looking = ids.filter((id) => !out.get(id)!.worker && !out.get(id)!.result);
  const steps = [...new Set(deps.layout.prioritySteps)].sort((a, b) => a - b);
  for (const queue of looking.length > 0 ? await deps.queues() : []) {
    for (const [step, key] of priorityKeys(deps.layout, queue).entries()) {
      const length = await deps.client.llen(key);
      for (let start = 0; start < length && looking.length > 0; start += LIST_CHUNK) {
        const found = (await runScript(
          deps.client,
          FIND_IN_LIST,
          [key],
          [start, start + LIST_CHUNK - 1, ...looking],
        )) as (string | number)[];
        for (let i = 0; i + 2 < found.length; i += 3) {
          const at = out.get(String(found[i]))!;
          if (at.queue) continue;
          at.queue = queue;
          // kombu takes from the tail (BRPOP): the last message is next.
          at.place = { list: key, priority: steps[step] ?? 0, position: length - 1 - Number(found[i + 1]) };
          if (found[i + 2]) at.task = String(found[i + 2]);
        }
        looking = looking.filter((id) => !out.get(id)!.queue);
      }
    }
  }

  // Delivered to a worker and not yet acknowledged: kombu's unacked hash (`[message, exchange, key]`).
  if (looking.length > 0) {
    let cursor = '0';
    do {
      const [next, flat] = await deps.client.hscan(unackedKey(deps.layout), cursor, 'COUNT', HASH_CHUNK);
      cursor = next;
      for (let i = 1; i < flat.length; i += 2) {
        const raw = flat[i]!;
        const id = looking.find((candidate) => raw.includes(candidate));
        if (id === undefined) continue;
        try {
          const entry = JSON.parse(raw) as unknown[];
          if (messageId(entry?.[0]) === id) out.get(id)!.queue ??= 'unacked';
        } catch {
          // Not kombu's: skipped.
        }
      }
      looking = looking.filter((id) => !out.get(id)!.queue);
    } while (cursor !== '0' && looking.length > 0);
  }

  return ids.map((id) => out.get(id)!);
}
