import type { AddressInfo } from 'node:net';
import {
  App,
  type Logger as BoltLogger,
  type CustomRoute,
  HTTPReceiver,
  LogLevel,
  type Receiver,
  type webApi,
} from '@slack/bolt';
import { messages } from '../../i18n/index.js';
import type { Logger } from '../../lib/logger.js';
import { createSeenSignatures, refuseReplays, type SeenSignatures, signatureProperties } from './replay.js';

/** The Slack part of the environment; only the entry point reads `process.env`. */
export interface SlackEnv {
  SLACK_BOT_TOKEN?: string;
  SLACK_APP_TOKEN?: string;
  SLACK_SIGNING_SECRET?: string;
  SLACK_API_URL?: string;
  PORT?: string;
  /** Socket Mode: where `/healthz`, `/readyz` and `/metrics` listen (default: `PORT`, then 3000). */
  METRICS_PORT?: string;
  [name: string]: string | undefined;
}

/** How the bot talks to Slack, decided once from the environment. */
export interface SlackSettings {
  /** Socket Mode when `SLACK_APP_TOKEN` is set, else HTTP (needs `SLACK_SIGNING_SECRET`). */
  mode: 'socket' | 'http';
  botToken: string;
  appToken?: string;
  signingSecret?: string;
  /** HTTP: where `/slack/events` and the health and metrics routes listen. Socket Mode: those routes only. */
  port: number;
  /** Web API base URL ending in `/` (GovSlack, a proxy); Slack's own when undefined. */
  apiUrl?: string;
}

/** The environment cannot start the Slack app; `message` is one line naming what to set. */
export class SlackEnvError extends Error {
  constructor(
    message: string,
    /** The variables to set (empty when a value is malformed rather than missing). */
    readonly variables: readonly string[],
  ) {
    super(message);
    this.name = 'SlackEnvError';
  }
}

/** True when the environment names a way to reach Slack (an app token or a signing secret). */
export function hasSlackTransport(env: SlackEnv): boolean {
  return Boolean(env.SLACK_APP_TOKEN || env.SLACK_SIGNING_SECRET);
}

/** Reads and checks the Slack variables; throws `SlackEnvError` with one line when incomplete. */
export function slackSettingsFromEnv(env: SlackEnv): SlackSettings {
  const t = messages().slack;
  const missing: string[] = [];
  if (!env.SLACK_BOT_TOKEN) missing.push('SLACK_BOT_TOKEN');
  if (!hasSlackTransport(env)) missing.push('SLACK_APP_TOKEN or SLACK_SIGNING_SECRET');
  if (missing.length > 0) throw new SlackEnvError(t.missingEnv(missing), missing);

  const portText = (env.SLACK_APP_TOKEN ? env.METRICS_PORT : undefined) ?? env.PORT ?? '3000';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535) throw new SlackEnvError(t.badPort(portText), []);

  let apiUrl: string | undefined;
  if (env.SLACK_API_URL) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(env.SLACK_API_URL);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol)) {
      throw new SlackEnvError(t.badApiUrl(env.SLACK_API_URL), []);
    }
    // WebClient appends the method name to the base, so it must end in a slash.
    apiUrl = env.SLACK_API_URL.endsWith('/') ? env.SLACK_API_URL : `${env.SLACK_API_URL}/`;
  }

  const botToken = env.SLACK_BOT_TOKEN as string;
  return env.SLACK_APP_TOKEN
    ? { mode: 'socket', botToken, appToken: env.SLACK_APP_TOKEN, port, ...(apiUrl ? { apiUrl } : {}) }
    : {
        mode: 'http',
        botToken,
        signingSecret: env.SLACK_SIGNING_SECRET as string,
        port,
        ...(apiUrl ? { apiUrl } : {}),
      };
}

/** Web API client options for anything else that talks to Slack (e.g. the guards' directory). */
export function slackClientOptions(settings: Pick<SlackSettings, 'apiUrl'>): WebClientOptions {
  return settings.apiUrl ? { slackApiUrl: settings.apiUrl } : {};
}

