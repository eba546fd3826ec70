import { readFileSync } from 'node:fs';
import {
  type Approvals,
  createApprovals,
  type Executor,
  type UnwrittenOutcome,
} from './approvals/service.js';
import { type Audit, createAudit } from './audit/audit.js';
import { loadAuditKeys } from './audit/keys.js';
import { type AuditWitness, createWitnessFile } from './audit/witness.js';
import { createBullmqBackend } from './backends/bullmq/index.js';
import { createCeleryBackend } from './backends/celery/index.js';
import { coalesceStatus } from './backends/coalesce.js';
import type { QueueBackend } from './backends/queue-backend.js';
import { toRedisForbidden, urlSecrets } from './backends/redis-client.js';
import { type ClosableBackendRegistry, createBackendRegistry } from './backends/registry.js';
import { ACTION_COMMANDS, createReadCommands } from './commands/registry.js';
import type { ActionName, Config, SystemConfig } from './config/schema.js';
import { ErrorCode, OpsError } from './errors.js';
import { type AlertService, createAlertService } from './escalation/alerts.js';
import { createPaging, type Paging } from './escalation/paging.js';
import { type ChannelMembershipCheck, createChannelMembership } from './guards/channel-members.js';
import { createAuthority } from './guards/guard.js';
import { createGuardMiddleware, type GuardMiddlewareDeps } from './guards/middleware.js';
import { createRateLimiter } from './guards/rate-limit.js';
import { createRoleResolver } from './guards/roles.js';
import { createOfflineDirectory, type SlackDirectory } from './guards/slack-directory.js';
import { messages } from './i18n/index.js';
import type { Logger } from './lib/logger.js';
import { createLimits, type Limits } from './limits/service.js';
import { createPagers, type Pagers } from './paging/registry.js';
import { createCommandAuditMiddleware, withUnauditedNote } from './pipeline/audit-middleware.js';
import { createDispatcher, type Dispatcher, type Middleware } from './pipeline/dispatcher.js';
import type { ActionDeps, CommandContext, CommandDefinition, CommandRegistry } from './pipeline/types.js';
import { createPurges, type Purges } from './purge/service.js';
import { createScalerRegistry } from './scalers/index.js';
import { loadKubeApis } from './scalers/kubernetes.js';
import { openStore } from './store/open.js';
import type { AuditEntry, Store } from './store/store.js';
import { factsOf } from './verbs.js';

export interface AppDeps {
  /** Parsed and frozen (`loadConfigFile`); an invalid file never gets this far. */
  config: Config;
  /** The process environment, read here and in the entry points only. */
  env: Record<string, string | undefined>;
  logger: Logger;
  /** Middleware (guards, audit) run before every command, outermost first. */
  middleware?: Middleware[];
  /** Clock for everything the app builds; tests may pin it. */
  now?: () => Date;
  /**
   * How a configured system becomes its backend: {@link createBackend} unless given (a test plugs
   * in a system of its own, to prove the commands ask only the contract).
   */
  backendFor?: (system: SystemConfig) => QueueBackend;
  /** Commands beyond the read path (pause, approve, audit…), registered after it. */
  commands?: CommandDefinition[];
  /** The shared services (approvals, audit, roles, alerts, purges, store), handed to every command through its context when present. */
  services?: Pick<CommandContext, 'approvals' | 'audit' | 'roles' | 'alerts' | 'purges' | 'store'>;
}

/** Everything a transport needs, built once. */
export interface App {
  dispatcher: Dispatcher;
  backends: ClosableBackendRegistry;
  commands: CommandRegistry;
  ctx: CommandContext;
  config: Config;
  /** Closes every connection the app opened; safe to call twice. */
  close(): Promise<void>;
}

/** One backend per configured system; the only place that knows which factory fits which type. */
export function createBackend(system: SystemConfig): QueueBackend {
  switch (system.type) {
    case 'bullmq':
      return createBullmqBackend(system);
    case 'celery':
      return createCeleryBackend(system);
  }
}

