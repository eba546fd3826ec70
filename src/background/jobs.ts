import type { LeaderOutcome, TickOutcome } from '../escalation/monitor.js';
import type { Escalation } from '../escalation/runtime.js';
import type { Logger } from '../lib/logger.js';
import { MAINTENANCE_SWEEP_MS, type MaintenanceSweep } from '../maintenance.js';
import type { BackgroundJob } from './scheduler.js';

/** What lifts the limits whose `--for` ran out (`Limits` of src/limits/service.ts). */
interface ExpiringLimits {
  liftExpired(): Promise<unknown>;
}

/** The leader's side of the periodic work: the monitor (and its lease), and the limits it lifts. */
export interface LeaderWork {
  escalation: Escalation;
  limits?: ExpiringLimits;
  /**
   * `false`: alerts have nowhere to go, so no `monitor-tick`; a lease (the monitor's
   * `limitLease`, so a `monitor --once` may still take the monitor's own) still picks the one
   * process that lifts the limits whose `--for` ran out (a limit must end whether or not anyone
   * is alerted), and that job then delivers its notices itself (none with no channel). Every
   * `limit-expiry` run, whatever its leadership, lifts only under `limitLease`: one lifter at a time.
   */
  tick?: boolean;
}

/**
 * The leader's jobs, in the order a leader's step runs them: `limit-expiry` first, so the tick's
 * sample shows the queue as it is once the limit is off, then `monitor-tick`, each once a monitor
 * interval. `afterTick` is what the caller does with the tick's outcome.
 */
function leaderJobs(
  work: LeaderWork,
  logger: Logger,
  afterTick: (outcome: LeaderOutcome) => void,
): BackgroundJob[] {
  const { monitor } = work.escalation;
  const { limits } = work;
  const everyMs = monitor.intervalMs;
  return [
    ...(limits
      ? [
          {
            name: 'limit-expiry',
            everyMs,
            scope: 'leader' as const,
            // A lift that fails (its Redis down) is tried again next tick and never stops the tick.
            run: async () => {
              // Whichever lease made this process the leader, it lifts only while it also holds the
              // limits' own: a bot that lifts without ticking holds that one, a `monitor --once`
              // beside it the monitor's, and both lifting one limit would put a Celery rate back
              // twice (a late one over a newer limit: workers' rates cannot be set conditionally).
              if (!(await monitor.limitLease.claim())) return;
              await limits.liftExpired().catch((error: unknown) => {
                logger.warn({ err: error }, 'lifting expired limits failed; tried again on the next tick');
              });
              // Without a tick, nothing else delivers the notices the lift queued.
              if (work.tick === false) await drainOutbox(work, logger);
            },
          },
        ]
      : []),
    ...(work.tick === false
      ? []
      : [
          {
            name: 'monitor-tick',
            everyMs,
            scope: 'leader' as const,
            run: async () => afterTick(await monitor.leaderTick()),
          },
        ]),
  ];
}

/** Delivers what the outbox holds; Slack being slow or down is logged, never thrown. */
function drainOutbox(work: LeaderWork, logger: Logger): Promise<void> {
  return work.escalation.outbox
    .drain()
    .then(() => undefined)
    .catch((error: unknown) => logger.warn({ err: error }, 'outbox drain failed'));
}

/**
 * A process's periodic work, by name, for its scheduler (src/background/scheduler.ts): on every
 * replica the maintenance `sweep` and the Home tabs' `home-watch` (when given), and the leader's
 * `limit-expiry` and `monitor-tick` (when the monitor runs). The one list: nothing else in the
 * process sets a timer for periodic work.
 */
export function backgroundJobs(work: {
  logger: Logger;
  /** Requests past their ttl, interrupted requests, purge recovery, retention (src/maintenance.ts). */
  sweep?: { maintenance: MaintenanceSweep; everyMs?: number };
  /** The App Home tabs kept fresh here, looking for what other replicas changed (the bot's `HomeTab`). */
  homeWatch?: { everyMs: number; lookForChanges(): Promise<void> };
  leader?: LeaderWork;
}): BackgroundJob[] {
  const logger = work.logger.child({ component: 'monitor' });
  const jobs: BackgroundJob[] = [];
  if (work.sweep)
    jobs.push({
      name: 'sweep',
      everyMs: work.sweep.everyMs ?? MAINTENANCE_SWEEP_MS,
      scope: 'every-replica',
      run: work.sweep.maintenance.run,
    });
  if (work.homeWatch)
    jobs.push({
      name: 'home-watch',
      everyMs: work.homeWatch.everyMs,
      scope: 'every-replica',
      run: work.homeWatch.lookForChanges,
    });
  const leader = work.leader;
  if (leader)
    jobs.push(
      ...leaderJobs(leader, logger, (outcome) => {
        if (outcome.opened.length || outcome.resolved.length) {
          logger.info(
            { opened: outcome.opened.map((a) => a.id), resolved: outcome.resolved.map((a) => a.id) },
            'monitor tick changed alerts',
          );
        }
        // Not awaited: Slack being slow or down never holds the next tick.
        void drainOutbox(leader, logger);
      }),
    );
  return jobs;
}

/**
 * The leader's jobs once, as `monitor --once` runs them: the lease taken (or who holds it, when
 * another process does), then `limit-expiry` and `monitor-tick` in their order. The tick's
 * outcome; its errors are the caller's (a one-shot run reports them). Delivering the outbox is the
 * caller's too.
 */
export async function runLeaderJobsOnce(work: LeaderWork, logger: Logger): Promise<TickOutcome> {
  const { monitor } = work.escalation;
  if (!(await monitor.lease.claim())) return await monitor.follower();
  let outcome: LeaderOutcome | undefined;
  const jobs = leaderJobs(work, logger.child({ component: 'monitor' }), (tick) => {
    outcome = tick;
  });
  for (const job of jobs) await job.run();
  return outcome as LeaderOutcome;
}
