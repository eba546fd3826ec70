import type { CustomRoute } from '@slack/bolt';
import type { Metrics } from '../../metrics/metrics.js';
import type { PagerHealth } from '../../paging/pager.js';
import type { SlackCallOutcome } from '../slack/health.js';

export interface ReadinessDeps {
  /** Resolves when the bot's own store answers a cheap read; rejects otherwise. */
  pingStore(): Promise<void>;
  /** Socket Mode's websocket is open, or the HTTP receiver listens. */
  slackConnected(): boolean;
  /** What Slack last answered a Web API call (`auth.test` at start, then the latest call). */
  slackCall?(): SlackCallOutcome | undefined;
  /** Asks Slack again (in the background) while its last answer was a failure. */
  recheckSlack?(): void;
  metrics: Pick<Metrics, 'systemsUp'>;
  /** What each pager of `paging:` last answered; absent (or empty) without pagers. */
  pagers?(): Promise<Record<string, PagerHealth>>;
}

/** What `/readyz` answers: which part is not ready, never a credential. */
export interface Readiness {
  ready: boolean;
  store: 'ok' | 'unreachable';
  /**
   * `failing`: the bot is connected, but Slack's last Web API answer was a failure (a refused
   * token, 5xx, no answer); `slackCall` then names the method, the URL called and Slack's error.
   */
  slack: 'connected' | 'disconnected' | 'failing';
  slackCall?: { method: string; url?: string; error: string };
  /**
   * Each watched system's Redis, for the operator's eye only: a system that is down does not fail
   * readiness, since the bot is needed most exactly then.
   */
  systems: Record<string, 'up' | 'down'>;
  /**
   * Each pager of `paging:` (only when there are some): `refused` since it last refused its key
   * (the alert's thread says so too), `ok` otherwise. For the operator's eye: a pager never makes
   * the bot unready.
   */
  pagers?: Record<string, PagerHealth>;
}

/** How long `/readyz` waits for the watched systems' read before answering with the last one. */
const READY_SYSTEMS_WAIT_MS = 300;

export async function readiness(deps: ReadinessDeps): Promise<Readiness> {
  const [store, systems, pagers] = await Promise.all([
    deps.pingStore().then(
      () => 'ok' as const,
      () => 'unreachable' as const,
    ),
    // Never held up by a watched Redis that hangs: a probe's timeout is about a second, and a
    // system that is down (or slow) must not make the bot unready.
    deps.metrics.systemsUp(READY_SYSTEMS_WAIT_MS).catch(() => ({}) as Record<string, boolean>),
    // For the eye only, like the systems: a store that does not answer leaves them out.
    deps.pagers?.().catch(() => undefined),
  ]);
  const last = deps.slackCall?.();
  const failing = last !== undefined && !last.ok;
  // Asked again now, so the next probe sees Slack's current answer even when the bot is quiet.
  if (failing) deps.recheckSlack?.();
  const slack = !deps.slackConnected()
    ? ('disconnected' as const)
    : failing
      ? ('failing' as const)
      : ('connected' as const);
  return {
    ready: store === 'ok' && slack === 'connected',
    store,
    slack,
    ...(failing
      ? {
          slackCall: {
            method: last.method,
            ...(last.url === undefined ? {} : { url: last.url }),
            error: last.error ?? 'unknown',
          },
        }
      : {}),
    systems: Object.fromEntries(Object.entries(systems).map(([name, up]) => [name, up ? 'up' : 'down'])),
    ...(pagers && Object.keys(pagers).length ? { pagers } : {}),
  };
}

/** `/readyz` and `/metrics`, served beside Slack's endpoint (HTTP) or on `METRICS_PORT` (Socket Mode). */
export function operationalRoutes(deps: ReadinessDeps & { metrics: Metrics }): CustomRoute[] {
  return [
    {
      path: '/readyz',
      method: ['GET'],
      handler: (_req, res) => {
        void readiness(deps).then((body) => {
          res.writeHead(body.ready ? 200 : 503, { 'Content-Type': 'application/json; charset=utf-8' });
          res.end(`${JSON.stringify(body)}\n`);
        });
      },
    },
    {
      path: '/metrics',
      method: ['GET'],
      handler: (_req, res) => {
        deps.metrics.render().then(
          (text) => {
            res.writeHead(200, { 'Content-Type': deps.metrics.contentType });
            res.end(text);
          },
          () => {
            res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
            res.end('metrics failed\n');
          },
        );
      },
    },
  ];
}