/** Kubernetes clients from KUBECONFIG or the in-cluster service account; a bad file is an answer. */
async function kubernetesFrom(env: Record<string, string | undefined>) {
  try {
    return await loadKubeApis(env);
  } catch (error) {
    throw new OpsError(ErrorCode.ScaleFailed, {
      target: 'kubernetes',
      reason: messages().scale.failures.kubeconfigUnreadable(String((error as Error)?.message ?? error)),
    });
  }
}

/**
 * The composition root: config → backends → commands → dispatcher. Builds clients but does not
 * connect them: backends connect lazily on first use, so a Redis that is down at start only
 * affects its own system's answers.
 */
export function createApp(deps: AppDeps): App {
  const { config, logger } = deps;
  // Concurrent status reads of one system (commands, scrapes, the monitor) share one round trip.
  const backendFor = deps.backendFor ?? createBackend;
  const backends = createBackendRegistry(config.systems.map((s) => coalesceStatus(backendFor(s))));
  const commands = createReadCommands(deps.commands);
  const scalers = createScalerRegistry({
    config,
    backends,
    kubernetes: () => kubernetesFrom(deps.env),
    compose: { env: deps.env },
  });
  const ctx: CommandContext = {
    config,
    backends,
    scalers,
    now: deps.now ?? (() => new Date()),
    ...deps.services,
  };
  const dispatcher = createDispatcher({ ctx, commands, logger, middleware: deps.middleware });
  logger.debug({ systems: backends.names() }, 'app composed');
  let closing: Promise<void> | undefined;
  return {
    dispatcher,
    backends,
    commands,
    ctx,
    config,
    close() {
      closing ??= backends.close();
      return closing;
    },
  };
}

/**
 * Every credential the process knows of, for the logger's literal scrubbing (URL passwords are
 * also caught by pattern; this covers the same secret showing up outside a URL).
 */
export function collectSecrets(
  config: Config | undefined,
  env: Record<string, string | undefined>,
): string[] {
  const secrets = new Set<string>();
  for (const name of [
    'SLACK_BOT_TOKEN',
    'SLACK_APP_TOKEN',
    'SLACK_SIGNING_SECRET',
    'SLACK_CLIENT_SECRET',
    'QUEUE_OPS_AUDIT_KEY',
    'PAGERDUTY_WEBHOOK_SECRET',
  ]) {
    const value = env[name];
    if (value) secrets.add(value);
  }
  for (const system of config?.systems ?? []) {
    for (const secret of urlSecrets(system.redis)) secrets.add(secret);
    if ('resultBackend' in system && system.resultBackend) {
      for (const secret of urlSecrets(system.resultBackend)) secrets.add(secret);
    }
  }
  // A pager's key pages people: never in a log line.
  for (const pager of config?.paging ?? [])
    secrets.add(pager.type === 'pagerduty' ? pager.routingKey : pager.apiKey);
  if (config?.store.startsWith('postgres'))
    for (const secret of urlSecrets(config.store)) secrets.add(secret);
  return [...secrets];
}

export interface QueueOpsDeps extends Omit<AppDeps, 'middleware'> {
  /** Who is in which user group and who has 2FA: Slack's Web API, or nobody offline (CLI, demo). */
  directory?: SlackDirectory;
  /** Receives each audit entry after it is written (e.g. posts it to `slack.auditChannel`). */
  auditSink?: (entry: AuditEntry) => Promise<void>;
  /**
   * Witnesses beyond `audit.witnessFile`, which is built here: the audit channel read back through
   * Slack's history, when the entry point has a Slack client.
   */
  auditWitnesses?: AuditWitness[];
  /** An already opened store (tests); otherwise `config.store` is opened and migrated. */
  store?: Store;
  /**
   * The caller runs `recoverPurges()` itself (the command line: after a read-only command has
   * answered, before any other). Otherwise it runs here, before anything else can.
   */
  recoverLater?: boolean;
  /**
   * An action's outcome the store refuses (a full disk): `keep` (the bot, the default) writes it
   * again until it lands; `report` (the command line, which ends) answers naming that write.
   */
  unwrittenOutcome?: UnwrittenOutcome;
}

