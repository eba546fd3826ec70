import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/main.js';
import { bullmqSystem, writeConfigFile } from '../../helpers/config-file.js';
import { testRedisUrl } from '../../helpers/test-redis.js';
import { randomId } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'queue-ops-main-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function capture() {
  const err: string[] = [];
  const out: string[] = [];
  return { io: { stderr: (l: string) => err.push(l), stdout: (l: string) => out.push(l) }, err, out };
}

describe('npm start (src/main.ts)', () => {
  it('points to npm run demo and exits 2 when no Slack transport is configured', async () => {
    const { io, err } = capture();
    expect(await main({ SLACK_BOT_TOKEN: 'xoxb-1' }, io)).toBe(2);
    expect(err).toHaveLength(1);
    expect(err[0]).toContain('npm run demo');
  });

  it('names the missing bot token in one line and exits 1', async () => {
    const { io, err } = capture();
    expect(await main({ SLACK_APP_TOKEN: 'xapp-1' }, io)).toBe(1);
    expect(err).toEqual([expect.stringContaining('SLACK_BOT_TOKEN')]);
  });

  it('never prints the credentials of a malformed SLACK_API_URL it refuses', async () => {
    const { io, err } = capture();
    const env = {
      SLACK_BOT_TOKEN: 'xoxb-1',
      SLACK_APP_TOKEN: 'xapp-1',
      SLACK_API_URL: 'ftp://proxyuser:proxy-secret-99@proxy.example/api/',
    };
    expect(await main(env, io)).toBe(1);
    expect(err).toEqual([expect.stringContaining('SLACK_API_URL')]);
    expect(err.join('\n')).not.toContain('proxy-secret-99');
  });

  it('refuses an invalid config before connecting anything, naming every problem by path', async () => {
    const file = join(dir, 'bad.yml');
    writeFileSync(
      file,
      [
        'systems:',
        '  - name: a',
        '    type: bullmq',
        '    redis: http://nope',
        '  - name: b',
        '    type: kafka',
      ].join('\n'),
    );
    const { io, err } = capture();
    const code = await main(
      { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 'sss', PORT: '0', QUEUE_OPS_CONFIG: file },
      io,
    );
    expect(code).toBe(1);
    const text = err.join('\n');
    expect(text).toContain('systems[0].redis: expected a redis://, rediss:// or sentinel:// URL');
    expect(text).toContain('systems[1]');
  });
});

describe('npm start as a process (the built dist/main.js)', () => {
  const url = testRedisUrl();
  let fakeSlack: Server;
  let apiUrl: string;
  const calls: string[] = [];

  beforeAll(async () => {
    // Stands in for Slack's Web API through SLACK_API_URL: only auth.test is called at start.
    fakeSlack = createServer((req, res) => {
      calls.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, user_id: 'U0BOT', bot_id: 'B0BOT', team_id: 'T0TEAM' }));
    });
    await new Promise<void>((resolve) => fakeSlack.listen(0, '127.0.0.1', resolve));
    apiUrl = `http://127.0.0.1:${(fakeSlack.address() as AddressInfo).port}/api/`;
  });
  afterAll(async () => {
    await new Promise((resolve) => fakeSlack.close(resolve));
  });

  it('serves /healthz in HTTP mode and stops cleanly on SIGTERM', async () => {
    const file = writeConfigFile(
      dir,
      {
        systems: [bullmqSystem('pushizo', url, randomId('main'))],
        store: `sqlite:${join(dir, 'process.db')}`,
      },
      'good.yml',
    );
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const child = spawn(process.execPath, [resolve(import.meta.dirname, '../../../dist/main.js')], {
      env: {
        PATH: process.env.PATH ?? '',
        SLACK_BOT_TOKEN: 'xoxb-process-token',
        SLACK_SIGNING_SECRET: 'process-signing-secret',
        SLACK_API_URL: apiUrl,
        PORT: String(port),
        QUEUE_OPS_CONFIG: file,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => {
      output += String(c);
    });
    child.stderr.on('data', (c) => {
      output += String(c);
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    await expect.poll(() => output, { timeout: 20_000 }).toContain(`listening for Slack on port ${port}`);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    expect(calls).toContain('/api/auth.test');

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).not.toContain('xoxb-process-token');
    expect(output).not.toContain('process-signing-secret');
  });
});
