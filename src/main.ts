import { pathToFileURL } from 'node:url';
import { collectSecrets, createApp } from './app.js';
import { loadConfigFile } from './config/load.js';
import type { Config } from './config/schema.js';
import { isOpsError } from './errors.js';
import { messages } from './i18n/index.js';
import { createLogger, scrubSecrets } from './lib/logger.js';
import {
  createSlackApp,
  hasSlackTransport,
  type SlackApp,
  SlackEnvError,
  slackSettingsFromEnv,
} from './transports/slack/create-app.js';
import { registerSlackListeners } from './transports/slack/listeners.js';

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
  stop(): Promise<void>;
}

/**
 * `npm start`. Checks the environment and the config before connecting to anything, then builds
 * the services and starts Slack. Resolves with an exit code when it cannot start (2: no Slack
 * transport configured, 1: anything else), or with the running bot.
 */
export async function main(env: Env, io: MainIo): Promise<number | RunningBot> {
  const t = messages().slack;
  if (!hasSlackTransport(env)) {
    io.stderr(t.noTransport);
    return 2;
  }
  try {
    slackSettingsFromEnv(env);
  } catch (error) {
    if (error instanceof SlackEnvError) {
      io.stderr(error.message);
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
      io.stderr(t.configInvalid);
      io.stderr(messages().errors.describe(error));
      return 1;
    }
    throw error;
  }

  // Slack tokens and every Redis/Postgres password in the config, scrubbed from every log line.
  const secrets = collectSecrets(config, env);
  const logger = createLogger({ level: logLevel(env.LOG_LEVEL), secrets });

  const services = await createApp({ config, env, logger });
  let slack: SlackApp;
  let port: number | undefined;
  try {
    slack = createSlackApp({ env, logger });
    registerSlackListeners(slack.app, { dispatcher: services.dispatcher, logger, locale: config.locale });
    ({ port } = await slack.start());
  } catch (error) {
    await services.close();
    io.stderr(scrubSecrets(t.startFailed(error instanceof Error ? error.message : String(error)), secrets));
    logger.error({ err: error }, 'Slack app did not start');
    return 1;
  }
  logger.info(
    { mode: slack.settings.mode, port },
    t.started(slack.settings.mode, port ?? slack.settings.port),
  );

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      try {
        await slack.stop();
      } catch (error) {
        logger.warn({ err: error }, 'Slack app did not stop cleanly');
      }
      await services.close();
    })();
    return stopping;
  };
  return { slack, ...(port === undefined ? {} : { port }), stop };
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
function logLevel(value: string | undefined): (typeof LEVELS)[number] {
  return LEVELS.find((l) => l === value) ?? 'info';
}

const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isEntry) {
  const io: MainIo = {
    stderr: (line) => process.stderr.write(`${line}\n`),
    stdout: (line) => process.stdout.write(`${line}\n`),
  };
  main(process.env, io).then(
    (result) => {
      if (typeof result === 'number') {
        process.exitCode = result;
        return;
      }
      const onSignal = (signal: NodeJS.Signals) => {
        result.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
        // A second signal means "now".
        process.once(signal, () => process.exit(1));
      };
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
    },
    (error) => {
      const line = messages().slack.startFailed(error instanceof Error ? error.message : String(error));
      process.stderr.write(`${scrubSecrets(line)}\n`);
      process.exitCode = 1;
    },
  );
}
