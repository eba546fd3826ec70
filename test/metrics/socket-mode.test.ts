import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { type RunningBot, startBot } from '../../src/transports/slack/bot.js';
import { deletePrefix, randomName, waitFor } from '../helpers/bullmq-jobs.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { parsePrometheusText } from '../helpers/prom-text.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { pagerDutyDelivery } from '../paging/pager-stand-in.js';
import { memoryLogger } from '../transports/slack/harness.js';

/**
 * Socket Mode: no public URL, so `/metrics`, `/readyz` and `/healthz` are served on METRICS_PORT.
 * Slack's side is a local Web API (`SLACK_API_URL`: auth.test, apps.connections.open) and a local
 * websocket that says hello as Slack's does; `/readyz` follows the websocket: ready while it is
 * open, 503 naming Slack once it drops, and a reconnect Slack refuses does not end the process.
 */
const url = testRedisUrl();
const prefix = randomName('sock');
const dir = mkdtempSync(join(tmpdir(), 'qo-socket-'));

let api: Server;
let sockets: WebSocketServer;
let bot: RunningBot;
let metricsPort: number;
let refuseReconnect = false;
const log = memoryLogger();

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  sockets = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => sockets.once('listening', resolve));
  sockets.on('connection', (socket) => {
    socket.send(
      JSON.stringify({ type: 'hello', num_connections: 1, connection_info: { app_id: 'A0QUEUEOPS' } }),
    );
  });
  const wsPort = (sockets.address() as AddressInfo).port;
  api = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.endsWith('/apps.connections.open')) {
      res.end(
        JSON.stringify(
          // Slack refusing the app token now (revoked, or Slack's own trouble): no new socket.
          refuseReconnect
            ? { ok: false, error: 'invalid_auth' }
            : { ok: true, url: `ws://127.0.0.1:${wsPort}/link` },
        ),
      );
      return;
    }
    res.end(JSON.stringify({ ok: true, user_id: 'U0BOT', bot_id: 'B0BOT', team_id: 'T0TEAM' }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/`;

  const config = writeConfigFile(dir, {
    store: `sqlite:${join(dir, 'store.db')}`,
    systems: [bullmqSystem('pushizo', url, prefix, { queues: ['dispatch-ios'] })],
  });
  metricsPort = await freePort();
  const started = await startBot(
    {
      SLACK_BOT_TOKEN: 'xoxb-socket',
      SLACK_APP_TOKEN: 'xapp-socket',
      SLACK_API_URL: apiUrl,
      METRICS_PORT: String(metricsPort),
      // Socket Mode ignores PORT when METRICS_PORT is set.
      PORT: '1',
      QUEUE_OPS_CONFIG: config,
      PAGERDUTY_WEBHOOK_SECRET: 'socket-webhook-secret',
    },
    { stderr: () => {}, stdout: () => {} },
    { logger: log.logger, metricsOptions: { processMetrics: false } },
  );
  if (typeof started === 'number') throw new Error(`bot did not start: ${started}`);
  bot = started;
});

afterAll(async () => {
  await bot?.stop().catch(() => undefined);
  for (const client of sockets?.clients ?? []) client.terminate();
  await new Promise((resolve) => sockets?.close(resolve));
  await new Promise((resolve) => api?.close(resolve));
  await deletePrefix(url, prefix);
  rmSync(dir, { recursive: true, force: true });
});

const get = async (path: string) => {
  const res = await fetch(`http://127.0.0.1:${metricsPort}${path}`);
  return { status: res.status, body: await res.text() };
};

describe('Socket Mode health and metrics on METRICS_PORT', () => {
  it('serves /healthz, /metrics and a ready /readyz while the websocket is open', async () => {
    expect(bot.slack.settings.mode).toBe('socket');
    expect((await get('/healthz')).status).toBe(200);
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    const up = parsePrometheusText(metrics.body).get('queue_ops_system_up')?.samples;
    expect(up?.map((s) => [s.labels.system, s.value])).toEqual([['pushizo', 1]]);
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({ ready: true, store: 'ok', slack: 'connected' });
  });

  it('takes PagerDuty’s webhook on METRICS_PORT too: 401 unless signed with the secret', async () => {
    const { raw, signature } = pagerDutyDelivery(
      'incident.acknowledged',
      'queue-ops-a-00000000',
      'socket-webhook-secret',
    );
    const post = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${metricsPort}/pagerduty/webhook`, { method: 'POST', headers, body: raw });
    expect((await post({})).status).toBe(401);
    const signed = await post({ 'X-PagerDuty-Signature': signature });
    expect(signed.status).toBe(200);
    // Signed, but for no alert of queue-ops: nothing to change.
    expect(await signed.json()).toEqual({ ok: true, found: false, changed: false });
  });

  it('is not ready once the websocket to Slack drops, and says it is Slack, without tokens', async () => {
    refuseReconnect = true;
    for (const client of sockets.clients) client.terminate();
    await waitFor('readyz to notice', async () => (await get('/readyz')).status === 503);
    const body = (await get('/readyz')).body;
    expect(JSON.parse(body)).toMatchObject({ ready: false, store: 'ok', slack: 'disconnected' });
    expect(body).not.toContain('xapp');
    expect(body).not.toContain('xoxb');
    // A refused reconnect is logged and tried again later, never an unhandled rejection that
    // would end the process (vitest fails the run on one).
    await waitFor('a refused reconnect', async () =>
      log.lines.some((l) => String(l.msg).includes('could not reconnect to Slack')),
    );
    // Liveness is not readiness: the process is alive, and /metrics still answers.
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/metrics')).status).toBe(200);
  });
});
