import type { Redis } from 'ioredis';
import { luaScript, runScript } from '../lua.js';
import type { QueuePurger, UndoStep } from '../queue-backend.js';
import {
  MARKER_MOVED,
  readUndoProgress,
  UNDO_MARKER_LUA,
  undoMarkerKey,
  undoStepArgs,
  undoTakenOver,
} from '../undo-marker.js';
import { type CeleryLine, messageOf, sha1 } from './purge-line.js';

/**
 * Undo's side of the Celery purger (purge.ts): which archived tasks are in Redis again, and the
 * archived lines put back (results first, then the messages with the undo's marker), never a
 * task id twice.
 */

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

/** What the undo side of a Celery purger works with. */
export interface CeleryRestoreOptions {
  broker: Redis;
  /** The result backend (the broker's client when they are the same Redis). */
  results: Redis;
  /** The queue's priority lists, in the order workers serve them. */
  lists: string[];
  /** Told which results were purged or restored, so counts follow at once. */
  onResultsChanged?: (purged: string[], restored: boolean) => void;
  /** kombu's `unacked` hash (with the global key prefix): messages workers hold. Default `unacked`. */
  unacked?: string;
  now?: () => number;
}

/** Task keys in Redis, as read for an undo (and what it pushed since), with its token. */
interface Present {
  keys: Set<string>;
  token: string;
  purgeId: string;
}

/** One restorer: its options, and what it last read of the tasks in Redis. */
interface Restorer {
  readonly options: CeleryRestoreOptions;
  readonly now: () => number;
  present: Present | undefined;
}

/** The lines of one restore call, sorted for its two scripts. */
interface SortedLines {
  /** Result keys, and their (value, ms of ttl left) pairs. */
  resultKeys: string[];
  resultArgs: string[];
  /** Each list's index into RESTORE_MESSAGES's KEYS. */
  listIndex: Map<string, number>;
  /** (index of its list, message) pairs. */
  messageArgs: (string | Buffer)[];
  messages: number;
}

/** The undo side of one Celery queue's purger. */
export function createCeleryRestorer(
  options: CeleryRestoreOptions,
): Pick<QueuePurger, 'conflicts' | 'restore' | 'undoProgress' | 'clearUndoProgress'> {
  const { broker } = options;
  const restorer: Restorer = { options, now: options.now ?? Date.now, present: undefined };
  return {
    conflicts: (lines) => conflictsOf(restorer, lines),
    restore: (batch, step) => restoreLines(restorer, batch, step),
    undoProgress: (purgeId) => readUndoProgress(broker, undoMarkerKey(purgeId)),
    clearUndoProgress: async (purgeId) => {
      await broker.del(undoMarkerKey(purgeId), presentTokenKey(purgeId));
    },
  };
}

/**
 * Every task the queue holds: each of its priority lists, read in bounded stretches from the
 * head (a worker taking from the tail meanwhile moves nothing not yet read, and a message it
 * took is in `unacked` when that is read next), and the messages workers hold (`unacked`,
 * global: a task id is a task id whichever queue it came from). Read-only, a few milliseconds
 * a call.
 */
