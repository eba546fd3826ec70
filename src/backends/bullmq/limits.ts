import { luaScript } from '../lua.js';
import type { QueueLimitChange, QueueLimits, QueueLimitValues } from '../queue-backend.js';

/**
 * The meta fields BullMQ's global limits live in, as `Queue.setGlobalConcurrency` (`concurrency`)
 * and `Queue.setGlobalRateLimit` (`max`, `duration` in ms) write them, and as its workers' Lua
 * reads them (`getQueueMetadata.lua`, `isQueueMaxed.lua`: `HMGET meta paused concurrency max duration`).
 */
export const LIMIT_FIELDS = { concurrency: ['concurrency'], 'rate-limit': ['max', 'duration'] } as const;

/**
 * The first BullMQ release whose workers honour each meta field: global concurrency came in 5.9.0
 * (taskforcesh/bullmq 47ba055, "support global concurrency"), the global rate limit in 5.60.0
 * (bef57a0, "support global rate limit"). Every 6.x has both.
 */
export const LIMIT_SINCE = { concurrency: [5, 9, 0], 'rate-limit': [5, 60, 0] } as const;

/** `5.60.0` from the tuple. */
export const sinceText = (kind: QueueLimitChange['kind']) => LIMIT_SINCE[kind].join('.');

/**
 * Whether the BullMQ that wrote the queue's meta (`bullmq:6.7.0`) has the limit, and why not.
 * Only `bullmq:` versions are judged: a queue without a version (written before 5.20.0, which
 * began stamping it, or only with `skipMetasUpdate`) and BullMQ Pro's own numbering are unknown,
 * and a limit its workers may silently ignore is refused rather than shown as in force.
 */
export function limitSupport(
  version: string | null,
  kind: QueueLimitChange['kind'],
): { ok: true } | { ok: false; reason: 'noVersion' | 'otherLibrary' | 'tooOld'; version: string | null } {
  if (!version) return { ok: false, reason: 'noVersion', version: null };
  const match = /^([\w-]+):(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (match?.[1] !== 'bullmq') return { ok: false, reason: 'otherLibrary', version };
  const have = [Number(match[2]), Number(match[3]), Number(match[4])];
  const need = LIMIT_SINCE[kind];
  for (let i = 0; i < 3; i++) {
    if (have[i]! > need[i]!) return { ok: true };
    if (have[i]! < need[i]!) return { ok: false, reason: 'tooOld', version };
  }
  return { ok: true };
}

const positive = (value: unknown): number | null => {
  const n = Number(value);
  return value !== null && value !== undefined && Number.isFinite(n) && n > 0 ? n : null;
};

/**
 * The limits in force from the meta fields' raw values. BullMQ treats a missing or non-positive
 * `concurrency` as none, and a rate limit needs `max` (its duration may come from the worker).
 */
export function limitsOfMeta(concurrency: unknown, max: unknown, duration: unknown): QueueLimitValues {
  const maxJobs = positive(max);
  return {
    concurrency: positive(concurrency),
    rateLimit: maxJobs === null ? null : { max: maxJobs, durationMs: positive(duration) ?? 0 },
  };
}

/** `HMGET meta version concurrency max duration` → the queue's limits. */
export function queueLimitsOf(queue: string, reply: readonly (string | null)[]): QueueLimits {
  const [version, concurrency, max, duration] = reply;
  const unsupported: QueueLimits['unsupported'] = {};
  for (const kind of ['concurrency', 'rate-limit'] as const) {
    const support = limitSupport(version ?? null, kind);
    if (!support.ok) unsupported[kind] = { reason: support.reason, since: sinceText(kind) };
  }
  return { queue, version: version ?? null, ...limitsOfMeta(concurrency, max, duration), unsupported };
}

/** The HSET field/values (or HDEL fields, when null) that `change` writes, as BullMQ does. */
export function metaWrite(change: QueueLimitChange): { set?: Record<string, number>; remove?: string[] } {
  if (change.value === null) return { remove: [...LIMIT_FIELDS[change.kind]] };
  if (change.kind === 'concurrency') return { set: { concurrency: change.value } };
  return { set: { max: change.value.max, duration: change.value.durationMs } };
}

/**
 * Compare-and-set of a limit's meta fields, in one step: KEYS[1] the meta hash; ARGV[1] the number
 * n of fields, then the n fields, the n values they must hold now ('' for absent), and the n values
 * to write ('' deletes the field). Returns 1 when it wrote, 0 when a field held something else
 * (nothing written).
 */
export const SET_LIMIT_IF = luaScript(`
local n = tonumber(ARGV[1])
for i = 1, n do
  local now = redis.call('HGET', KEYS[1], ARGV[1 + i]) or ''
  if now ~= ARGV[1 + n + i] then return 0 end
end
for i = 1, n do
  local field = ARGV[1 + i]
  local value = ARGV[1 + 2 * n + i]
  if value == '' then redis.call('HDEL', KEYS[1], field) else redis.call('HSET', KEYS[1], field, value) end
end
return 1
`);

/** The raw meta values a limit of `kind` at `value` is written as ('' for a field it leaves absent). */
export function metaValues(change: QueueLimitChange): string[] {
  const write = metaWrite(change);
  return LIMIT_FIELDS[change.kind].map((field) =>
    write.set && field in write.set ? String(write.set[field]) : '',
  );
}

/** SET_LIMIT_IF's arguments: write `change` only while the fields still hold `expected`. */
export function setLimitIfArgs(change: QueueLimitChange, expected: QueueLimitChange['value']): string[] {
  const fields = [...LIMIT_FIELDS[change.kind]];
  const now = metaValues({ kind: change.kind, value: expected } as QueueLimitChange);
  return [String(fields.length), ...fields, ...now, ...metaValues(change)];
}
