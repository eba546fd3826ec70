import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/lib/redis-server.js';

/** The newest PostgreSQL server binaries on this machine, or undefined. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')) && existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

/**
 * A PostgreSQL cluster of the test's own (initdb + pg_ctl, run as the `postgres` user since the
 * server refuses root), on a free port: restarting or stopping it touches nobody else, unlike the
 * machine's shared cluster on 5432. Trust auth on 127.0.0.1, no fsync (a test's data).
 */
export async function startPrivatePostgres(bin: string) {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-pg-'));
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  const port = await freePort();
  const asPostgres = (tool: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const ctl = (...args: string[]) =>
    asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', ...args]);
  ctl('-o', options, 'start');
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /**
     * A fast restart: every connection is terminated (57P01), the server is back at once. Not
     * blocking: the bot's process goes on handling its sockets meanwhile, as it would.
     */
    restart: () =>
      new Promise<void>((done, fail) =>
        execFile(
          'runuser',
          [
            '-u',
            'postgres',
            '--',
            join(bin, 'pg_ctl'),
            '-D',
            data,
            '-l',
            join(dir, 'log'),
            '-w',
            '-m',
            'fast',
            '-o',
            options,
            'restart',
          ],
          { timeout: 60_000 },
          (error) => (error ? fail(error) : done()),
        ),
      ),
    stop() {
      try {
        ctl('-m', 'immediate', 'stop');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * A TCP proxy the test controls in front of a server: `refuse()` drops every connection (a reset)
 * and stops listening, so new ones are refused, as when the host is down; `blackhole()` keeps
 * connections open but passes nothing either way, as a network partition does; `restore()` ends
 * either and forwards again.
 */
export async function startProxy(targetPort: number, targetHost = '127.0.0.1') {
  const port = await freePort();
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let mode: 'up' | 'blackhole' = 'up';
  let server: Server | undefined;
  const listen = () =>
    new Promise<void>((done) => {
      server = createServer((client) => {
        const upstream = new Socket();
        const pair = { client, upstream };
        pairs.add(pair);
        const drop = () => {
          pairs.delete(pair);
          client.destroy();
          upstream.destroy();
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        client.on('data', (chunk) => {
          if (mode === 'up') upstream.write(chunk);
        });
        upstream.on('data', (chunk) => {
          if (mode === 'up') client.write(chunk);
        });
        upstream.connect(targetPort, targetHost);
      });
      server.listen(port, '127.0.0.1', done);
    });
  await listen();
  return {
    port,
    async refuse() {
      const closing = server;
      server = undefined;
      for (const { client, upstream } of pairs) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      pairs.clear();
      await new Promise((done) => closing?.close(done));
    },
    blackhole() {
      mode = 'blackhole';
    },
    async restore() {
      if (mode === 'blackhole') {
        // What was held during the partition is gone; the connections are dead to both ends.
        for (const { client, upstream } of pairs) {
          client.resetAndDestroy();
          upstream.destroy();
        }
        pairs.clear();
        mode = 'up';
      }
      if (!server) await listen();
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise((done) => (server ? server.close(done) : done(undefined)));
    },
  };
}