export interface CreateSlackAppOptions {
  env: SlackEnv;
  logger: Logger;
  /** A receiver to use instead of Socket Mode / HTTP (tests drive it with `app.processEvent`). */
  receiverOverride?: Receiver;
  /**
   * The bot's ids, when known: with both, Bolt skips `auth.test` (tests; no network at all).
   * Without them `auth.test` runs at construction and checks the token.
   */
  authorization?: { botId: string; botUserId: string };
  /** Extra Web API client options (retry policy in tests); `SLACK_API_URL` still wins. */
  clientOptions?: WebClientOptions;
  /** Served beside `/healthz` in both modes (`/readyz`, `/metrics`). */
  routes?: CustomRoute[];
  /**
   * HTTP mode: signatures already handled, so a replayed request is refused. The bot shares them
   * through its store; without this, each process remembers its own.
   */
  seenSignatures?: SeenSignatures;
}

/** A Bolt app built from the environment, with start/stop that report where it listens. */
export interface SlackApp {
  app: App;
  settings: SlackSettings;
  /** Starts the receiver; for HTTP, resolves with the port actually bound (useful with PORT=0). */
  start(): Promise<{ port?: number }>;
  stop(): Promise<void>;
  /**
   * Whether Slack can reach the bot now: Socket Mode's websocket is open, or the HTTP receiver
   * is listening. For `/readyz`.
   */
  connected(): boolean;
}

/** `GET /healthz`: a liveness answer that needs neither Slack nor Redis. */
export const healthRoute: CustomRoute = {
  path: '/healthz',
  method: ['GET'],
  handler: (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('ok\n');
  },
};

/**
 * Builds the Bolt app: Socket Mode when `SLACK_APP_TOKEN` is set, otherwise HTTP on `$PORT` at
 * `/slack/events`, signature-verified with `SLACK_SIGNING_SECRET`. Throws `SlackEnvError` when
 * the environment is incomplete. Never developer mode: it logs request bodies and tokens.
 */
export function createSlackApp(options: CreateSlackAppOptions): SlackApp {
  const settings = slackSettingsFromEnv(options.env);
  const clientOptions: WebClientOptions = { ...options.clientOptions, ...slackClientOptions(settings) };
  const common = {
    token: settings.botToken,
    ...(options.authorization ?? {}),
    logger: boltLogger(options.logger),
    logLevel: LogLevel.INFO,
    developerMode: false,
    // Bolt's conversation store is unused here; without it nothing runs before the listener's ack.
    convoStore: false as const,
    clientOptions,
  };

  const customRoutes = [healthRoute, ...(options.routes ?? [])];
  let app: App;
  if (options.receiverOverride) {
    app = new App({ ...common, receiver: options.receiverOverride });
  } else if (settings.mode === 'socket') {
    app = new App({
      ...common,
      socketMode: true,
      appToken: settings.appToken as string,
      // Socket Mode only opens a port for custom routes: this is the health check.
      port: settings.port,
      customRoutes,
    });
  } else {
    // Bolt's own receiver, built here only to hand it `customPropertiesExtractor`: the signature
    // headers reach the context after verification, and `refuseReplays` turns a replay away.
    const receiver = new HTTPReceiver({
      signingSecret: settings.signingSecret as string,
      endpoints: '/slack/events',
      port: settings.port,
      customRoutes,
      logger: common.logger,
      logLevel: common.logLevel,
      // ack() goes back as soon as the listener calls it; the answer follows via response_url.
      processBeforeResponse: false,
      customPropertiesExtractor: signatureProperties,
    });
    refuseNullBodies(receiver, '/slack/events');
    app = new App({ ...common, receiver });
    ackOnce(app);
    app.use(refuseReplays(options.seenSignatures ?? createSeenSignatures(), options.logger));
  }

  let listening = false;
  let stopping = false;
  let socketOpen = false;
  // Bolt keeps its Socket Mode receiver private; its client reports the websocket's state.
  const socketClient = (app as unknown as { receiver?: { client?: SocketEvents } }).receiver?.client;
  if (settings.mode === 'socket' && !options.receiverOverride && socketClient?.on) {
    socketClient.on('connected', () => {
      socketOpen = true;
    });
    for (const event of ['disconnected', 'reconnecting', 'disconnecting']) {
      socketClient.on(event, () => {
        socketOpen = false;
      });
    }
  }
  return {
    app,
    settings,
    connected() {
      if (!listening) return false;
      return settings.mode === 'socket' && !options.receiverOverride ? socketOpen : true;
    },
    async start() {
      stopping = false;
      const started: unknown = await app.start();
      listening = true;
      if (settings.mode === 'socket' && !options.receiverOverride && socketClient)
        keepReconnecting(socketClient, options.logger, () => stopping);
      const address = isServer(started) ? started.address() : null;
      return typeof address === 'object' && address ? { port: (address as AddressInfo).port } : {};
    },
    async stop() {
      listening = false;
      stopping = true;
      await app.stop();
    },
  };
}

