import { type Receiver, webApi } from '@slack/bolt';
import { collectSecrets, createQueueOps, type QueueOps } from '../../app.js';
import { backgroundJobs } from '../../background/jobs.js';
import { createJobScheduler } from '../../background/scheduler.js';
import { loadConfigFile } from '../../config/load.js';
import { peekConfigFileLocale } from '../../config/locale-peek.js';
import type { Config } from '../../config/schema.js';
import { isOpsError } from '../../errors.js';
import type { SlackSender } from '../../escalation/outbox-contract.js';
import { createEscalation, type Escalation } from '../../escalation/runtime.js';
import { readSightings } from '../../escalation/sightings.js';
import { createSlackDirectory } from '../../guards/slack-directory.js';
import { inLocale, isLocale, messages } from '../../i18n/index.js';
import { createIdleCollector } from '../../lib/idle-collector.js';
import { createLogger, type Logger, parseLogLevel, scrubSecrets } from '../../lib/logger.js';
import { createMaintenanceSweep } from '../../maintenance.js';
import { createMetrics, type Metrics } from '../../metrics/metrics.js';
import { pagerDutyWebhookRoute } from '../../transports/http/pagerduty.js';
import { operationalRoutes } from '../../transports/http/routes.js';
import { createAlertWebClient, createSlackSender } from './alerts.js';
import { type AuditChannelSink, createAuditChannelSink } from './audit-channel.js';
import { createAuditChannelWitness } from './audit-witness.js';
import {
  boltLogger,
  createSlackApp,
  hasSlackTransport,
  type SlackApp,
  SlackEnvError,
  slackSettingsFromEnv,
} from './create-app.js';
import { createSlackHealth, type SlackHealth, shownUrl } from './health.js';
import { createHomeTab, type HomeTab, registerHomeTab } from './home.js';
import { registerSlackListeners } from './listeners.js';
import { createSeenSignatures } from './replay.js';
import { createRequestDelivery, createRequestMessageUpdater } from './requests.js';
import type { RespondPolicy } from './respond.js';
import { serveWhileWaiting, untilSlackAnswers } from './slack-wait.js';
import { checkAppToken, checkBotToken, SlackTokenError } from './tokens.js';
import { createUserLocales } from './user-locale.js';
import { createWebApiClient, type SlackClientBase, slackClientSettings } from './web-client.js';

type Env = Record<string, string | undefined>;

/** Where the entry point writes its few human lines (start-up problems); logs go to the logger. */
export interface MainIo {
  stderr: (line: string) => void;
  stdout: (line: string) => void;
}