/** The whole product: the read path plus guards, approvals, actions and the audit trail. */
export interface QueueOps extends App {
  store: Store;
  audit: Audit;
  approvals: Approvals;
  /** Open alerts, ack and snooze over the store. */
  alerts: AlertService;
  /** The pagers of `paging:` and what each last answered (`/readyz`). */
  pagers: Pagers;
  /** Pages over the store (the monitor's, `page`'s, PagerDuty's webhook's). */
  paging: Paging;
  /** Purge, undo, crash recovery and archive retention. */
  purges: Purges;
  /** Limits set with `rate-limit` / `concurrency`; the monitor's leader lifts the expired ones. */
  limits: Limits;
  /**
   * Finishes purges and undos whose process died, then removes archives past retention; neither
   * throws. Run by `createQueueOps` itself unless `recoverLater` asked the caller to run it.
   */
  recoverPurges(options?: Parameters<Purges['recover']>[0]): Promise<void>;
  /** Who may answer from the App Home tab what was asked in a channel (the tab lists only those). */
  channelMembership: ChannelMembershipCheck;
}

function createRoles(config: Config, directory: SlackDirectory, now: () => Date, logger: Logger) {
  return createRoleResolver({
    roles: config.roles,
    directory,
    now: () => now().getTime(),
    onLookupError: (groupId, error) =>
      logger.warn({ err: error, groupId }, 'user group lookup failed; it grants nothing'),
  });
}

/**
 * The read path when the bot's own store cannot be opened (the command line in an incident): the
 * same guards, with nowhere to record a denial, and the action verbs answering that they need
 * the store instead of being unknown.
 */
export function createReadOnlyApp(
  deps: Omit<QueueOpsDeps, 'store' | 'auditSink'> & {
    /** Why the store could not be opened: said under every read's answer, which is not audited. */
    storeProblem?: string;
  },
): App {
  const now = deps.now ?? (() => new Date());
  const directory = deps.directory ?? createOfflineDirectory();
  const roles = createRoles(deps.config, directory, now, deps.logger);
  const { storeProblem } = deps;
  const unaudited: Middleware = async (request, next, { command }) => {
    const reply = await next();
    return command.mutating || storeProblem === undefined
      ? reply
      : withUnauditedNote(reply, storeProblem, request.locale);
  };
  return createApp({
    ...deps,
    now,
    middleware: [createGuardMiddleware({ roles, directory, config: deps.config, verbs: factsOf }), unaudited],
    commands: [...ACTION_COMMANDS],
  });
}

/**
 * What runs each approved action: the `action` of the command that asked for it. A read-only Redis
 * user (docs/deploy.md's queue-ops-read) asked to act gets one line that says so.
 */
function actionExecutors(
  commands: readonly CommandDefinition[],
  deps: () => ActionDeps,
): Partial<Record<ActionName, Executor>> {
  const executors: Partial<Record<ActionName, Executor>> = {};
  for (const { action } of commands) {
    if (!action) continue;
    executors[action.name] = async (request, run) => {
      try {
        return await action.execute(request, run, deps());
      } catch (error) {
        throw toRedisForbidden(String(request.params.system), error) ?? error;
      }
    };
  }
  return executors;
}

/**
 * The async composition root: opens and migrates the store, then wires audit → guards →
 * approvals → commands around `createApp`. Guards run first (a denial is recorded by them), then
 * the command audit, then the command.
 */
