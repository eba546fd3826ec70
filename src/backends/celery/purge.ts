import { isUtf8 } from 'node:buffer';
import { hash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LineWriter } from '../../archive/archive.js';
import { type LuaScript, luaScript, runScript } from '../lua.js';
import { previewOf } from '../purge-preview.js';
import type { PurgeBatch, PurgeItem, PurgePlace, PurgeState, QueuePurger } from '../queue-backend.js';
import { TAKE_NEAR_TAIL_LUA } from '../tail-window.js';
import {
  MARKER_MOVED,
  readUndoProgress,
  UNDO_MARKER_LUA,
  undoMarkerKey,
  undoStepArgs,
  undoTakenOver,
} from '../undo-marker.js';
import { RESULT_KEY_PREFIX } from './keys.js';

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

/** What RESTORE_MESSAGES answers when the ids present in Redis must be read again. */
const PRESENT_STALE = -2;

/**
 * Undo's messages: pushed back onto their lists in the order given, and the undo's marker moved
 * past them, in one call (see undo-marker.ts): a call cut short pushed nothing, and a resumed
 * undo never pushes a message twice.
 *
 * The caller leaves out the messages whose task id is in Redis (see `TASK_KEYS`), as read after it
 * wrote a token to KEYS[2]. The token still there says that this Redis is the one that was read,
 * with nothing of it lost since: a Redis restarted from an older snapshot, or a replica promoted
 * meanwhile, has an older token or none, and the call writes nothing (the caller reads again).
 *
 * KEYS[1]: the marker; KEYS[2]: the token's key; KEYS[3…]: the lists. ARGV[1..3]: the undo step;
 * ARGV[4]: the token ('' for none to check); then pairs of (index into KEYS of the list, message).
 * Returns the count pushed, -1 without writing when the marker moved, -2 when the token did not
 * hold.
 */
const RESTORE_MESSAGES = luaScript(`${UNDO_MARKER_LUA}
if not check_marker() then return ${MARKER_MOVED} end
if ARGV[4] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[4] then return ${PRESENT_STALE} end
local pushed = 0
for i = 5, #ARGV, 2 do
  redis.call('RPUSH', KEYS[tonumber(ARGV[i])], ARGV[i + 1])
  pushed = pushed + 1
end
move_marker(pushed)
return pushed`);

/**
 * Undo's results: each key set back (with the rest of its ttl, ARGV pairs of value and ms, 0 for
 * none) unless it exists. One that exists and holds the archived value already is back (a resumed
 * undo's own earlier write): 2. One that holds something else: 0, left alone.
 */
const RESTORE_RESULTS = luaScript(`
local out = {}
for i, key in ipairs(KEYS) do
  local value, ms = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local set
  if ms > 0 then set = redis.call('SET', key, value, 'PX', ms, 'NX')
  else set = redis.call('SET', key, value, 'NX') end
  if set then out[i] = 1
  elseif redis.call('GET', key) == value then out[i] = 2
  else out[i] = 0 end
end
return out`);

/**
 * Which tasks a stretch of a list holds, so that undo never pushes a task id that is present: the
 * task id of each message (`id:<headers.id>`), or `sha1:<digest>` for a message with no id in its
 * headers (protocol 1, another producer). Found by a plain search rather than cjson, which would
 * cost a thousand messages tens of milliseconds: in a kombu envelope the body is base64, and a
 * quote inside a JSON string is escaped, so the first `"id"` key after `"headers"` is the task's.
 *
 * KEYS[1]: the list. ARGV: LRANGE's start and stop. Returns one string per message, head first.
 */
const TASK_KEYS = luaScript(`
local got = redis.call('LRANGE', KEYS[1], ARGV[1], ARGV[2])
local out = {}
for i = 1, #got do
  local m = got[i]
  local h = string.find(m, '"headers"', 1, true)
  local id = h and string.match(m, '"id"%s*:%s*"([^"]*)"', h)
  if id then out[i] = 'id:' .. id else out[i] = 'sha1:' .. redis.sha1hex(m) end
end
return out`);