/** Bolt's default limit on a request body (4 MB), kept when the body is read ahead of Bolt. */
const BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Bolt's HTTP receiver reads `body.ssl_check` from whatever a verified body parses to. A body of
 * JSON `null` (`payload=null`, or `null` sent as JSON) throws there, outside every handler: an
 * unhandled rejection, which ends the process. Only a holder of the signing secret can send one,
 * but a bot needed in an incident should not die of it. So the body is read here first (Bolt
 * uses a body already read, and still verifies its signature) and a null one is answered 400.
 */
function refuseNullBodies(receiver: HTTPReceiver, endpoint: string): void {
  const listener = receiver.requestListener;
  receiver.requestListener = (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'POST' || path !== endpoint) return listener(req, res);
    void (async () => {
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of req) {
          size += (chunk as Buffer).length;
          if (size > BODY_LIMIT_BYTES) {
            res.writeHead(413).end();
            req.destroy();
            return;
          }
          chunks.push(chunk as Buffer);
        }
      } catch {
        if (!res.headersSent) res.writeHead(400).end();
        return;
      }
      const rawBody = Buffer.concat(chunks);
      if (isNullBody(rawBody.toString(), req.headers['content-type'])) {
        res.writeHead(400).end();
        return;
      }
      (req as typeof req & { rawBody?: Buffer }).rawBody = rawBody;
      listener(req, res);
    })();
  };
}

/** True when Bolt would parse this body (form `payload=` JSON, or a JSON body) to `null`. */
export function isNullBody(raw: string, contentType: string | undefined): boolean {
  let json: string | null = raw;
  if (contentType === 'application/x-www-form-urlencoded') {
    const payloads = new URLSearchParams(raw).getAll('payload');
    json = payloads.length === 1 ? (payloads[0] as string) : null;
  }
  if (json === null) return false;
  try {
    return JSON.parse(json) === null;
  } catch {
    return false;
  }
}

/**
 * Makes every request's `ack()` answer Slack once and then do nothing: `refuseReplays`
 * acknowledges a signed request before its store check, and the listener acknowledges again.
 * Bolt's HTTP receiver would throw on the second call (ReceiverMultipleAckError). The receiver
 * hands each request to `app.processEvent`, so that is where its `ack` is wrapped.
 */
function ackOnce(app: App): void {
  const processEvent = app.processEvent.bind(app);
  app.processEvent = (event) => {
    let acked: Promise<void> | undefined;
    const ack = event.ack;
    return processEvent({ ...event, ack: (response) => (acked ??= ack(response)) });
  };
}

interface SocketEvents {
  on(event: string, listener: () => void): unknown;
  start?: () => Promise<unknown>;
  delayReconnectAttempt?: (attempt: () => Promise<unknown>) => Promise<unknown>;
}

