import type { Approvals } from './approvals/service.js';
import type { Logger } from './lib/logger.js';
import type { Purges } from './purge/service.js';

/** How often pending requests past their ttl are expired and their messages updated. */
export const MAINTENANCE_SWEEP_MS = 30_000;

export interface MaintenanceDeps {
  approvals: Approvals;
  purges: Purges;
  logger: Logger;
  /** First thing on each sweep (the bot: resend request messages Slack did not take). */
  beforeSweep?: () => void;
}

/**
 * The one sweep that keeps the bot's state moving when nobody types: requests past their ttl
 * expire, requests whose process died are reported interrupted (never run again), purges another
 * replica was running when it died are finished, and archives past `archive.retentionDays` go (at
 * most once a day across replicas: the store decides). Concurrent calls share one run; it never
 * throws, and the next tick tries again.
 */
export interface MaintenanceSweep {
  /** One sweep now, or the one already running. */
  run(): Promise<void>;
  /** Resolves when the sweep running now (if any) has finished; starts none. */
  idle(): Promise<void>;
}

export function createMaintenanceSweep(deps: MaintenanceDeps): MaintenanceSweep {
  const { approvals, purges, logger } = deps;
  let sweeping: Promise<void> | undefined;
  const run = () => {
    sweeping ??= (async () => {
      try {
        deps.beforeSweep?.();
        const expired = await approvals.expireDue();
        if (expired.length > 0) logger.info({ requests: expired.map((r) => r.id) }, 'requests expired');
        // Also on every tick, not only at start: another replica may have died mid-action.
        for (const request of await approvals.recoverInterrupted()) {
          logger.warn(
            { requestId: request.id, action: request.action, target: request.target },
            // Only a request whose start was never written certainly did not run: nothing runs
            // before its start (`executing` with `request.executing`) is stored.
            request.startedAt
              ? 'request was executing when its lease ran out (its bot stopped, or could not write the outcome): it may have run; check its target and the audit. Reported as interrupted, not retried'
              : 'request was approved but its start was never written, so it did not run; reported as interrupted',
          );
        }
        await purges.recover();
        await purges.sweepRetention();
      } catch (error) {
        logger.warn({ err: error }, 'expiry sweep failed; it runs again on the next tick');
      } finally {
        sweeping = undefined;
      }
    })();
    return sweeping;
  };
  return { run, idle: async () => await sweeping };
}