/** KEYS[1] set to ARGV[1] unless it holds a value already; returns the value it holds. */
const SET_TOKEN = luaScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then return ARGV[1] end
return redis.call('GET', KEYS[1])`);

/** Messages per TASK_KEYS call: a millisecond or two of Redis for kombu messages of about 1 KB. */
const SCAN_BATCH = 1000;
/** What ends an archived message's line, encoded once. */
const LINE_END = Buffer.from('}\n');

/** What TASK_KEYS says of one message, worked out the same way from its bytes or text. */
export function taskKeyOf(message: string | Buffer): string {
  const text = typeof message === 'string' ? message : message.toString('latin1');
  const headers = text.indexOf('"headers"');
  const id = headers < 0 ? null : /"id"[ \t\n\r\f\v]*:[ \t\n\r\f\v]*"([^"]*)"/.exec(text.slice(headers));
  if (id) return `id:${typeof message === 'string' ? id[1] : Buffer.from(id[1]!, 'latin1').toString()}`;
  return `sha1:${sha1(message)}`;
}

/** The task id (or `sha1:` digest) a task key names, as reported to the user. */
const shownKey = (key: string) => (key.startsWith('id:') ? key.slice(3) : key);

/** Undo's check: result keys that exist again holding something other than what was archived. */
const RESULTS_TAKEN = luaScript(`
local out = {}
for i, key in ipairs(KEYS) do
  local value = redis.call('GET', key)
  if value and redis.sha1hex(value) ~= ARGV[i] then out[#out + 1] = key end
end
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

// crypto.hash (Node 20.12, the engines floor): a third of createHash's cost on a message this size.
const sha1 = (data: string | Buffer) => hash('sha1', data, 'hex');

/**
 * What an archived line holds: a broker message and its list (`m`, the message as text; `b`,
 * its bytes in base64 when they are not UTF-8, so that they come back exactly and keep the
 * identity the delete compared), or a result key and its value.
 */
type CeleryLine =
  | { l: string; m: string }
  | { l: string; b: string }
  | { k: string; v: string; t: number; a: number };

/** The message of a line, as the bytes (or the text) it was in the list. */
const messageOf = (record: { m: string } | { b: string }): string | Buffer =>
  'b' in record ? Buffer.from(record.b, 'base64') : record.m;

export interface CeleryPurgerOptions {
  broker: Redis;
  /** The result backend (the broker's client when they are the same Redis). */
  results: Redis;
  queue: string;
  /** The queue's priority lists, in the order workers serve them. */
  lists: string[];
  /** Ids of the queue's FAILURE results (the failure index), newest first. */
  failureIds: () => Promise<string[]>;
  /** Told which results were purged or restored, so counts follow at once. */
  onResultsChanged?: (purged: string[], restored: boolean) => void;
  /** kombu's `unacked` hash (with the global key prefix): messages workers hold. Default `unacked`. */
  unacked?: string;
  now?: () => number;
}

/**
 * The purger of one Celery queue. `waiting`: the raw messages of each priority list, archived
 * with their list in the order a worker would take them, removed by LTRIM from the tail.
 * `failed`: the queue's FAILURE results (`celery-task-meta-<id>`, with their remaining ttl).
 * `delayed`: Celery keeps ETA tasks in the workers, so there is none (said in the preview).
 */
export function createCeleryPurger(options: CeleryPurgerOptions): QueuePurger {
  const { broker, results, lists } = options;
  const now = options.now ?? Date.now;
  const unacked = options.unacked ?? 'unacked';
  let failureKeys: string[] | undefined;
  /** Task keys in Redis, as read for this undo (and what it pushed since), with its token. */
  let present: { keys: Set<string>; token: string; purgeId: string } | undefined;

  /**
   * Every task the queue holds: each of its priority lists, read in bounded stretches from the
   * head (a worker taking from the tail meanwhile moves nothing not yet read, and a message it
   * took is in `unacked` when that is read next), and the messages workers hold (`unacked`,
   * global: a task id is a task id whichever queue it came from). Read-only, a few milliseconds
   * a call.
   */
  async function tasksInRedis(): Promise<Set<string>> {
    const keys = new Set<string>();
    for (const list of lists) {
      for (let from = 0; ; from += SCAN_BATCH) {
        const got = (await runScript(broker, TASK_KEYS, [list], [from, from + SCAN_BATCH - 1])) as string[];
        for (const key of got) keys.add(key);
        if (got.length < SCAN_BATCH) break;
      }
    }
    let cursor = '0';
    do {
      const [next, entries] = await broker.hscan(unacked, cursor, 'COUNT', SCAN_BATCH);
      cursor = next;
      // Each value is `[message, exchange, routing_key]`, the message an object with its headers.
      for (let i = 1; i < entries.length; i += 2) {
        const key = taskKeyOf(entries[i]!);
        if (key.startsWith('id:')) keys.add(key);
      }
    } while (cursor !== '0');
    return keys;
  }

  /**
   * The task keys present, and then the token (see RESTORE_MESSAGES): written once the read is
   * over, so a Redis that holds it holds everything the read saw. One that is there already (a
   * second run of the same undo) is taken as it is, so that two runs never void each other's.
   * A restore outside an undo step (no marker) checks no token.
   */
  async function readPresent(purgeId: string | undefined): Promise<NonNullable<typeof present>> {
    const keys = await tasksInRedis();
    const mine = `${now()}-${Math.random().toString(36).slice(2)}`;
    const token = purgeId
      ? String((await runScript(broker, SET_TOKEN, [presentTokenKey(purgeId)], [mine])) ?? '')
      : '';
    present = { keys, token, purgeId: purgeId ?? '-' };
    return present;
  }

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

  async function read(place: PurgePlace, offset: number, limit: number): Promise<PurgeBatch> {
    if (place.kind === 'keys') {
      const keys = (failureKeys ?? []).slice(offset, offset + limit);
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

  const remove = async (place: PurgePlace, items: PurgeItem[]): Promise<boolean[]> => {
    if (items.length === 0) return [];
    const run = (client: Redis, script: LuaScript, keys: string[], args: string[]) =>
      runScript(client, script, keys, args) as Promise<number[]>;
    if (place.kind === 'keys') {
      const values = items.map((i) => String(i.check));
      const flags = await run(
        results,
        DELETE_RESULTS,
        items.map((i) => i.identity),
        values,
      );
      const removed = flags.map((f) => Number(f) > 0);
      options.onResultsChanged?.(
        items.filter((_, i) => removed[i]).map((i) => i.identity.slice(RESULT_KEY_PREFIX.length)),
        false,
      );
      return removed;
    }
    const flags = (await runScript(
      broker,
      DELETE_MESSAGES,
      [place.name],
      items.map((i) => i.identity),
    )) as number[];
    return flags.map((f) => Number(f) > 0);
  };

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
    remove,

    parse(line) {
      const record = JSON.parse(line) as CeleryLine;
      return 'k' in record
        ? { place: 'results', identity: record.k, check: sha1(record.v) }
        : { place: record.l, identity: sha1(messageOf(record)) };
    },

    async conflicts(lines) {
      // A message is in Redis when its task id is: in a priority list of the queue, or held by a
      // worker. A result key, when it exists again with another value (one holding the archived
      // value is this undo's own, resumed).
      const all = lines.map((line) => JSON.parse(line) as CeleryLine);
      const records = all.filter((r): r is Extract<CeleryLine, { k: string }> => 'k' in r);
      const found: string[] = [];
      if (records.length > 0)
        found.push(
          ...((await runScript(
            results,
            RESULTS_TAKEN,
            records.map((r) => r.k),
            records.map((r) => sha1(r.v)),
          )) as string[]),
        );
      const messages = all.filter((r): r is Exclude<CeleryLine, { k: string }> => !('k' in r));
      if (messages.length > 0) {
        const inRedis = await tasksInRedis();
        for (const record of messages) {
          const message = messageOf(record);
          if (inRedis.has(taskKeyOf(message))) found.push(sha1(message));
        }
      }
      return found;
    },

    async restore(batch, step) {
      const at = now();
      const resultKeys: string[] = [];
      const resultArgs: string[] = [];
      const listIndex = new Map<string, number>();
      const messageArgs: (string | Buffer)[] = [];
      let messages = 0;
      for (const line of batch) {
        const record = JSON.parse(line) as CeleryLine;
        if ('k' in record) {
          // A result keeps the rest of its ttl; one whose ttl ran out meanwhile is not brought back.
          const left = record.t > 0 ? record.t - (at - record.a) : 0;
          if (record.t > 0 && left <= 0) continue;
          resultKeys.push(record.k);
          resultArgs.push(record.v, String(left));
          continue;
        }
        if (!listIndex.has(record.l)) listIndex.set(record.l, listIndex.size + 3);
        messageArgs.push(String(listIndex.get(record.l)), messageOf(record));
        messages += 1;
      }
      let restored = 0;
      const existing: string[] = [];
      // Results first: setting one twice is harmless (NX, and the same value counts as back),
      // so a call cut short between the two is simply done again; the messages, which could be
      // pushed twice, go last, with the marker.
      if (resultKeys.length > 0) {
        const flags = (await runScript(results, RESTORE_RESULTS, resultKeys, resultArgs)) as number[];
        flags.forEach((flag, i) => {
          if (Number(flag) > 0) restored += 1;
          else existing.push(resultKeys[i]!);
        });
        options.onResultsChanged?.([], true);
      }
      if (messages > 0 || step) {
        const purgeId = step?.purgeId ?? '-';
        let known = present?.purgeId === purgeId ? present : undefined;
        for (;;) {
          // Read once per undo (and again if Redis lost it): the tasks Redis holds now.
          if (messages > 0 && !known) known = await readPresent(step?.purgeId);
          const args: (string | Buffer)[] = [];
          const going = new Set<string>();
          const skipped: string[] = [];
          for (let i = 0; i < messageArgs.length; i += 2) {
            const key = taskKeyOf(messageArgs[i + 1]!);
            // Present, or twice in this batch: left as it is.
            if (known!.keys.has(key) || going.has(key)) skipped.push(shownKey(key));
            else {
              going.add(key);
              args.push(messageArgs[i]!, messageArgs[i + 1]!);
            }
          }
          const pushed = Number(
            await runScript(
              broker,
              RESTORE_MESSAGES,
              [undoMarkerKey(purgeId), presentTokenKey(purgeId), ...listIndex.keys()],
              [
                ...undoStepArgs(
                  step && { ...step, restoredBefore: step.restoredBefore + restored },
                  batch.length,
                ),
                known?.token ?? '',
                ...args,
              ],
            ),
          );
          if (pushed === MARKER_MOVED && step) throw undoTakenOver(step);
          if (pushed === PRESENT_STALE) {
            // This Redis is not the one read: it came back older, or another took its place.
            known = undefined;
            present = undefined;
            continue;
          }
          for (const key of going) known?.keys.add(key);
          restored += pushed;
          existing.push(...skipped);
          break;
        }
      }
      return { restored, existing };
    },

    undoProgress: (purgeId) => readUndoProgress(broker, undoMarkerKey(purgeId)),
    clearUndoProgress: async (purgeId) => {
      await broker.del(undoMarkerKey(purgeId), presentTokenKey(purgeId));
    },

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

/** Where an undo keeps the token of its read of the tasks in Redis (see RESTORE_MESSAGES). */
const presentTokenKey = (purgeId: string) => `${undoMarkerKey(purgeId)}:present`;

function sampleOf(record: CeleryLine, at: number): { name: string; ageSeconds: number | null } {
  if ('k' in record) {
    try {
      const meta = JSON.parse(record.v) as { name?: unknown; date_done?: unknown };
      const done =
        typeof meta.date_done === 'string' ? Date.parse(`${meta.date_done.replace(/Z?$/, 'Z')}`) : Number.NaN;
      return {
        name: typeof meta.name === 'string' ? meta.name : '',
        ageSeconds: Number.isFinite(done) ? Math.max(0, Math.floor((at - done) / 1000)) : null,
      };
    } catch {
      return { name: '', ageSeconds: null };
    }
  }
  try {
    const message = JSON.parse(messageOf(record).toString()) as { headers?: { task?: unknown } };
    // Messages carry no enqueue time: the age is unknown, not guessed.
    return { name: typeof message.headers?.task === 'string' ? message.headers.task : '', ageSeconds: null };
  } catch {
    return { name: '', ageSeconds: null };
  }
}
