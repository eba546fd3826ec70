import type { QueueOps } from '../app.js';
import type { Logger } from '../lib/logger.js';
import { createMonitor, type Monitor, newOwnerId } from './monitor.js';
import { createOutbox, type Outbox, type SlackSender } from './outbox.js';

/** The monitor and its outbox for one process, over the runtime's store and backends. */
export interface Escalation {
  monitor: Monitor;
  outbox: Outbox;
  owner: string;
}

export function createEscalation(deps: {
  runtime: Pick<QueueOps, 'config' | 'backends' | 'store' | 'alerts' | 'ctx'>;
  logger: Logger;
  /** Undefined without SLACK_BOT_TOKEN: alerts are tracked and their messages wait. */
  slack?: SlackSender;
  /** `bot` or `cli`, in the lease owner's name. */
  label: string;
}): Escalation {
  const { runtime } = deps;
  const owner = newOwnerId(deps.label);
  const logger = deps.logger.child({ component: 'monitor' });
  const outbox = createOutbox({
    store: runtime.store.escalation,
    ...(deps.slack ? { slack: deps.slack } : {}),
    ...(runtime.config.slack.incidentChannel ? { channel: runtime.config.slack.incidentChannel } : {}),
    settings: runtime.config.escalation,
    owner,
    now: runtime.ctx.now,
    logger,
    locale: runtime.config.locale,
  });
  const monitor = createMonitor({
    config: runtime.config,
    backends: runtime.backends,
    store: runtime.store,
    outbox,
    logger,
    now: runtime.ctx.now,
    owner,
  });
  // An ack or snooze queues an update of the alert's message: send it now, not at the next tick.
  runtime.alerts.onChange(() => {
    void outbox.drain().catch((error: unknown) => logger.warn({ err: error }, 'outbox drain failed'));
  });
  return { monitor, outbox, owner };
}
