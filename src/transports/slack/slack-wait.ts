import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { messages } from '../../i18n/index.js';
import type { Logger } from '../../lib/logger.js';
import type { SlackCallOutcome } from './health.js';
import { SlackTokenError } from './tokens.js';

/** What `/readyz` answers while the bot waits for Slack at start: not ready, and why. */
export interface WaitingReadiness {
  ready: false;
  /** The store opens once Slack has answered. */
  store: 'not opened';
  slack: 'disconnected';
  slackCall: { method: string; url?: string; error: string };
  systems: Record<string, never>;
}

/** The pause before each next try: 1 s, doubling, at most 30 s. */
export function slackRetryDelayMs(attempt: number): number {
  return Math.min(30_000, 1_000 * 2 ** Math.max(0, attempt - 1));
}

/**
 * Serves `/healthz` (200: the process runs) and `/readyz` (503, naming the call that failed) on
 * `port` while the bot waits for Slack, so a liveness probe does not restart a bot that is only
 * waiting for Slack, and an operator can see what it tried. Closed before Bolt binds the port.
 */
export async function serveWhileWaiting(
  port: number,
  state: () => WaitingReadiness,
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok\n');
    } else if (req.method === 'GET' && path === '/readyz') {
      res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end(`${JSON.stringify(state())}\n`);
    } else {
      res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '5' });
      res.end('queue-ops is waiting for Slack\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface SlackWaitDeps {
  /** `auth.test` (or `apps.connections.open`) once, without the client's own retries. */
  check: () => Promise<void>;
  /** The Web API method `check` calls, and the URL it calls (for the log and `/readyz`). */
  method: string;
  url: string;
  /** What Slack last answered (the health recorder). */
  lastCall: () => SlackCallOutcome | undefined;
  /** Called on the first failure: starts the health server (idempotent). */
  waiting: () => Promise<void>;
  logger: Logger;
  /** Tests: a shorter pause. */
  delayMs?: (attempt: number) => number;
}

/**
 * Runs `check` until Slack answers it. A refusal (`SlackTokenError` with Slack's error code) is
 * thrown at once, as before: no wait will fix a revoked token. Anything else (Slack unreachable,
 * a 5xx, no answer in time) is logged with the URL tried, and tried again after a growing pause,
 * for as long as it takes; the caller's health server says so meanwhile.
 */
export async function untilSlackAnswers(deps: SlackWaitDeps): Promise<void> {
  const delay = deps.delayMs ?? slackRetryDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.check();
      if (attempt > 1)
        deps.logger.info({ method: deps.method, url: deps.url }, messages().slack.slackAnswered);
      return;
    } catch (error) {
      if (!(error instanceof SlackTokenError) || error.slackError !== undefined) throw error;
      await deps.waiting();
      const waitMs = delay(attempt);
      const failed = deps.lastCall();
      deps.logger.warn(
        {
          method: deps.method,
          url: deps.url,
          error: failed && !failed.ok ? failed.error : error.reason,
          attempt,
          retryInSeconds: Math.round(waitMs / 1000),
        },
        messages().slack.waitingForSlack(deps.method, deps.url, error.reason, Math.round(waitMs / 1000)),
      );
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}
