import type { OpsError } from '../errors.js';
import type { QueuePurger } from './queue-backend.js';
import { classifyRedisError, isConnectionFailure } from './redis-errors.js';

export { isConnectionFailure } from './redis-errors.js';

/**
 * A purger whose Redis calls fail as `RedisUnavailable` for its system when the connection is
 * lost: a purge or an undo stopped by a Redis that was killed or hangs then says which system,
 * and the purge service can tell "Redis went away" (resumable) from any other failure. Each call
 * is passed on synchronously, so a delete is still sent before `remove` returns.
 */
export function withUnavailable(purger: QueuePurger, unavailable: (error: unknown) => OpsError): QueuePurger {
  const map = (error: unknown): never => {
    if (!isConnectionFailure(error)) throw error;
    // A purger is made on a connection that answered (both backends wait for it): a call refused
    // because that connection is no longer up says it was lost since. Which of the calls on their
    // way meets it first (one Redis failed, or one sent just after, between two chunks) is chance.
    throw unavailable(
      classifyRedisError(error).kind === 'notConnected'
        ? new Error('Connection is closed.', { cause: error })
        : error,
    );
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
