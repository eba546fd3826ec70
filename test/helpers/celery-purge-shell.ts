import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { type PrivateRedis, startPrivateRedis } from '../../src/lib/redis-server.js';
import { runCliInProcess, tempDir } from './cli-run.js';
import { celerySystem, writeConfigFile } from './config-file.js';
import { twoAdminsPurgeConfig } from './purge-config.js';

/** A Celery system `zeus` on a Redis of its own, and a shell where Bob asks and Erin approves. */
export interface CeleryPurgeShell {
  readonly server: PrivateRedis;
  readonly redis: Redis;
  /** The command line, as `user`, with `--json`. */
  as(user: string, ...words: string[]): ReturnType<typeof runCliInProcess>;
}

/**
 * Registers the describe block's set-up and tear-down: a private redis-server (the tests read whole
 * keyspaces, so no other file shares it), a config of two admins with `queue` on it, a temp dir.
 */
export function celeryPurgeShell(label: string, queue: string, inspectTimeoutMs: number): CeleryPurgeShell {
  let server: PrivateRedis | undefined;
  let redis: Redis | undefined;
  let tmp: ReturnType<typeof tempDir> | undefined;
  let config = '';
  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.url);
    tmp = tempDir(label);
    config = writeConfigFile(
      tmp.dir,
      twoAdminsPurgeConfig(
        tmp.dir,
        celerySystem('zeus', `${server.url}/0`, { queues: [queue], inspectTimeoutMs }),
      ),
    );
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
    tmp?.remove();
  });
  return {
    get server() {
      if (!server) throw new Error('celeryPurgeShell: used before its beforeAll ran');
      return server;
    },
    get redis() {
      if (!redis) throw new Error('celeryPurgeShell: used before its beforeAll ran');
      return redis;
    },
    as: (user, ...words) => runCliInProcess(['--config', config, '--user', user, '--json', ...words]),
  };
}
