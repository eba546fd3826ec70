import { ReplyError } from 'ioredis';
import { OpsError } from '../errors.js';
import type { QueuePurger } from './queue-backend.js';

/** Replies that mean "this Redis cannot serve us now", as opposed to a bug in what we sent. */
const UNAVAILABLE_REPLY = /^(NOAUTH|WRONGPASS|LOADING|MASTERDOWN|BUSY|MISCONF)\b/;

/**
 * Is this what ioredis throws when the Redis went away or stopped answering (a closed or reset
 * connection, a command sent while reconnecting, a timeout), rather than a reply to what was sent?
 */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof OpsError) return false;
  // A bug of ours (a line that does not parse, a missing field) is not Redis going away: taken
  // for one, an undo or purge would wait "for Redis" and be retried every 30 s for ever.
  if (error instanceof TypeError || error instanceof SyntaxError || error instanceof RangeError) return false;
  if (error instanceof ReferenceError) return false;
  const replied = error instanceof ReplyError || (error as Error)?.name === 'ReplyError';
  return !replied || UNAVAILABLE_REPLY.test(String((error as Error)?.message));
}

/**
 * A purger whose Redis calls fail as `RedisUnavailable` for its system when the connection is
 * lost: a purge or an undo stopped by a Redis that was killed or hangs then says which system,
 * and the purge service can tell "Redis went away" (resumable) from any other failure. Each call
 * is passed on synchronously, so a delete is still sent before `remove` returns.
 */
export function withUnavailable(purger: QueuePurger, unavailable: (error: unknown) => OpsError): QueuePurger {
  const map = (error: unknown): never => {
    throw isConnectionFailure(error) ? unavailable(error) : error;
  };
  return {
    ...purger,
    preview: (states) => purger.preview(states).catch(map),
    places: (states) => purger.places(states).catch(map),
    read: (place, offset, limit) => purger.read(place, offset, limit).catch(map),
    remove: (place, items) => purger.remove(place, items).catch(map),
    conflicts: (lines) => purger.conflicts(lines).catch(map),
    restore: (lines, step) => purger.restore(lines, step).catch(map),
    undoProgress: (purgeId) => purger.undoProgress(purgeId).catch(map),
    clearUndoProgress: (purgeId) => purger.clearUndoProgress(purgeId).catch(map),
  };
}