/**
 * After the first connection, Socket Mode's client reconnects by calling its own `start()` from a
 * timer and never handles that promise: a reconnect that fails (Slack refusing
 * `apps.connections.open` after its retries, or a shutdown in the middle of one) becomes an
 * unhandled rejection, which ends the process. The bot is needed most while Slack is flaky, so a
 * failed reconnect is logged and tried again later (the client's own growing delay), and one
 * during shutdown is let go. `/readyz` says Slack is disconnected meanwhile.
 */
function keepReconnecting(client: SocketEvents, logger: Logger, isStopping: () => boolean): void {
  const start = client.start?.bind(client);
  const retry = client.delayReconnectAttempt?.bind(client);
  if (!start || !retry) return;
  const guarded = async (): Promise<unknown> => {
    try {
      return await start();
    } catch (error) {
      if (isStopping()) return undefined;
      logger.warn(
        { reason: error instanceof Error ? error.message : String(error) },
        'Socket Mode could not reconnect to Slack; trying again',
      );
      void retry(guarded);
      return undefined;
    }
  };
  client.start = guarded;
}

type WebClientOptions = webApi.WebClientOptions;

function isServer(value: unknown): value is { address(): AddressInfo | string | null } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { address?: unknown }).address === 'function'
  );
}

const severity: Record<LogLevel, number> = {
  [LogLevel.DEBUG]: 10,
  [LogLevel.INFO]: 20,
  [LogLevel.WARN]: 30,
  [LogLevel.ERROR]: 40,
};

/**
 * Bolt's logger interface over pino. Bolt logs strings and objects positionally; they become one
 * pino line. The level never goes below info, whatever Bolt asks for: debug lines carry payloads.
 */
export function boltLogger(logger: Logger): BoltLogger {
  let level: LogLevel = LogLevel.INFO;
  let log = logger.child({ component: 'bolt' });
  const emit = (at: LogLevel, args: unknown[]) => {
    if (severity[at] < severity[level]) return;
    const found = args.find((a): a is Error => a instanceof Error);
    const err = found && withoutUrlPaths(found);
    const text = withoutUrlPaths(
      args
        .filter((a) => !(a instanceof Error))
        .map((a) => (typeof a === 'string' ? a : safeJson(a)))
        .join(' '),
    );
    const method = at === LogLevel.DEBUG ? 'debug' : at;
    if (err) log[method]({ err }, text || err.message);
    else log[method](text);
  };
  return {
    debug: (...args: unknown[]) => emit(LogLevel.DEBUG, args),
    info: (...args: unknown[]) => emit(LogLevel.INFO, args),
    warn: (...args: unknown[]) => emit(LogLevel.WARN, args),
    error: (...args: unknown[]) => emit(LogLevel.ERROR, args),
    setLevel(next: LogLevel) {
      level = severity[next] < severity[LogLevel.INFO] ? LogLevel.INFO : next;
    },
    getLevel: () => level,
    setName(name: string) {
      log = logger.child({ component: name });
    },
  };
}

/**
 * The Slack libraries' own lines may quote a URL whose path is a credential for a while (a file
 * upload URL, a response_url): only its origin is kept, and a Web API method's `/api/<method>`.
 */
function withoutUrlPaths<T extends string | Error>(value: T): T {
  const scrub = (text: string) =>
    text.replace(/\b(https?:\/\/[^\s/"'<>]+)(\/[^\s"'<>,)]*)?/g, (_, origin: string, path?: string) =>
      !path || /^\/api\/[\w.]+\/?$/.test(path) ? `${origin}${path ?? ''}` : `${origin}/…`,
    );
  if (typeof value === 'string') return scrub(value) as T;
  const error = value as Error;
  const message = scrub(error.message);
  const stack = error.stack && scrub(error.stack);
  if (message === error.message && stack === error.stack) return value;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(error)) as Error, error, { message });
  if (stack !== undefined) copy.stack = stack;
  return copy as T;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