/** A running bot; `stop()` is what SIGTERM/SIGINT call. */
export interface RunningBot {
  slack: SlackApp;
  port?: number;
  /** The store, audit, approvals and dispatcher the bot runs on. */
  runtime: QueueOps;
  /** The monitor and its outbox; running when `slack.incidentChannel` is set. */
  escalation: Escalation;
  /** The App Home tab (published on `app_home_opened`, refreshed on changes). */
  home: HomeTab;
  /** What Slack last answered the bot's Web API calls (what `/readyz` reports). */
  slackHealth: SlackHealth;
  /** Runs one maintenance sweep now (its background job, `sweep`, runs it every `sweepIntervalMs`). */
  sweep(): Promise<void>;
  /** Resolves when every queued update of a request message, and every audit-channel post, has been tried. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** Seams for tests: everything else comes from the environment and the config file. */
export interface BotOptions {
  /** A receiver that binds nothing; tests hand events to `slack.app.processEvent`. */
  receiverOverride?: Receiver;
  /** The Home tab's per-user refresh interval (default 10 s). */
  homeMinIntervalMs?: number;
  /** The bot's ids, so Bolt skips `auth.test`. */
  authorization?: { botId: string; botUserId: string };
  /** Web API client options for every client the bot builds; `SLACK_API_URL` still wins. */
  clientOptions?: webApi.WebClientOptions;
  /** The clock of the whole runtime (ttl, expiry). */
  now?: () => Date;
  sweepIntervalMs?: number;
  /** Where logs go (tests read them); otherwise stdout at `LOG_LEVEL`. */
  logger?: Logger;
  /** Pause between audit-channel posts (default 1000 ms, Slack's pace for one channel). */
  auditChannelIntervalMs?: number;
  /** e.g. `{ processMetrics: false }` in tests that start many bots in one process. */
  metricsOptions?: { processMetrics?: boolean };
  /** Timeout and retries of answers through `response_url` (tests shorten them). */
  respondPolicy?: Partial<RespondPolicy>;
}

/** A cheap read of the bot's own store, for `/readyz`. */
async function pingStore(runtime: QueueOps): Promise<void> {
  if (runtime.store.auditHead) await runtime.store.auditHead();
  else await runtime.store.listAudit({ limit: 1 });
}

/** How long `stop()` waits for the audit channel to catch up; the rest is in the store anyway. */
const AUDIT_POST_DRAIN_MS = 5_000;

/**
 * `main` with seams: opens the store (the bot does not run without it), reports requests that
 * were executing when it last stopped as interrupted, wires approvals and the audit channel to
 * Slack, starts the listeners and the expiry sweep.
 */
export async function startBot(env: Env, io: MainIo, options: BotOptions = {}): Promise<number | RunningBot> {
  const t = messages().slack;
  if (!hasSlackTransport(env)) {
    io.stderr(t.noTransport);
    return 2;
  }
  let settings: ReturnType<typeof slackSettingsFromEnv>;
  try {
    settings = slackSettingsFromEnv(env);
  } catch (error) {
    if (error instanceof SlackEnvError) {
      // It may quote SLACK_API_URL, which can carry a proxy's credentials.
      io.stderr(scrubSecrets(error.message));
      return 1;
    }
    throw error;
  }

  const configPath = env.QUEUE_OPS_CONFIG || './queue-ops.yml';
  let config: Config;
  try {
    config = loadConfigFile(configPath, env);
  } catch (error) {
    if (isOpsError(error)) {
      // In the locale the config asks for, even when the rest of it is wrong.
      const asked = isLocale(error.params.locale)
        ? error.params.locale
        : (peekConfigFileLocale(configPath, env) ?? 'en');
      io.stderr(messages(asked).slack.configInvalid);
      io.stderr(messages(asked).errors.describe(error));
      return 1;
    }
    throw error;
  }
  // The bot says everything in the config's locale from here on: start-up lines, logs meant for
  // people, and what timers and listeners started below say (a request's own locale wins there).
  return await inLocale(config.locale, () => startWithConfig(env, io, options, settings, config));
}

type SlackSettings = ReturnType<typeof slackSettingsFromEnv>;

/** What every step of the start-up shares: the environment, the seams, the logger and the clock. */
interface StartContext {
  env: Env;
  io: MainIo;
  options: BotOptions;
  settings: SlackSettings;
  config: Config;
  secrets: string[];
  logger: Logger;
  now: () => Date;
  slackHealth: SlackHealth;
  /** What every Web API client below is built on (its fetch records `/readyz`'s last Slack call). */
  clientBase: SlackClientBase;
  /** The bot's own Web API client. */
  web: ReturnType<typeof createWebApiClient>;
}

async function startWithConfig(
  env: Env,
  io: MainIo,
  options: BotOptions,
  settings: SlackSettings,
  config: Config,
): Promise<number | RunningBot> {
  // Slack tokens and every Redis/Postgres password in the config, scrubbed from every log line.
  const secrets = collectSecrets(config, env);
  const logger = options.logger ?? createLogger({ level: parseLogLevel(env.LOG_LEVEL, 'info'), secrets });
  // Every client below fetches through it: `/readyz` says what Slack last answered.
  const slackHealth = createSlackHealth();
  const clientBase: SlackClientBase = {
    logger,
    fetch: slackHealth.fetch(options.clientOptions?.fetch),
    ...(options.clientOptions ? { overrides: options.clientOptions } : {}),
  };
  const start: StartContext = {
    env,
    io,
    options,
    settings,
    config,
    secrets,
    logger,
    now: options.now ?? (() => new Date()),
    slackHealth,
    clientBase,
    web: createWebApiClient(settings.botToken, clientBase, settings),
  };

  const authorization = await checkTokens(start);
  if (typeof authorization === 'number') return authorization;
  const opened = await openRuntime(start);
  if (typeof opened === 'number') return opened;
  const { runtime, auditPoster } = opened;

  const updater = createRequestMessageUpdater({
    client: start.web,
    logger,
    locale: config.locale,
    now: start.now,
  });
  runtime.approvals.onChange(updater.listener);
  // A purge whose process was killed is finished before anything else runs, as createQueueOps
  // would have, with its request's message updated.
  await runtime.recoverPurges();
  const liveMetrics = observeMetrics(start, runtime);
  opened.metrics.live = liveMetrics.metrics;
  runtime.approvals.onProgress(updater.progress);

  const started = await startSlack(start, runtime, liveMetrics.metrics, authorization.ids, async () => {
    await updater.idle();
    await runtime.close();
  });
  if (typeof started === 'number') return started;
  const { slack, home, port } = started;
  const t = messages().slack;
  logger.info(
    { mode: slack.settings.mode, port },
    t.started(slack.settings.mode, port ?? slack.settings.port),
  );

  const background = await startBackground(start, runtime, home, updater);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await background.jobs.stop();
      liveMetrics.idleCollector.stop();
      home.stop();
      await background.escalation.monitor.stop();
      try {
        await slack.stop();
      } catch (error) {
        logger.warn({ err: error }, 'Slack app did not stop cleanly');
      }
      await background.maintenance.idle();
      await updater.idle();
      await home.idle();
      await runtime.close();
      if (auditPoster) await drainAuditPosts(auditPoster);
    })();
    return stopping;
  };
  return {
    slack,
    home,
    slackHealth,
    ...(port === undefined ? {} : { port }),
    runtime,
    escalation: background.escalation,
    sweep: background.maintenance.run,
    idle: async () => {
      await updater.idle();
      await runtime.audit.flush();
      await auditPoster?.idle();
    },
    stop,
  };
}

