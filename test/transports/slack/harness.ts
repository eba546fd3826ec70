import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { App, Receiver, ReceiverEvent } from '@slack/bolt';
import nock from 'nock';
import { createApp, type App as QueueOpsApp } from '../../../src/app.js';
import { parseConfig } from '../../../src/config/load.js';
import type { ConfigInput } from '../../../src/config/schema.js';
import { createLogger, type Logger } from '../../../src/lib/logger.js';
import type { Middleware } from '../../../src/pipeline/dispatcher.js';
import { type BotOptions, type RunningBot, startBot } from '../../../src/transports/slack/bot.js';
import { createSlackApp } from '../../../src/transports/slack/create-app.js';
import { registerSlackListeners, type SlackListenerDeps } from '../../../src/transports/slack/listeners.js';
import { bullmqSystem, configYaml, type SystemInput } from '../../helpers/config-file.js';

export const HOOKS = 'https://hooks.slack.com';

/** A receiver that binds nothing; tests hand Bolt events through `app.processEvent`. */
export function fakeReceiver(): Receiver {
  return { init() {}, start: async () => undefined, stop: async () => undefined };
}

/** Pino lines, parsed, for asserting what was logged. */
export function memoryLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines };
}

export function randomId(prefix: string): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** A `/queue …` payload as Slack sends it (Bolt's `SlashCommand`). */
export function slashCommand(text: string, responsePath: string, overrides: Record<string, unknown> = {}) {
  return {
    token: 'verification-token-unused',
    team_id: 'T0TEAM',
    team_domain: 'oncall',
    channel_id: 'C0INCIDENT',
    channel_name: 'incident',
    user_id: 'U0ALICE',
    user_name: 'alice',
    command: '/queue',
    text,
    api_app_id: 'A0QUEUEOPS',
    response_url: `${HOOKS}${responsePath}`,
    trigger_id: '111.222.333',
    ...overrides,
  };
}

/** A block_actions payload for one button click, shaped like Slack's own examples. */
export function buttonClick(
  actionId: string,
  value: string,
  responsePath: string,
  overrides: Record<string, unknown> = {},
) {
  return {
    type: 'block_actions',
    user: { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: 'T0TEAM' },
    api_app_id: 'A0QUEUEOPS',
    token: 'verification-token-unused',
    container: {
      type: 'message',
      message_ts: '1700000000.000100',
      channel_id: 'C0INCIDENT',
      is_ephemeral: false,
    },
    trigger_id: '111.222.333',
    team: { id: 'T0TEAM', domain: 'oncall' },
    channel: { id: 'C0INCIDENT', name: 'incident' },
    message: { ts: '1700000000.000100', type: 'message', text: 'status', blocks: [] },
    state: { values: {} },
    response_url: `${HOOKS}${responsePath}`,
    actions: [
      {
        action_id: actionId,
        block_id: 'b1',
        text: { type: 'plain_text', text: 'Refresh', emoji: true },
        value,
        type: 'button',
        action_ts: '1700000001.000200',
      },
    ],
    ...overrides,
  };
}

/** Records the JSON bodies `respond()` POSTs to one response_url. */
export function captureResponses(path: string, status = 200) {
  const bodies: Record<string, unknown>[] = [];
  const scope = nock(HOOKS)
    .persist()
    .post(path, (body) => {
      bodies.push(body as Record<string, unknown>);
      return true;
    })
    .reply(status, status === 200 ? 'ok' : 'expired_url');
  return { bodies, scope };
}

export interface Harness {
  app: App;
  logLines: Record<string, unknown>[];
  /** Hands one payload to Bolt: `acked` settles when ack() is called, `done` when listeners finish. */
  deliver(
    body: Record<string, unknown>,
    extra?: Partial<ReceiverEvent>,
  ): { acked: Promise<void>; done: Promise<void> };
  /** Delivers and waits for every listener to finish; resolves with how many times ack() ran. */
  send(body: Record<string, unknown>, extra?: Partial<ReceiverEvent>): Promise<{ acks: number }>;
}

/** `startHarness`'s: the Slack side with the app it composed. */
export type AppHarness = Harness & { services: QueueOpsApp; close(): Promise<void> };

/**
 * Bolt with the real listeners (`createSlackApp` over a receiver that binds nothing, no Web API
 * retries) around a dispatcher the test composed itself (`createApp`, `createQueueOps`). Tests
 * hand it payloads with `deliver`/`send`; only Slack's HTTP side is nock'd.
 */
export function slackAround(
  dispatcher: SlackListenerDeps['dispatcher'],
  options: Partial<Omit<SlackListenerDeps, 'dispatcher'>> & { apiUrl?: string } = {},
): Harness {
  const memory = options.logger ? undefined : memoryLogger();
  const logger = options.logger ?? (memory as { logger: Logger }).logger;
  const { apiUrl, ...listenerOptions } = options;
  const slack = createSlackApp({
    env: {
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: 'unused-with-fake-receiver',
      ...(apiUrl ? { SLACK_API_URL: apiUrl } : {}),
    },
    logger,
    receiverOverride: fakeReceiver(),
    authorization: { botId: 'B0BOT', botUserId: 'U0BOT' },
    clientOptions: { retryConfig: { retries: 0 } },
  });
  registerSlackListeners(slack.app, { ...listenerOptions, dispatcher, logger });
  return {
    app: slack.app,
    logLines: memory?.lines ?? [],
    deliver(body, extra = {}) {
      return deliver(slack.app, body, extra);
    },
    async send(body, extra = {}) {
      const run = deliver(slack.app, body, extra);
      await run.done;
      return { acks: run.acks() };
    },
  };
}

/**
 * The real pipeline: a typed config, written as its text and loaded → `createApp` (real
 * backends, real dispatcher, with `middleware` in its chain) → Bolt app with the real listeners
 * (`slackAround`). Only Slack's HTTP side is nock'd.
 */
export async function startHarness(
  config: ConfigInput,
  options: { middleware?: Middleware[]; userLocale?: SlackListenerDeps['userLocale'] } = {},
): Promise<AppHarness> {
  const { logger, lines } = memoryLogger();
  // Written as a user's file is and read back by the loader, defaults and all.
  const parsed = parseConfig(configYaml(config), {}, 'test.yml');
  const services = createApp({
    config: parsed,
    env: {},
    logger,
    ...(options.middleware ? { middleware: options.middleware } : {}),
  });
  const slack = slackAround(services.dispatcher, {
    logger,
    locale: parsed.locale,
    ...(options.userLocale ? { userLocale: options.userLocale } : {}),
  });
  return {
    ...slack,
    services,
    logLines: lines,
    async close() {
      await services.close();
    },
  };
}

/**
 * The config most tests of the whole bot share: `pushizo` (BullMQ at `redis` under `prefix`), a
 * SQLite store in `dir`, anyone a viewer, Alice and Bob operators, a pause approved by one of them,
 * and a rate limit no test reaches (it has tests of its own). `slack` replaces the default (commands
 * allowed in C0INCIDENT), `systems` come after pushizo, `policies` replace the default, and `more`
 * adds the other sections.
 */
export function botConfigInput(options: {
  redis: string;
  prefix: string;
  dir: string;
  slack?: ConfigInput['slack'];
  systems?: SystemInput[];
  policies?: ConfigInput['policies'];
  more?: Omit<ConfigInput, 'systems' | 'slack' | 'store' | 'roles' | 'policies' | 'rateLimit'>;
}): ConfigInput {
  return {
    systems: [bullmqSystem('pushizo', options.redis, options.prefix), ...(options.systems ?? [])],
    slack: options.slack ?? { allowedChannels: ['C0INCIDENT'] },
    store: `sqlite:${join(options.dir, 'bot.db')}`,
    roles: { viewer: ['*'], operator: ['U0ALICE', 'U0BOB'] },
    policies: options.policies ?? { pause: { role: 'operator', approvals: 1 } },
    rateLimit: { perUserPerMinute: 1000 },
    ...options.more,
  };
}

/**
 * The one fixture for the bot as `npm start` builds it (`startBot`: the real wiring, store,
 * monitor, Home tab), its Web API at `apiUrl` (nock'd or a local stand-in), without Web API
 * retries, logging to memory and without process metrics unless `seams` says otherwise.
 *
 * - `config`: a typed config, written to `dir`/queue-ops.yml; or `configFile`, a file written already.
 * - By default over a receiver that binds nothing (tests hand events to
 *   `bot.slack.app.processEvent`), with the bot's ids given so Bolt asks Slack nothing at start.
 * - `http`: Bolt's real HTTP receiver on a free port (`bot.port`), checking signatures with
 *   `signingSecret`, and the token checked with Slack's `auth.test` as in production.
 */
export async function startWiredBot(options: {
  dir: string;
  config?: ConfigInput;
  configFile?: string;
  token: string;
  apiUrl: string;
  http?: { signingSecret: string };
  /** More of the environment (SLACK_APP_TOKEN for socket mode…). */
  env?: Record<string, string>;
  seams?: BotOptions;
  /** Where the bot's own stderr lines go (the console by default). */
  stderr?: (line: string) => void;
}): Promise<RunningBot> {
  const configFile = options.configFile ?? join(options.dir, 'queue-ops.yml');
  if (!options.configFile) {
    if (!options.config) throw new Error('startWiredBot needs config or configFile');
    writeFileSync(configFile, configYaml(options.config));
  }
  const receiver: BotOptions = options.http
    ? {}
    : { receiverOverride: fakeReceiver(), authorization: { botId: 'B0BOT', botUserId: 'U0BOT' } };
  const started = await startBot(
    {
      SLACK_BOT_TOKEN: options.token,
      SLACK_SIGNING_SECRET: options.http?.signingSecret ?? 'unused-with-fake-receiver',
      SLACK_API_URL: options.apiUrl,
      QUEUE_OPS_CONFIG: configFile,
      ...(options.http ? { PORT: '0' } : {}),
      ...options.env,
    },
    { stderr: options.stderr ?? ((line) => console.error(line)), stdout: () => {} },
    {
      ...receiver,
      clientOptions: { retryConfig: { retries: 0 } },
      logger: memoryLogger().logger,
      metricsOptions: { processMetrics: false },
      ...options.seams,
    },
  );
  if (typeof started === 'number') throw new Error(`bot did not start: exit ${started}`);
  return started;
}

function deliver(app: App, body: Record<string, unknown>, extra: Partial<ReceiverEvent>) {
  let acks = 0;
  let markAcked: () => void = () => {};
  const acked = new Promise<void>((resolve) => {
    markAcked = resolve;
  });
  const done = app.processEvent({
    body,
    ack: async () => {
      acks += 1;
      markAcked();
    },
    ...extra,
  });
  return { acked, done, acks: () => acks };
}

/** `v0=` + HMAC-SHA256 over `v0:<ts>:<raw body>`: Slack's request signature. */
export function slackSignature(secret: string, timestamp: number | string, rawBody: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}
