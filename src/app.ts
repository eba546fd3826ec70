import { createBullmqBackend } from './backends/bullmq/index.js';
import { createCeleryBackend } from './backends/celery/index.js';
import type { QueueBackend } from './backends/queue-backend.js';
import { urlSecrets } from './backends/redis-client.js';
import { type ClosableBackendRegistry, createBackendRegistry } from './backends/registry.js';
import { createDispatcher, type Dispatcher, type Middleware } from './commands/dispatcher.js';
import { type CommandRegistry, createReadCommands } from './commands/registry.js';
import type { CommandContext, CommandDefinition } from './commands/types.js';
import type { Config, SystemConfig } from './config/schema.js';
import type { Logger } from './lib/logger.js';

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
  /** Commands beyond the read path (pause, approve, audit…), registered after it. */
  commands?: CommandDefinition[];
  /** Issue 3's services, handed to every command through its context when present. */
  services?: Pick<CommandContext, 'approvals' | 'audit'>;
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

/**
 * The composition root: config → backends → commands → dispatcher. Builds clients but does not
 * connect them: backends connect lazily on first use, so a Redis that is down at start only
 * affects its own system's answers.
 */
export function createApp(deps: AppDeps): App {
  const { config, logger } = deps;
  const backends = createBackendRegistry(config.systems.map((s) => createBackend(s)));
  const commands = createReadCommands();
  for (const command of deps.commands ?? []) commands.register(command);
  const ctx: CommandContext = { config, backends, now: deps.now ?? (() => new Date()), ...deps.services };
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
  for (const name of ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET', 'SLACK_CLIENT_SECRET']) {
    const value = env[name];
    if (value) secrets.add(value);
  }
  for (const system of config?.systems ?? []) {
    for (const secret of urlSecrets(system.redis)) secrets.add(secret);
    if (system.type === 'celery' && system.resultBackend) {
      for (const secret of urlSecrets(system.resultBackend)) secrets.add(secret);
    }
  }
  if (config?.store.startsWith('postgres'))
    for (const secret of urlSecrets(config.store)) secrets.add(secret);
  return [...secrets];
}