/** Waits for the audit channel's posts, for at most `AUDIT_POST_DRAIN_MS`. */
async function drainAuditPosts(auditPoster: { idle(): Promise<void> }): Promise<void> {
  let drain: NodeJS.Timeout | undefined;
  await Promise.race([
    auditPoster.idle(),
    new Promise((resolve) => {
      drain = setTimeout(resolve, AUDIT_POST_DRAIN_MS);
    }),
  ]);
  clearTimeout(drain);
}

/**
 * The tokens, before the store opens or Bolt listens: a token Slack refuses is one line and
 * exit 1 (Bolt's own auth.test was an unhandled rejection after "listening"). A Slack that does
 * not answer is waited for (health.ts' probes meanwhile; see slack-wait.ts). The bot's ids, or the
 * exit code.
 */
async function checkTokens(
  start: StartContext,
): Promise<number | { ids: { botId: string; botUserId: string } | undefined }> {
  const { options, settings, clientBase, slackHealth, logger } = start;
  let authorization = options.authorization;
  let waitingServer: Awaited<ReturnType<typeof serveWhileWaiting>> | undefined;
  try {
    const once = { ...clientBase, overrides: { ...clientBase.overrides, retryConfig: { retries: 0 } } };
    const apiBase = settings.apiUrl ?? 'https://slack.com/api/';
    const wait = (method: string) => ({
      method,
      url: shownUrl(`${apiBase}${method}`),
      lastCall: () => slackHealth.last(),
      logger,
      waiting: async () => {
        if (options.receiverOverride) return;
        waitingServer ??= await serveWhileWaiting(settings.port, () => {
          const last = slackHealth.last();
          return {
            ready: false,
            store: 'not opened',
            slack: 'disconnected',
            slackCall: {
              method,
              url: last?.url ?? shownUrl(`${apiBase}${method}`),
              error: (last && !last.ok ? last.error : undefined) ?? 'unreachable',
            },
            systems: {},
          };
        });
      },
    });
    if (!authorization) {
      const client = createWebApiClient(settings.botToken, once, settings);
      let found: { botId: string; botUserId: string } | undefined;
      await untilSlackAnswers({
        ...wait('auth.test'),
        check: async () => {
          found = await checkBotToken(client);
        },
      });
      authorization = found;
    }
    if (settings.mode === 'socket' && !options.receiverOverride && settings.appToken) {
      const client = createWebApiClient(settings.appToken, once, settings);
      await untilSlackAnswers({ ...wait('apps.connections.open'), check: () => checkAppToken(client) });
    }
  } catch (error) {
    await waitingServer?.close();
    if (!(error instanceof SlackTokenError)) throw error;
    const t = messages().slack;
    start.io.stderr(
      scrubSecrets(
        error.slackError === undefined
          ? t.tokenUnchecked(error.variable, error.reason)
          : t.tokenRefused(error.variable, error.slackError),
        start.secrets,
      ),
    );
    return 1;
  }
  // Bolt takes the port from here on.
  await waitingServer?.close();
  return { ids: authorization };
}

