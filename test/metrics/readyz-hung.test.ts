import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBot } from '../../src/transports/slack/bot.js';
import { writeConfigFile } from '../helpers/config-file.js';
import { startWiredBot } from '../transports/slack/harness.js';

/**
 * A watched Redis that accepts connections and never answers (a hung server, a black-holed
 * network) holds a status read until the command timeout. Kubernetes' readiness probe gives up
 * after about a second, so `/readyz` must not wait for that read, or every replica goes unready
 * exactly when one of the systems it watches hangs.
 */
const dir = mkdtempSync(join(tmpdir(), 'qo-readyz-hung-'));
let fakeSlack: Server;
let hung: TcpServer;
const sockets: Socket[] = [];
let bot: RunningBot;

beforeAll(async () => {
  fakeSlack = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, user_id: 'U0BOT', bot_id: 'B0BOT', team_id: 'T0TEAM' }));
  });
  await new Promise<void>((resolve) => fakeSlack.listen(0, '127.0.0.1', resolve));
  hung = createTcpServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  const configFile = writeConfigFile(dir, {
    store: `sqlite:${join(dir, 'store.db')}`,
    metrics: { cacheSeconds: 0 },
    systems: [
      {
        name: 'hung',
        type: 'bullmq',
        redis: `redis://127.0.0.1:${(hung.address() as AddressInfo).port}`,
        queues: ['events'],
      },
    ],
  });
  bot = await startWiredBot({
    dir,
    configFile,
    token: 'xoxb-readyz',
    apiUrl: `http://127.0.0.1:${(fakeSlack.address() as AddressInfo).port}/api/`,
    http: { signingSecret: 'readyz-secret' },
    stderr: () => {},
  });
});

afterAll(async () => {
  await bot?.stop();
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => hung?.close(resolve));
  await new Promise((resolve) => fakeSlack?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('/readyz with a watched Redis that hangs', () => {
  it('answers ready while the read of that Redis is still waiting, and says the system is down once it gave up', async () => {
    const get = async () => {
      const res = await fetch(`http://127.0.0.1:${bot.port}/readyz`);
      return { status: res.status, body: JSON.parse(await res.text()) as Record<string, unknown> };
    };
    // The read the probe starts waits for the command timeout; the probe does not.
    let readDone = false;
    const read = bot.runtime.backends
      .get('hung')!
      .status()
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        readDone = true;
      });
    const first = await get();
    expect(readDone).toBe(false);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ ready: true, store: 'ok', slack: 'connected' });
    await read;
    // Once a read has given up on it, the body lists it as down; readiness still holds.
    for (let i = 0; i < 20; i++) {
      const again = await get();
      expect(again.status).toBe(200);
      if ((again.body.systems as Record<string, string>).hung === 'down') return;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error('the hung system never showed as down');
  }, 30_000);
});
