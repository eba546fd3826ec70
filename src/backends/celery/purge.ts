import { isUtf8 } from 'node:buffer';
import type { Redis } from 'ioredis';
import { LineWriter } from '../../archive/archive.js';
import { luaScript, runScript } from '../lua.js';
import { previewOf } from '../purge-preview.js';
import type { PurgeBatch, PurgeItem, PurgePlace, PurgeState, QueuePurger } from '../queue-backend.js';
import { TAKE_NEAR_TAIL_LUA } from '../tail-window.js';
import { RESULT_KEY_PREFIX } from './keys.js';
import { type CeleryLine, messageOf, sampleOf, sha1 } from './purge-line.js';
import { type CeleryRestoreOptions, createCeleryRestorer } from './purge-restore.js';

/**
 * Removes one batch of messages from a kombu priority list without needing memory and without
 * taking a message a worker could still get: messages are compared by SHA1 (the bodies never go
 * back over the network). Workers BRPOP from the tail and producers LPUSH at the head, so the
 * batch read from the tail is still the tail, minus what workers took meanwhile: the fast path
 * checks exactly that and LTRIMs it off in one O(batch) step, keeping every other message in its
 * order. Anything else (a message RPUSHed back by kombu's restore) is looked for among the last
 * 2n + 64 messages only, popped and pushed back without the batch's.
 *
 * KEYS[1]: the list. ARGV: SHA1 of each message, tail first. Returns 1/0 per message.
 */
export const DELETE_MESSAGES = luaScript(`${TAKE_NEAR_TAIL_LUA}
local n = #ARGV
local out = {}
for i = 1, n do out[i] = 0 end
local tail = redis.call('LRANGE', KEYS[1], -n, -1)
local m = #tail
if m == 0 then return out end
local digest = {}
local function at(j)
  if digest[j] == nil then digest[j] = redis.sha1hex(tail[j]) end
  return digest[j]
end
local first = nil
local last = at(m)
for i = 1, n do
  if ARGV[i] == last then first = i break end
end
if first ~= nil then
  local k = n - first + 1
  local whole = k <= m
  if whole then
    for x = 0, k - 1 do
      if at(m - x) ~= ARGV[first + x] then whole = false break end
    end
  end
  if whole then
    redis.call('LTRIM', KEYS[1], 0, -(k + 1))
    for i = first, n do out[i] = 1 end
    return out
  end
end
local wanted = {}
for i = n, 1, -1 do
  local d = ARGV[i]
  if wanted[d] == nil then wanted[d] = {} end
  table.insert(wanted[d], i)
end
-- From the tail inward: a message twice in the window goes from the tail first, as LREM -1.
take_near_tail(KEYS[1], 2 * n + 64, function(message)
  local batch = wanted[redis.sha1hex(message)]
  if batch == nil or #batch == 0 then return false end
  out[table.remove(batch)] = 1
  return true
end)
return out`);

/** Deletes result keys only if they still hold what was archived (same SHA1). */
const DELETE_RESULTS = luaScript(`
local out = {}
for i, key in ipairs(KEYS) do
  local value = redis.call('GET', key)
  if value and redis.sha1hex(value) == ARGV[i] then
    redis.call('UNLINK', key)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out`);

/** What ends an archived message's line, encoded once. */
const LINE_END = Buffer.from('}\n');

export interface CeleryPurgerOptions extends CeleryRestoreOptions {
  queue: string;
  /** Ids of the queue's FAILURE results (the failure index), newest first. */
  failureIds: () => Promise<string[]>;
}

/**
 * The purger of one Celery queue. `waiting`: the raw messages of each priority list, archived
 * with their list in the order a worker would take them, removed by LTRIM from the tail.
 * `failed`: the queue's FAILURE results (`celery-task-meta-<id>`, with their remaining ttl).
 * `delayed`: Celery keeps ETA tasks in the workers, so there is none (said in the preview).
 * Undo's side (conflicts, restore, the marker) is purge-restore.ts.
 */
