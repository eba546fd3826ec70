import type { BackendRegistry } from '../../src/backends/registry.js';
import type { Config } from '../../src/config/schema.js';
import { createMonitor } from '../../src/escalation/monitor.js';
import { createOutbox } from '../../src/escalation/outbox.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Store } from '../../src/store/store.js';

/**
 * The monitor and its outbox as the bot builds them (without Slack or alert jobs), over `store`
 * and `backends`, with a silent logger and the wall clock (or `now`): what the benches time a tick of and
 * the rate tests tick.
 */
export function plainMonitor(
  config: Config,
  store: Store,
  backends: BackendRegistry,
  owner = 'bench',
  now: () => Date = () => new Date(),
) {
  const logger = createLogger({ level: 'silent' });
  const outbox = createOutbox({
    store: store.escalation,
    settings: config.escalation,
    owner,
    now,
    logger,
    locale: 'en',
  });
  return createMonitor({ config, backends, store, outbox, logger, now, owner });
}
