import type { OpsError } from '../errors.js';
import type { QueuePurger } from './queue-backend.js';
import { isConnectionFailure } from './redis-errors.js';

export { isConnectionFailure } from './redis-errors.js';

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