async function tasksInRedis(options: CeleryRestoreOptions): Promise<Set<string>> {
  const { broker } = options;
  const keys = new Set<string>();
  for (const list of options.lists) {
    for (let from = 0; ; from += SCAN_BATCH) {
      const got = (await runScript(broker, TASK_KEYS, [list], [from, from + SCAN_BATCH - 1])) as string[];
      for (const key of got) keys.add(key);
      if (got.length < SCAN_BATCH) break;
    }
  }
  let cursor = '0';
  do {
    const [next, entries] = await broker.hscan(options.unacked ?? 'unacked', cursor, 'COUNT', SCAN_BATCH);
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
async function readPresent(restorer: Restorer, purgeId: string | undefined): Promise<Present> {
  const { broker } = restorer.options;
  const keys = await tasksInRedis(restorer.options);
  const mine = `${restorer.now()}-${Math.random().toString(36).slice(2)}`;
  const token = purgeId
    ? String((await runScript(broker, SET_TOKEN, [presentTokenKey(purgeId)], [mine])) ?? '')
    : '';
  restorer.present = { keys, token, purgeId: purgeId ?? '-' };
  return restorer.present;
}

/**
 * Which lines' records are in Redis: a message when its task id is (in a priority list of the
 * queue, or held by a worker); a result key, when it exists again with another value (one
 * holding the archived value is this undo's own, resumed).
 */
async function conflictsOf(restorer: Restorer, lines: string[]): Promise<string[]> {
  const all = lines.map((line) => JSON.parse(line) as CeleryLine);
  const records = all.filter((r): r is Extract<CeleryLine, { k: string }> => 'k' in r);
  const found: string[] = [];
  if (records.length > 0)
    found.push(
      ...((await runScript(
        restorer.options.results,
        RESULTS_TAKEN,
        records.map((r) => r.k),
        records.map((r) => sha1(r.v)),
      )) as string[]),
    );
  const messages = all.filter((r): r is Exclude<CeleryLine, { k: string }> => !('k' in r));
  if (messages.length > 0) {
    const inRedis = await tasksInRedis(restorer.options);
    for (const record of messages) {
      const message = messageOf(record);
      if (inRedis.has(taskKeyOf(message))) found.push(sha1(message));
    }
  }
  return found;
}

/**
 * Puts one batch of archived lines back. Results first: setting one twice is harmless (NX, and
 * the same value counts as back), so a call cut short between the two is simply done again; the
 * messages, which could be pushed twice, go last, with the marker.
 */
async function restoreLines(
  restorer: Restorer,
  batch: string[],
  step: UndoStep | undefined,
): Promise<{ restored: number; existing: string[] }> {
  const { options } = restorer;
  const sorted = sortLines(batch, restorer.now());
  let restored = 0;
  const existing: string[] = [];
  if (sorted.resultKeys.length > 0) {
    const flags = (await runScript(
      options.results,
      RESTORE_RESULTS,
      sorted.resultKeys,
      sorted.resultArgs,
    )) as number[];
    flags.forEach((flag, i) => {
      if (Number(flag) > 0) restored += 1;
      else existing.push(sorted.resultKeys[i]!);
    });
    options.onResultsChanged?.([], true);
  }
  if (sorted.messages > 0 || step) {
    const { pushed, skipped } = await pushMessages(restorer, sorted, batch.length, step, restored);
    restored += pushed;
    existing.push(...skipped);
  }
  return { restored, existing };
}

/** A batch's lines, sorted into results (with the rest of their ttl) and messages (with their list). */
function sortLines(batch: string[], at: number): SortedLines {
  const sorted: SortedLines = {
    resultKeys: [],
    resultArgs: [],
    listIndex: new Map(),
    messageArgs: [],
    messages: 0,
  };
  for (const line of batch) {
    const record = JSON.parse(line) as CeleryLine;
    if ('k' in record) {
      // A result keeps the rest of its ttl; one whose ttl ran out meanwhile is not brought back.
      const left = record.t > 0 ? record.t - (at - record.a) : 0;
      if (record.t > 0 && left <= 0) continue;
      sorted.resultKeys.push(record.k);
      sorted.resultArgs.push(record.v, String(left));
      continue;
    }
    if (!sorted.listIndex.has(record.l)) sorted.listIndex.set(record.l, sorted.listIndex.size + 3);
    sorted.messageArgs.push(String(sorted.listIndex.get(record.l)), messageOf(record));
    sorted.messages += 1;
  }
  return sorted;
}

/**
 * The batch's messages pushed back with the undo's marker moved past the whole batch (`lines`),
 * leaving out those whose task is in Redis. Read once per undo (and again if Redis lost it): the
 * tasks Redis holds now. `restoredBefore`: what this call put back already (its results).
 */
async function pushMessages(
  restorer: Restorer,
  sorted: SortedLines,
  lines: number,
  step: UndoStep | undefined,
  restoredBefore: number,
): Promise<{ pushed: number; skipped: string[] }> {
  const purgeId = step?.purgeId ?? '-';
  let known = restorer.present?.purgeId === purgeId ? restorer.present : undefined;
  for (;;) {
    if (sorted.messages > 0 && !known) known = await readPresent(restorer, step?.purgeId);
    const args: (string | Buffer)[] = [];
    const going = new Set<string>();
    const skipped: string[] = [];
    const { messageArgs } = sorted;
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
        restorer.options.broker,
        RESTORE_MESSAGES,
        [undoMarkerKey(purgeId), presentTokenKey(purgeId), ...sorted.listIndex.keys()],
        [
          ...undoStepArgs(step && { ...step, restoredBefore: step.restoredBefore + restoredBefore }, lines),
          known?.token ?? '',
          ...args,
        ],
      ),
    );
    if (pushed === MARKER_MOVED && step) throw undoTakenOver(step);
    if (pushed === PRESENT_STALE) {
      // This Redis is not the one read: it came back older, or another took its place.
      known = undefined;
      restorer.present = undefined;
      continue;
    }
    for (const key of going) known?.keys.add(key);
    return { pushed, skipped };
  }
}

/** Where an undo keeps the token of its read of the tasks in Redis (see RESTORE_MESSAGES). */
const presentTokenKey = (purgeId: string) => `${undoMarkerKey(purgeId)}:present`;