/**
 * The store, audit, approvals and dispatcher (`createQueueOps`), their audit entries counted by
 * the metrics (`metrics.live`, set once the backends exist; entries written before that, none in
 * practice, go uncounted) and posted to the audit channel; or the exit code.
 */
async function openRuntime(
  start: StartContext,
): Promise<number | { runtime: QueueOps; auditPoster?: AuditChannelSink; metrics: { live?: Metrics } }> {
  const { config, options, logger, web } = start;
  const auditChannel = config.slack.auditChannel;
  const auditPoster = auditChannel
    ? createAuditChannelSink({
        client: web,
        channel: auditChannel,
        logger,
        locale: config.locale,
        ...(options.auditChannelIntervalMs === undefined
          ? {}
          : { minIntervalMs: options.auditChannelIntervalMs }),
      })
    : undefined;
  const metrics: { live?: Metrics } = {};
  let runtime: QueueOps;
  try {
    runtime = await createQueueOps({
      config,
      env: start.env,
      logger,
      now: start.now,
      directory: createSlackDirectory(web),
      // Run below, once the request messages' updater listens: a request recovery settles gets
      // its message redrawn.
      recoverLater: true,
      auditSink: async (entry) => {
        metrics.live?.observeAudit(entry);
        await auditPoster?.sink(entry);
      },
      ...(auditChannel
        ? {
            auditWitnesses: [
              createAuditChannelWitness({
                client: web,
                channel: auditChannel,
                ...(options.authorization ? { botId: options.authorization.botId } : {}),
              }),
            ],
          }
        : {}),
    });
  } catch (error) {
    const reason = isOpsError(error)
      ? messages().errors.describe(error)
      : error instanceof Error
        ? error.message
        : String(error);
    start.io.stderr(
      scrubSecrets(
        messages()
          .slack.storeFailed(reason)
          .replace(/\s*\n\s*/g, ' '),
        start.secrets,
      ),
    );
    logger.error({ err: error }, 'store did not open');
    return 1;
  }
  // Once per start: without a key, anyone who can write to the database can rewrite the chain.
  if (!runtime.audit.keyId) logger.warn(messages().audit.unkeyedAtStart);
  return { runtime, ...(auditPoster ? { auditPoster } : {}), metrics };
}

/** The Prometheus metrics over the runtime, each command timed, and a collection when the bot goes quiet. */
function observeMetrics(start: StartContext, runtime: QueueOps) {
  const metrics = createMetrics({
    backends: runtime.backends,
    cacheSeconds: start.config.metrics.cacheSeconds,
    openAlerts: async () => {
      const bySeverity: Record<string, number> = {};
      for (const alert of await runtime.store.escalation.listAlerts({ status: 'firing' })) {
        bySeverity[alert.severity] = (bySeverity[alert.severity] ?? 0) + 1;
      }
      return bySeverity;
    },
    outboxDepth: () => runtime.store.escalation.pendingOutbox(),
    sightings: (systems) => readSightings(runtime.store.escalation, systems),
    ...start.options.metricsOptions,
  });
  // After a burst of commands, one collection when the bot goes quiet (see lib/idle-collector.ts).
  const idleCollector = createIdleCollector();
  runtime.dispatcher.use(async (_request, next, { command }) => {
    const started = performance.now();
    idleCollector.began();
    try {
      return await next();
    } finally {
      metrics.observeCommand(command.verb, (performance.now() - started) / 1000);
      idleCollector.ended();
    }
  });
  return { metrics, idleCollector };
}

/**
 * Bolt with its routes (`/readyz`, `/metrics`, PagerDuty's webhook), the Home tab and the
 * listeners, started; or, after `closeRuntime`, the exit code.
 */