export async function createQueueOps(deps: QueueOpsDeps): Promise<QueueOps> {
  const { config, logger } = deps;
  const now = deps.now ?? (() => new Date());
  // Before the store: a missing key file is a config problem, and nothing should be opened for it.
  const keys = loadAuditKeys(
    {
      envKey: deps.env.QUEUE_OPS_AUDIT_KEY,
      keyFile: config.audit.keyFile,
      previousKeyFiles: config.audit.previousKeyFiles,
    },
    (path) => readFileSync(path, 'utf8'),
  );
  const witnesses = [
    ...(config.audit.witnessFile ? [createWitnessFile(config.audit.witnessFile)] : []),
    ...(deps.auditWitnesses ?? []),
  ];
  const store = deps.store ?? (await openStore(config.store));
  await store.migrate();
  if (!keys.current) {
    // A process without the key would append unkeyed entries after keyed ones, and verify fails
    // on those for good: refuse to run rather than break the chain (a CLI missing the env key).
    const [newest] = await store.listAudit({ newestFirst: true, limit: 1 });
    if (newest?.keyId) {
      if (!deps.store) await store.close();
      const t = messages().audit.keys;
      throw new OpsError(ErrorCode.ConfigInvalid, {
        source: t.source,
        problems: [t.keyedChainNoKey(newest.keyId, newest.seq)],
      });
    }
  }
  const audit = createAudit({
    store,
    now,
    sink: deps.auditSink,
    logger,
    keys,
    witnesses,
    locale: config.locale,
  });
  const directory = deps.directory ?? createOfflineDirectory();
  const roles = createRoles(config, directory, now, logger);
  let app: App | undefined;
  // App Home answers to requests from private channels: only their members (cached, ≤ 5 min).
  const channelMembership = createChannelMembership({
    directory,
    now: () => now().getTime(),
    onLookupError: (channel, error) =>
      logger.warn({ err: error, channel }, 'channel member lookup failed; the Home tab refuses its requests'),
  });
  const authority = createAuthority({ roles, directory, channelMembership });
  const backendsOfApp = () => {
    if (!app) throw new Error('actions ran before the app was composed');
    return app.backends;
  };
  const purges = createPurges({
    store,
    audit,
    config,
    backends: backendsOfApp,
    logger,
    now,
    locale: config.locale,
    // Bound late: the approvals run the purges, so they are made after them.
    requestChanged: async (request) => await approvals.announce(request),
  });
  const limits = createLimits({ store, audit, backends: backendsOfApp, now, logger });
  const approvals = createApprovals({
    store,
    audit,
    authority,
    config,
    executors: actionExecutors(ACTION_COMMANDS, () => ({
      config,
      backends: backendsOfApp(),
      scalers: app?.ctx.scalers,
      purges,
      limits,
      now,
    })),
    now,
    logger,
    locale: config.locale,
    ...(deps.unwrittenOutcome ? { unwrittenOutcome: deps.unwrittenOutcome } : {}),
  });
  const rateLimit = createRateLimiter({
    store,
    perUserPerMinute: config.rateLimit.perUserPerMinute,
    now: () => now().getTime(),
  });
  // The pagers of `paging:` (none by default).
  const pagers = createPagers(config.paging);
  const paging = createPaging({ store: store.escalation, pagers, now, logger });
  const alerts = createAlertService({ store, now, paging });
  const guards: GuardMiddlewareDeps = { roles, directory, config, verbs: factsOf, audit, rateLimit };
  app = createApp({
    ...deps,
    now,
    middleware: [
      // The one place the guards run, for every transport: Slack, the command line, the console.
      createGuardMiddleware(guards),
      createCommandAuditMiddleware({ audit, logger, cliUsers: config.cli.users }),
    ],
    commands: [...ACTION_COMMANDS],
    services: { approvals, audit, roles: authority, alerts, purges, store },
  });
  const composed = app;
  // A purge whose process was killed is finished before anything else runs (the bot, a command
  // line's action; a read-only command line answers first), and old archives go once a day;
  // neither may stop the app from answering.
  const recoverPurges = async (options?: Parameters<Purges['recover']>[0]) => {
    try {
      await purges.recover(options);
    } catch (error) {
      logger.error({ err: error }, 'purge recovery failed; it is tried again on the next start');
    }
    try {
      await purges.sweepRetention();
    } catch (error) {
      logger.warn({ err: error }, 'archive retention sweep failed; it is tried again on the next run');
    }
  };
  if (!deps.recoverLater) await recoverPurges();
  let closing: Promise<void> | undefined;
  return {
    ...composed,
    store,
    audit,
    approvals,
    alerts,
    pagers,
    paging,
    purges,
    limits,
    recoverPurges,
    channelMembership,
    close() {
      closing ??= (async () => {
        approvals.abortExecutions();
        await composed.close();
        await audit.flush();
        await store.close();
      })();
      return closing;
    },
  };
}
