import type { Redis } from 'ioredis';
import { ErrorCode, OpsError } from '../errors.js';
import type { UndoProgress, UndoStep } from './queue-backend.js';

/**
 * The key that says how far an undo got, in the Redis the jobs go back to. A BullMQ undo's is
 * under the queue's prefix: on Redis Cluster it shares the prefix's `{hash-tag}` slot (a script
 * may only touch keys of one slot), and a Redis user whose keys are limited to the prefix
 * (`~hs:*`) may write it. It is no job's key (BullMQ refuses a custom id like `undo:<id>`, with
 * one colon) and no queue's (queues are found by `<prefix>:*:meta`).
 */
export function undoMarkerKey(purgeId: string, prefix?: string): string {
  return `${prefix ? `${prefix}:` : ''}queue-ops:undo:${purgeId}`;
}

/** The marker's value, `"<position> <restored>"`, as written by the restore scripts. */
export function parseUndoProgress(value: string | null | undefined): UndoProgress {
  const [position, restored] = (value ?? '').split(' ').map(Number);
  return {
    position: Number.isSafeInteger(position) ? position! : 0,
    restored: Number.isSafeInteger(restored) ? restored! : 0,
  };
}

export async function readUndoProgress(client: Redis, key: string): Promise<UndoProgress> {
  return parseUndoProgress(await client.get(key));
}

/**
 * The arguments every restore script takes first: the position the marker must be at ('' for a
 * restore without an undo step, which neither checks nor moves it), the position after these
 * lines, and the running total before them.
 */
export function undoStepArgs(step: UndoStep | undefined, lines: number): string[] {
  if (!step) return ['', '', '0'];
  return [String(step.from), String(step.from + lines), String(step.restoredBefore)];
}

/**
 * The Lua shared by the restore scripts: `check_marker()` before anything is written (false when
 * another run moved the marker), `move_marker(restored)` after. KEYS[1] is the marker, ARGV[1..3]
 * are {@link undoStepArgs}. No ttl: see `QueuePurger.clearUndoProgress`.
 */
export const UNDO_MARKER_LUA = `
local function check_marker()
  if ARGV[1] == '' then return true end
  local at = redis.call('GET', KEYS[1])
  local position = at and string.match(at, '^(%d+)') or '0'
  return position == ARGV[1]
end
local function move_marker(restored)
  if ARGV[1] == '' then return end
  redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. (tonumber(ARGV[3]) + restored))
end
`;

/** What a restore script answers when its marker moved: another run holds the undo. */
export const MARKER_MOVED = -1;

export function undoTakenOver(step: UndoStep): OpsError {
  return new OpsError(ErrorCode.UndoTakenOver, { id: step.purgeId });
}