async function startSlack(
  start: StartContext,
  runtime: QueueOps,
  metrics: Metrics,
  authorization: { botId: string; botUserId: string } | undefined,
  closeRuntime: () => Promise<void>,
): Promise<number | { slack: SlackApp; home: HomeTab; port: number | undefined }> {
  const { env, options, logger, web, slackHealth } = start;
  let slack: SlackApp | undefined;
  try {
    slack = createSlackApp({
      env,
      logger,
      routes: [
        ...operationalRoutes({
          metrics,
          pingStore: () => pingStore(runtime),
          slackConnected: () => slack?.connected() ?? false,
          slackCall: () => slackHealth.last(),
          // While Slack's last answer was a failure, each probe asks again (one at a time).
          recheckSlack: () => slackHealth.recheck(() => web.auth.test()),
          pagers: () => runtime.paging.health(),
        }),
        // PagerDuty's acknowledgements and resolutions, on the same server as `/readyz`.
        pagerDutyWebhookRoute({
          secret: env.PAGERDUTY_WEBHOOK_SECRET,
          alerts: runtime.alerts,
          audit: runtime.audit,
          logger,
        }),
      ],
      ...(options.receiverOverride ? { receiverOverride: options.receiverOverride } : {}),
      // Checked above: Bolt does not call auth.test again.
      ...(authorization ? { authorization } : {}),
      // Bolt's own client (approval request posts, reply files, the Home tab): its retries
      // (Bolt's default policy unless a test sets one) are logged like the other client's.
      clientOptions: slackClientSettings(
        start.clientBase,
        webApi.retryPolicies.tenRetriesInAboutThirtyMinutes,
      ),
      // Shared through the store, so a request replayed to another replica is refused too.
      seenSignatures: createSeenSignatures({ store: runtime.store, logger }),
    });
    const home = listenOnSlack(start, runtime, slack);
    const { port } = await slack.start();
    return { slack, home, port };
  } catch (error) {
    await closeRuntime();
    start.io.stderr(
      scrubSecrets(
        messages().slack.startFailed(error instanceof Error ? error.message : String(error)),
        start.secrets,
      ),
    );
    logger.error({ err: error }, 'Slack app did not start');
    return 1;
  }
}

/** The Home tab and the listeners of Bolt's app; the Home tab, refreshed on every change. */
function listenOnSlack(start: StartContext, runtime: QueueOps, slack: SlackApp): HomeTab {
  const { config, options, logger } = start;
  const locale = config.locale;
  const localeDirectory = createSlackDirectory(start.web, { timeoutMs: 1500 });
  // A user's own Slack locale (tr-TR, en-*) overrides the config's; cached for an hour.
  const userLocale = createUserLocales({
    lookup: async (userId) => localeDirectory.userLocale?.(userId),
  });
  const home = createHomeTab({
    client: slack.app.client,
    config,
    backends: runtime.backends,
    approvals: runtime.approvals,
    alerts: runtime.alerts,
    store: runtime.store,
    roles: runtime.ctx.roles ?? { has: async () => false },
    channelMembership: runtime.channelMembership,
    logger,
    locale,
    userLocale,
    now: start.now,
    ...(options.homeMinIntervalMs === undefined ? {} : { minIntervalMs: options.homeMinIntervalMs }),
  });
  registerHomeTab(slack.app, home);
  runtime.approvals.onChange(async () => home.changed());
  runtime.alerts.onChange(() => home.changed());
  registerSlackListeners(slack.app, {
    dispatcher: runtime.dispatcher,
    logger,
    locale,
    userLocale,
    homeNotice: (userId, text) => home.notice(userId, text),
    ...(options.respondPolicy ? { respondPolicy: options.respondPolicy } : {}),
    deliver: createRequestDelivery({
      approvals: runtime.approvals,
      logger,
      locale,
      // No retries of its own: a post whose answer was lost is looked for before it is sent again.
      poster: alertWebClient(start),
    }),
  });
  return home;
}

/** A Web API client for alert and request posts: no retries of its own (see alerts.ts). */
function alertWebClient(start: StartContext) {
  return createAlertWebClient(start.settings.botToken, {
    ...(start.settings.apiUrl ? { apiUrl: start.settings.apiUrl } : {}),
    logger: boltLogger(start.logger),
    fetch: start.clientBase.fetch,
  });
}

