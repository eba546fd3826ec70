import { ErrorCode, OpsError } from '../../src/errors.js';
import type { ActionRequest, Store } from '../../src/store/store.js';

/**
 * The real store, except that chosen writes fail the way the database does when it is busy or
 * gone (SQLITE_BUSY, a PostgreSQL failover): fault injection, everything else is the real thing.
 */
export function withFaults(store: Store) {
  const faults = { failStart: 0, failFinish: 0, renewDown: false, dead: false };
  const busy = () => Promise.reject(new OpsError(ErrorCode.StoreUnavailable, { reason: 'SQLITE_BUSY' }));
  const wrapped = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (faults.dead) return busy();
        // The start and the outcome are written with their audit entries (`…Audited`).
        if (property === 'transitionRequest' || property === 'transitionRequestAudited') {
          const patch = args[2] as Partial<ActionRequest>;
          const status = patch.status;
          if (status === undefined && patch.leaseUntil !== undefined && faults.renewDown) return busy();
          if (status === 'executing' && faults.failStart > 0) {
            faults.failStart -= 1;
            return busy();
          }
          if ((status === 'done' || status === 'failed') && faults.failFinish > 0) {
            faults.failFinish -= 1;
            return busy();
          }
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: wrapped, faults };
}
