import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No Docker engine runs here, so the Dockerfile is checked for what the issue asks of it and
 * for the files its build needs actually existing in the repository.
 */
const root = join(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const instructions = dockerfile
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

describe('Dockerfile', () => {
  it('is multi-stage on the official Node 20 slim image', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const from of froms) expect(from).toMatch(/^FROM node:20-slim\b/);
  });

  it('ships production dependencies only and runs as a non-root user with a HEALTHCHECK', () => {
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const users = instructions.filter((l) => l.startsWith('USER '));
    expect(users.at(-1)).toMatch(/^USER (?!root\b|0\b)\S+/);
    expect(instructions.some((l) => /^HEALTHCHECK .*\/healthz/.test(l))).toBe(true);
  });

  it('checks health on the port the bot listens on: METRICS_PORT in Socket Mode, PORT over HTTP', async () => {
    const line = instructions.find((l) => l.startsWith('HEALTHCHECK '))!;
    const args = JSON.parse(line.slice(line.indexOf('CMD ') + 4)) as string[];
    expect(args.slice(0, 2)).toEqual(['node', '-e']);
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/healthz' ? 200 : 404);
      res.end('ok\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = String((server.address() as AddressInfo).port);
    const check = (env: Record<string, string>) =>
      new Promise<number>((resolve) => {
        execFile(process.execPath, ['-e', args[2]!], { env, timeout: 10_000 }, (error) =>
          resolve(error ? (typeof error.code === 'number' ? error.code : 1) : 0),
        );
      });
    try {
      expect(await check({ PORT: port })).toBe(0);
      expect(await check({ SLACK_APP_TOKEN: 'xapp-1', METRICS_PORT: port, PORT: '1' })).toBe(0);
      // Over HTTP the bot ignores METRICS_PORT, and so does the check.
      expect(await check({ METRICS_PORT: port, PORT: '1' })).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('copies only files that exist, and runs what the build produces', () => {
    for (const line of instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from='))) {
      const sources = line.split(/\s+/).slice(1, -1);
      for (const source of sources) {
        // `tsconfig*.json`: the glob matches at least tsconfig.json.
        const matches = existsSync(join(root, source.replace('*', '')));
        expect(matches, `${line}: ${source}`).toBe(true);
      }
    }
    expect(dockerfile).toMatch(/RUN npm run build/);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.start).toContain('dist/main.js');
    expect(instructions.at(-1)).toContain('dist/main.js');
  });

  it('runs the bot the way `npm start` does: the same node flags and malloc settings', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const words = pkg.scripts.start!.split(/\s+/);
    const flags = words.slice(words.indexOf('node') + 1, -1);
    const cmd = JSON.parse(instructions.at(-1)!.replace(/^CMD\s+/, '')) as string[];
    expect(cmd.slice(1, -1)).toEqual(flags);
    const env = instructions.find((l) => l.startsWith('ENV ') && l.includes('NODE_ENV'));
    for (const setting of ['MALLOC_ARENA_MAX=2', 'MALLOC_TRIM_THRESHOLD_=131072']) {
      expect(words).toContain(setting);
      expect(env).toContain(setting);
    }
  });
});