export function createCeleryPurger(options: CeleryPurgerOptions): QueuePurger {
  const { broker, results, lists } = options;
  const now = options.now ?? Date.now;
  /** The failed results' keys, as the last count of the places found them: walked by position. */
  let failureKeys: string[] | undefined;

  async function sizes(states: PurgeState[]): Promise<PurgePlace[]> {
    const places: PurgePlace[] = [];
    if (states.includes('failed')) {
      failureKeys = (await options.failureIds()).map((id) => RESULT_KEY_PREFIX + id);
      places.push({ state: 'failed', name: 'results', kind: 'keys', size: failureKeys.length });
    }
    if (states.includes('waiting')) {
      const pipeline = broker.pipeline();
      for (const list of lists) pipeline.llen(list);
      const replies = (await pipeline.exec()) ?? [];
      lists.forEach((list, i) => {
        const [error, size] = replies[i]!;
        if (error) throw error;
        places.push({ state: 'waiting', name: list, kind: 'list', size: Number(size) });
      });
    }
    return places;
  }

  const read = async (place: PurgePlace, offset: number, limit: number): Promise<PurgeBatch> =>
    place.kind === 'keys'
      ? await readResults(results, (failureKeys ?? []).slice(offset, offset + limit), now)
      : await readMessages(broker, place, offset, limit);

  return {
    async preview(states) {
      const preview = await previewOf(await sizes(states), read, (line) =>
        sampleOf(JSON.parse(line) as CeleryLine, now()),
      );
      return {
        ...preview,
        ...(states.includes('delayed') ? { unsupported: { delayed: 'EtaTasksLiveInWorkers' } } : {}),
      };
    },

    places: sizes,
    read,
    remove: (place, items) => removeRecords(options, place, items),

    parse(line) {
      const record = JSON.parse(line) as CeleryLine;
      return 'k' in record
        ? { place: 'results', identity: record.k, check: sha1(record.v) }
        : { place: record.l, identity: sha1(messageOf(record)) };
    },

    ...createCeleryRestorer(options),

    meta: () => ({ queue: options.queue, lists }),

    // A read is one LRANGE (well under a millisecond for 500 messages); a delete hashes each
    // message it compares in Lua (about 3 µs for a kombu message of 1 KB).
    batch: { read: 500, delete: 250 },

    async close() {
      broker.disconnect();
      if (results !== broker) results.disconnect();
    },
  };
}

/** A read of failed results: each key's value and the rest of its ttl, and when they were read. */
async function readResults(results: Redis, keys: string[], now: () => number): Promise<PurgeBatch> {
  if (keys.length === 0) return { items: [], lines: [] };
  const pipeline = results.pipeline();
  for (const key of keys) {
    pipeline.get(key);
    pipeline.pttl(key);
  }
  const replies = (await pipeline.exec()) ?? [];
  const at = now();
  const items: PurgeItem[] = [];
  const lines: Buffer[] = [];
  keys.forEach((key, i) => {
    const [getError, value] = replies[2 * i]!;
    const [, ttl] = replies[2 * i + 1]!;
    if (getError) throw getError;
    if (value === null) return; // expired or removed since the index saw it
    const line: CeleryLine = { k: key, v: String(value), t: Number(ttl), a: at };
    items.push({ identity: key, check: sha1(line.v) });
    lines.push(Buffer.from(`${JSON.stringify(line)}\n`));
  });
  return { items, lines };
}

/** A read of a priority list from its tail (where a worker takes first), `offset` messages in. */
async function readMessages(
  broker: Redis,
  place: PurgePlace,
  offset: number,
  limit: number,
): Promise<PurgeBatch> {
  const got = await broker.lrangeBuffer(place.name, -(offset + limit), -(offset + 1));
  const items: PurgeItem[] = [];
  let bytes = 0;
  for (const message of got) bytes += message.length;
  // Each message as a JSON string (a kombu envelope's quotes escaped: about a tenth more), its list.
  const lines = new LineWriter(Math.ceil(bytes * 1.25) + got.length * 64);
  // `{"l":list,"m":message}` as JSON.stringify writes it, without building the object or
  // decoding the message.
  const list = JSON.stringify(place.name);
  const head = Buffer.from(`{"l":${list},"m":`);
  // LRANGE is head→tail; a worker takes the tail first, and so does the archive.
  for (let i = got.length - 1; i >= 0; i--) {
    const message = got[i]!;
    items.push({ identity: sha1(message) });
    // Kombu writes JSON, so this is UTF-8 but for a message some other producer wrote.
    if (isUtf8(message)) lines.writeJsonString(head, message, LINE_END);
    else lines.write(`{"l":${list},"b":"${message.toString('base64')}"}\n`);
  }
  return { items, lines: lines.blocks() };
}

/** The conditional delete: results that still hold what was archived, messages by their SHA1. */
async function removeRecords(
  options: CeleryPurgerOptions,
  place: PurgePlace,
  items: PurgeItem[],
): Promise<boolean[]> {
  if (items.length === 0) return [];
  if (place.kind === 'keys') {
    const values = items.map((i) => String(i.check));
    const flags = (await runScript(
      options.results,
      DELETE_RESULTS,
      items.map((i) => i.identity),
      values,
    )) as number[];
    const removed = flags.map((f) => Number(f) > 0);
    options.onResultsChanged?.(
      items.filter((_, i) => removed[i]).map((i) => i.identity.slice(RESULT_KEY_PREFIX.length)),
      false,
    );
    return removed;
  }
  const flags = (await runScript(
    options.broker,
    DELETE_MESSAGES,
    [place.name],
    items.map((i) => i.identity),
  )) as number[];
  return flags.map((f) => Number(f) > 0);
}
