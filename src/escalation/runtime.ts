import type { BackendRegistry } from '../backends/registry.js';
import type { Config } from '../config/schema.js';
import { messages } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import type { Pagers } from '../paging/registry.js';
import type { Store } from '../store/store.js';
import { type AlertJobs, alertJobKind, readAlertJobs } from './alert-jobs.js';
import { type AlertService, trendSource } from './alerts.js';
import { alertOwnerLookup } from './blocks.js';
import { createMonitor, type Monitor, newOwnerId } from './monitor.js';
import { createOutbox, type Outbox } from './outbox.js';
import type { SlackSender } from './outbox-contract.js';
import type { Paging } from './paging.js';
import { trendFile } from './render-chart.js';
import { loadTrend, TREND_WINDOWS, type TrendWindow } from './trend.js';

/** The shortest `trend` window that shows the alert's start with some time before it. */
export function alertWindow(openedAt: number, now: number): TrendWindow {
  const needed = now - openedAt + 10 * 60_000;
  const fits = (Object.keys(TREND_WINDOWS) as TrendWindow[]).find((w) => TREND_WINDOWS[w] >= needed);
  return fits ?? '24h';
}

/** How long the jobs read for an alert's message serve its other renders. */
const JOBS_FRESH_MS = 5000;

/** The monitor and its outbox for one process, over the runtime's store and backends. */
export interface Escalation {
  monitor: Monitor;
  outbox: Outbox;
  owner: string;
}

/** What the monitor runs over: the composition root's config, backends, store and alert service. */
export interface EscalationRuntime {
  config: Config;
  backends: BackendRegistry;
  store: Store;
  alerts: AlertService;
  ctx: { now: () => Date };
  /** The pagers of `paging:` and the pages over the store. */
  pagers?: Pagers;
  paging?: Paging;
}

export function createEscalation(deps: {
  runtime: EscalationRuntime;
  logger: Logger;
  /** Undefined without SLACK_BOT_TOKEN: alerts are tracked and their messages wait. */
  slack?: SlackSender;
  /** `bot` or `cli`, in the lease owner's name. */
  label: string;
}): Escalation {
  const { runtime } = deps;
  const owner = newOwnerId(deps.label);
  const logger = deps.logger.child({ component: 'monitor' });
  const alertChannels = new Map(
    runtime.config.systems.flatMap((s) =>
      s.slack?.alertChannel ? [[s.name, s.slack.alertChannel] as const] : [],
    ),
  );
  // A group's alerts change in one tick and each change renders the group again: the jobs of one
  // alert are read once for all of them.
  const jobsRead = new Map<string, { at: number; jobs: Promise<AlertJobs | undefined> }>();
  const readJobs = (alert: Parameters<typeof readAlertJobs>[1] & { id: string; system: string }) => {
    const backend = runtime.backends.get(alert.system);
    if (!backend) return Promise.resolve(undefined);
    const now = Date.now();
    const key = `${alert.id}|${alertJobKind(alert.metric)}`;
    const cached = jobsRead.get(key);
    if (cached && now - cached.at < JOBS_FRESH_MS) return cached.jobs;
    const jobs = readAlertJobs(backend, alert);
    jobsRead.set(key, { at: now, jobs });
    for (const [k, v] of jobsRead) if (now - v.at >= JOBS_FRESH_MS) jobsRead.delete(k);
    return jobs;
  };
  const outbox = createOutbox({
    store: runtime.store.escalation,
    ...(deps.slack ? { slack: deps.slack } : {}),
    ...(runtime.config.slack.incidentChannel ? { channel: runtime.config.slack.incidentChannel } : {}),
    channelFor: (system) => alertChannels.get(system),
    hasSystemChannels: alertChannels.size > 0,
    settings: runtime.config.escalation,
    owner,
    ownerOf: alertOwnerLookup(runtime.config),
    now: runtime.ctx.now,
    logger,
    locale: runtime.config.locale,
    jobs: readJobs,
    ...(runtime.pagers ? { pagers: runtime.pagers } : {}),
    async chart(alert) {
      if (alert.queue === undefined) return undefined;
      const now = runtime.ctx.now().getTime();
      const data = await loadTrend(
        trendSource(runtime.store.escalation),
        runtime.config.escalation.rules,
        { system: alert.system, queue: alert.queue, window: alertWindow(Date.parse(alert.openedAt), now) },
        now,
      );
      if (data.points.length === 0) return undefined;
      const file = await trendFile(data, runtime.config.locale);
      return {
        ...file,
        title: messages(runtime.config.locale).trend.alertChartTitle(`${alert.system}/${alert.queue}`),
      };
    },
  });
  const monitor = createMonitor({
    config: runtime.config,
    backends: runtime.backends,
    store: runtime.store,
    outbox,
    logger,
    now: runtime.ctx.now,
    owner,
    channelFor: (system) => alertChannels.get(system) ?? runtime.config.slack.incidentChannel,
    ...(runtime.paging ? { paging: runtime.paging } : {}),
  });
  // An ack or snooze queues an update of the alert's message: send it now, not at the next tick.
  runtime.alerts.onChange(() => {
    void outbox.drain().catch((error: unknown) => logger.warn({ err: error }, 'outbox drain failed'));
  });
  return { monitor, outbox, owner };
}
