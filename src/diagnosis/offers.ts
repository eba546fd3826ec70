import type { QueueBackend } from '../backends/queue-backend.js';
import type { FixOffers } from './types.js';

/** What a system's fixes can be, from its backend's abilities and facts (none without a backend). */
export function fixOffersOf(backend: QueueBackend | undefined): FixOffers {
  if (!backend) return { stopStuck: null, limitTarget: 'none', expireResults: false };
  return {
    stopStuck: backend.revoke ? 'revoke' : backend.failJob ? 'fail' : null,
    limitTarget: backend.facts.limitTarget,
    expireResults: backend.expireResults !== undefined,
  };
}
