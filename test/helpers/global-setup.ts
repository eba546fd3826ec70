import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import 'vitest';
import type { TestProject } from 'vitest/node';
import { startPrivateRedis } from '../../src/lib/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One private Redis per test worker: `redisUrls[VITEST_POOL_ID - 1]` (see test-redis.ts). */
    redisUrls: string[];
  }
}

/**
 * One private redis-server per test worker. Files run in parallel, one per worker at a time, and
 * each worker's files share its own server, so a file sees only its own and earlier files' keys,
 * exactly as when the whole suite ran in one worker; tests still isolate themselves by prefix or
 * database number within it.
 */
export default async function setup(project: TestProject) {
  // The command line and `npm start` tests run dist/, as users do: build it when src/ changed.
  execFileSync(process.execPath, [resolve(import.meta.dirname, '../../scripts/build.js'), '--if-stale'], {
    stdio: 'inherit',
  });
  const workers = workerCount(project.config.maxWorkers);
  const servers = await Promise.all(Array.from({ length: workers }, () => startPrivateRedis()));
  project.provide(
    'redisUrls',
    servers.map((server) => server.url),
  );
  return async () => {
    await Promise.all(servers.map((server) => server.stop()));
  };
}

/** The configured worker count (a number, or a percentage of the cores as vitest allows). */
function workerCount(configured: number | string | undefined): number {
  if (typeof configured === 'number' && configured > 0) return Math.floor(configured);
  if (typeof configured === 'string' && configured.endsWith('%')) {
    return Math.max(1, Math.floor((availableParallelism() * Number.parseFloat(configured)) / 100));
  }
  return Math.max(1, availableParallelism());
}
