import type { Redis } from 'ioredis';
import { luaScript, runScript } from '../lua.js';
import type { JobFound, JobLookup, JobView } from '../queue-backend.js';

/** Where a BullMQ job is. `unknown`: its hash exists but no list or set holds it (mid-move, or a wait list past the search bound). */
export type BullmqJobState =
  | 'waiting'
  | 'paused'
  | 'active'
  | 'delayed'
  | 'prioritized'
  | 'failed'
  | 'completed'
  | 'waiting-children'
  | 'unknown';

/**
 * One BullMQ job as `job` shows it, BullMQ's own view of a job (what a BullMQ backend's lookup
 * holds): never `data` nor `returnvalue`. Times are ms since the epoch.
 */
export interface BullmqJobView extends JobView {
  state: BullmqJobState;
  name: string;
  /** Waiting: how many jobs workers take before it (0: next). */
  position: number | null;
  /** Delayed: when it becomes due. */
  dueAt: number | null;
  priority: number | null;
  attempts: { made: number; allowed: number | null };
  timestamps: { added: number | null; processed: number | null; finished: number | null };
  /** processed − added, finished − processed, in ms. */
  waitMs: number | null;
  runMs: number | null;
  failedReason: string | null;
  /** The first lines of the last stack trace. */
  stack: string[];
  progress: unknown;
  /** Active: the worker's lock, and how long it has left (ms). */
  lock: { held: boolean; ttlMs: number | null } | null;
  parent: { queue: string; id: string } | null;
  children: { pending: number; processed: number; failed: number; keys: string[] };
  repeatKey: string | null;
  /** How far the search for a waiting job's place went, when its state needed one. */
  searched: number | null;
}

/** A lookup a BullMQ backend answered: its job is BullMQ's view of the job. */
export function isBullmqJob(lookup: JobLookup): lookup is JobFound<BullmqJobView> {
  return lookup.found && lookup.kind === 'bullmq';
}

/** A waiting job's place is searched from where workers take next, this far at most. */
export const WAIT_SEARCH_MAX = 200_000;
const STACK_LINES = 6;
const STACK_CHARS = 2_000;
const CHILD_KEYS = 10;

/**
 * One job's fields and place, read-only, in one call: HMGET of the fields that may be shown (never
 * `data` or `returnvalue`), the sorted sets by ZSCORE, the lists by LPOS from the tail, bounded.
 *
 * KEYS: job hash, wait, paused, active, prioritized, delayed, failed, completed, waiting-children,
 *       lock, dependencies, processed, failed children (BullMQ 5.x's `:failed` hash, absent in older)
 * ARGV: id, search bound, stack chars, child keys
 */
const READ_JOB = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local id = ARGV[1]
local bound = tonumber(ARGV[2])
local fields = redis.call('HMGET', KEYS[1], 'name', 'attemptsMade', 'opts', 'timestamp', 'processedOn',
  'finishedOn', 'failedReason', 'stacktrace', 'progress', 'parentKey', 'rjk', 'priority', 'delay', 'atm', 'deid')
local state = 'unknown'
local detail = ''
local searched = ''
for _, z in ipairs({ { 5, 'prioritized' }, { 6, 'delayed' }, { 7, 'failed' }, { 8, 'completed' }, { 9, 'waiting-children' } }) do
  local score = redis.call('ZSCORE', KEYS[z[1]], id)
  if score then
    state = z[2]
    detail = score
    break
  end
end
if state == 'unknown' then
  for _, l in ipairs({ { 4, 'active' }, { 2, 'waiting' }, { 3, 'paused' } }) do
    local n = redis.call('LLEN', KEYS[l[1]])
    if n > 0 then
      local at = redis.call('LPOS', KEYS[l[1]], id, 'RANK', -1, 'MAXLEN', bound)
      if l[2] ~= 'active' then
        if n < bound then searched = n else searched = bound end
      end
      if at then
        state = l[2]
        detail = n - 1 - at
        break
      end
    end
  end
