import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A redis-server this process started on a free loopback port. Nothing is written to disk unless
 * asked: with `persist`, an append-only file; without it, it runs snapshots-only with no save
 * point (`--save "" --appendonly no`), so only a SAVE or BGSAVE writes `dump.rdb` in `dir`, which
 * a start with that `dir` reloads (a Redis that crashes and comes back older than it was).
 */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  /** The redis-server process id (tests SIGSTOP it to make a Redis that hangs). */
  readonly pid: number | undefined;
  /** Where it keeps its append-only file (with `persist`) or its snapshot: start it again there to reload it. */
  readonly dir: string;
  stop(): Promise<void>;
  /** SIGKILL, as a crash or the OOM killer would: no shutdown, the directory is kept. */
  kill(): Promise<void>;
}

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Runs `binary` (redis-server by default) with `args` and resolves once its output says `ready`
 * ("Ready to accept connections"), within 10 s; rejects with what it printed otherwise. The
 * child's exit is then the caller's to watch.
 */
export async function spawnRedis(
  args: string[],
  options: { binary?: string; ready?: RegExp } = {},
): Promise<ChildProcess> {
  const binary = options.binary ?? 'redis-server';
  const ready = options.ready ?? /Ready to accept connections/;
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    output += String(chunk);
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${binary} did not start within 10s:\n${output}`)),
      10_000,
    );
    const onData = () => {
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(
        new Error(
          `could not run ${binary} (${error.message}); install Debian's redis-server package or set REDIS_URL`,
        ),
      );
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${binary} exited with ${code}:\n${output}`));
    });
  });
  child.removeAllListeners('exit');
  return child;
}

/**
 * The arguments of a private redis-server on loopback at `port`, its files in `dir`: no snapshots,
 * and an AOF fsynced at every write only when it is to persist.
 */
export function privateRedisArgs(port: number, dir: string, persist = false): string[] {
  return ['--port', String(port), ...loopbackRedisArgs(persist), '--dir', dir];
}

/**
 * On loopback only, with no snapshots; an AOF fsynced at every write only when it is to persist.
 * What every private redis-server starts with, whatever else it is (a cluster node, TLS only).
 */
export function loopbackRedisArgs(persist = false): string[] {
  const persistence = persist ? ['yes', '--appendfsync', 'always'] : ['no'];
  return ['--bind', '127.0.0.1', '--save', '', '--appendonly', ...persistence];
}

/**
 * Starts a private redis-server (used by the tests, the demo and the benchmarks) so that nothing
 * ever touches the machine's shared Redis on 6379.
 */
export async function startPrivateRedis(
  options: {
    binary?: string;
    /** A port of an earlier private Redis, to start it again where its clients reconnect. */
    port?: number;
    /**
     * Keep every write in an append-only file before it is answered (`appendfsync always`), so a
     * Redis killed and started again (with the same `dir`) holds everything it acknowledged.
     */
    persist?: boolean;
    /** The directory of an earlier private Redis (its `dir`), to reload what it persisted. */
    dir?: string;
  } = {},
): Promise<PrivateRedis> {
  const binary = options.binary ?? 'redis-server';
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'queue-ops-redis-'));
  const child = await spawnRedis(privateRedisArgs(port, dir, options.persist === true), { binary });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid,
    dir,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