/**
 * The bot's periodic work, started (src/background/): on every replica the maintenance `sweep`
 * and the Home tabs' `home-watch`, each run once before this resolves (requests whose ttl ran
 * out, or whose bot died mid-action, while the bot was down are closed at once, not 30 s later),
 * and the leader's `limit-expiry` always and `monitor-tick` when alerts have somewhere to go.
 * Every replica claims the monitor's lease; exactly one holds it and runs the leader's jobs (see
 * escalation/monitor.ts).
 */
async function startBackground(
  start: StartContext,
  runtime: QueueOps,
  home: HomeTab,
  updater: { resendFailed(): void },
) {
  const { config, logger, options } = start;
  const maintenance = createMaintenanceSweep({
    approvals: runtime.approvals,
    purges: runtime.purges,
    logger,
    // Request messages Slack did not take during an outage are brought up to date now.
    beforeSweep: () => updater.resendFailed(),
  });
  const escalation = createEscalation({
    runtime,
    logger,
    label: 'bot',
    slack: refreshingHome(createSlackSender(alertWebClient(start), logger, config.locale), () =>
      home.changed(),
    ),
  });
  // Alerts go to the incident channel, or to a system's own (`systems[].slack.alertChannel`).
  const monitorRuns = Boolean(
    config.slack.incidentChannel || config.systems.some((s) => s.slack?.alertChannel),
  );
  if (!monitorRuns)
    logger.info(
      'slack.incidentChannel is not set: the monitor does not run (expired limits are still lifted)',
    );
  const jobs = createJobScheduler({
    jobs: backgroundJobs({
      logger,
      sweep: {
        maintenance,
        ...(options.sweepIntervalMs === undefined ? {} : { everyMs: options.sweepIntervalMs }),
      },
      // Another replica's changes (an alert from the monitor's lease holder, an approval taken
      // there) reach the tabs kept fresh here within one monitor interval.
      homeWatch: { everyMs: config.escalation.intervalSeconds * 1000, lookForChanges: home.lookForChanges },
      // The lease picks the one replica that lifts run-out `--for` limits even when no alert
      // can be posted; only the monitor's tick needs somewhere to post.
      leader: { escalation, limits: runtime.limits, tick: monitorRuns },
    }),
    // Without the tick, the limits' own lease: `monitor --once` from cron can still take the monitor's.
    leadership: monitorRuns ? escalation.monitor.lease : escalation.monitor.limitLease,
    logger,
    now: () => start.now().getTime(),
  });
  await jobs.start();
  return { maintenance, escalation, jobs };
}

/**
 * An alert's post or update reaching Slack means it fired, changed or resolved (on whichever
 * replica holds the monitor's lease): the Home tabs kept fresh here are refreshed (throttled).
 * Every other method of the sender (the chart upload into an alert's thread, the look for an
 * alert's earlier post, and any added later) passes straight through, bound to the sender: they
 * change nothing a Home tab shows, and listing them by hand dropped one more than once (without
 * findAlertPost every lost answer was posted a second time).
 */
export function refreshingHome(sender: SlackSender, changed: () => void): SlackSender {
  return {
    ...boundMethods(sender),
    async post(channel, message, threadTs, alertId) {
      const sent = await sender.post(channel, message, threadTs, alertId);
      changed();
      return sent;
    },
    async update(channel, ts, message) {
      await sender.update(channel, ts, message);
      changed();
    },
  };
}

/**
 * Every method of `target`, its own and its prototypes' (a class instance's methods are on its
 * prototype, where an object spread does not look), bound to it.
 */
function boundMethods<T extends object>(target: T): Partial<T> {
  const bound: Record<PropertyKey, unknown> = {};
  for (
    let from: object | null = target;
    from && from !== Object.prototype;
    from = Object.getPrototypeOf(from)
  ) {
    for (const key of Reflect.ownKeys(from)) {
      if (key === 'constructor' || key in bound) continue;
      const value = (target as Record<PropertyKey, unknown>)[key];
      if (typeof value === 'function') bound[key] = value.bind(target);
    }
  }
  return bound as Partial<T>;
}