end
local stack = fields[8] or ''
stack = string.sub(stack, 1, tonumber(ARGV[3]))
local pending = redis.call('SCARD', KEYS[11])
local processed = redis.call('HLEN', KEYS[12])
local failedChildren = 0
if redis.call('TYPE', KEYS[13]).ok == 'hash' then failedChildren = redis.call('HLEN', KEYS[13]) end
local childKeys = redis.call('SRANDMEMBER', KEYS[11], tonumber(ARGV[4]))
return {
  state, tostring(detail), tostring(searched),
  fields[1] or '', fields[2] or '', fields[3] or '', fields[4] or '', fields[5] or '', fields[6] or '',
  fields[7] or '', stack, fields[9] or '', fields[10] or '', fields[11] or '', fields[12] or '', fields[13] or '',
  redis.call('PTTL', KEYS[10]), pending, processed, failedChildren, childKeys, fields[15] or '', fields[14] or ''
}`);

const num = (text: string | undefined): number | null =>
  text === undefined || text === '' || Number.isNaN(Number(text)) ? null : Number(text);

/** The attempts a job may make: `opts.attempts` (1 when unset: one try, no retry). */
function attemptsAllowed(opts: string): number | null {
  if (!opts) return null;
  try {
    const parsed = JSON.parse(opts) as { attempts?: unknown };
    // BullMQ makes one attempt when `attempts` is unset or 0.
    return typeof parsed.attempts === 'number' && parsed.attempts > 1 ? parsed.attempts : 1;
  } catch {
    return null;
  }
}

/** BullMQ stores the stack traces of every attempt as a JSON array of strings; the last is the newest. */
function stackLines(raw: string): string[] {
  if (!raw) return [];
  let newest = raw;
  try {
    const traces = JSON.parse(raw) as unknown;
    if (Array.isArray(traces)) newest = String(traces.at(-1) ?? '');
  } catch {
    // cut by STACK_CHARS mid-JSON: take the text of the newest entry as it is
    const start = raw.lastIndexOf('",');
    newest = (start >= 0 ? raw.slice(start + 2) : raw).replace(/^\["?|^"/, '');
    newest = newest.replace(/\\n/g, '\n');
  }
  return newest
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line !== '')
    .slice(0, STACK_LINES);
}

/** `bull:parentQueue:parentId` → its queue and id (the prefix may itself contain `:`, e.g. `{hs}`). */
function parseParentKey(parentKey: string, prefix: string): { queue: string; id: string } | null {
  if (!parentKey) return null;
  const rest = parentKey.startsWith(`${prefix}:`) ? parentKey.slice(prefix.length + 1) : parentKey;
  const colon = rest.indexOf(':');
  return colon < 0 ? null : { queue: rest.slice(0, colon), id: rest.slice(colon + 1) };
}

function parseProgress(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Reads one job; undefined when no job has that id in the queue. */
export async function readBullmqJob(
  client: Redis,
  prefix: string,
  queue: string,
  id: string,
): Promise<BullmqJobView | undefined> {
  const base = `${prefix}:${queue}:`;
  const keys = [
    `${base}${id}`,
    `${base}wait`,
    `${base}paused`,
    `${base}active`,
    `${base}prioritized`,
    `${base}delayed`,
    `${base}failed`,
    `${base}completed`,
    `${base}waiting-children`,
    `${base}${id}:lock`,
    `${base}${id}:dependencies`,
    `${base}${id}:processed`,
    `${base}${id}:failed`,
  ];
  const reply = (await runScript(client, READ_JOB, keys, [id, WAIT_SEARCH_MAX, STACK_CHARS, CHILD_KEYS])) as
    | (string | number | string[])[]
    | null;
  if (!reply) return undefined;
  const [state, detail, searched, name, attemptsMade, opts, added, processed, finished, failedReason, stack] =
    reply as string[];
  const [progress, parentKey, repeatKey, priority, delay] = reply.slice(11, 16) as string[];
  const lockTtl = Number(reply[16]);
  const [pending, processedChildren, failedChildren] = reply.slice(17, 20).map(Number) as [
    number,
    number,
    number,
  ];
  const childKeys = (reply[20] as string[]) ?? [];
  const scheduler = String(reply[21] ?? '');
  // BullMQ ≥ 5 counts attempts in `atm`; older majors in `attemptsMade`.
  const made = num(String(reply[22] ?? '')) ?? num(attemptsMade) ?? 0;
  const jobState = state as BullmqJobState;
  const addedAt = num(added);
  const processedAt = num(processed);
  const finishedAt = num(finished);
  // Delayed scores are `due * 0x1000 + counter` in BullMQ ≥ 3; the job's own timestamp + delay otherwise.
  const dueAt =
    jobState === 'delayed'
      ? Math.floor(Number(detail) / 0x1000) || (addedAt !== null ? addedAt + (num(delay) ?? 0) : null)
      : null;
  return {
    id,
    state: jobState,
    name: name ?? '',
    position: jobState === 'waiting' || jobState === 'paused' ? Number(detail) : null,
    dueAt,
    priority: num(priority) || null,
    attempts: { made, allowed: attemptsAllowed(opts ?? '') },
    timestamps: { added: addedAt, processed: processedAt, finished: finishedAt },
    waitMs: processedAt !== null && addedAt !== null ? Math.max(0, processedAt - addedAt) : null,
    runMs: finishedAt !== null && processedAt !== null ? Math.max(0, finishedAt - processedAt) : null,
    failedReason: failedReason ? failedReason : null,
    stack: stackLines(stack ?? ''),
    progress: parseProgress(progress ?? ''),
    lock:
      jobState === 'active'
        ? { held: lockTtl > 0 || lockTtl === -1, ttlMs: lockTtl > 0 ? lockTtl : null }
        : null,
    parent: parseParentKey(parentKey ?? '', prefix),
    children: {
      pending,
      processed: processedChildren,
      failed: failedChildren,
      keys: childKeys.map((key) => (key.startsWith(`${prefix}:`) ? key.slice(prefix.length + 1) : key)),
    },
    repeatKey: repeatKey || scheduler || null,
    searched: searched === '' ? null : Number(searched),
  };
}
