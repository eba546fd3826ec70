import type { BackendRegistry } from '../src/backends/registry.js';
import type { Config } from '../src/config/schema.js';
import { createMonitor } from '../src/escalation/monitor.js';
import { createOutbox } from '../src/escalation/outbox.js';
import { createLogger } from '../src/lib/logger.js';
import type { Store } from '../src/store/store.js';

/**
 * The monitor as the bot builds it (its outbox, a silent logger, the wall clock), over `store`
 * and `backends`: what the benches time a tick of.
 */
export function benchMonitor(config: Config, store: Store, backends: BackendRegistry) {
  const logger = createLogger({ level: 'silent' });
  const now = () => new Date();
  const outbox = createOutbox({
    store: store.escalation,
    settings: config.escalation,
    owner: 'bench',
    now,
    logger,
    locale: 'en',
  });
  return createMonitor({ config, backends, store, outbox, logger, now, owner: 'bench' });
}
