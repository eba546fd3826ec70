import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import 'vitest';
import type { TestProject } from 'vitest/node';
import { startPrivateRedis } from '../../src/lib/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/** One private redis-server for the whole run; tests isolate themselves by prefix or DB number. */
export default async function setup(project: TestProject) {
  // The command line and `npm start` tests run dist/, as users do: build it when src/ changed.
  execFileSync(process.execPath, [resolve(import.meta.dirname, '../../scripts/build.js'), '--if-stale'], {
    stdio: 'inherit',
  });
  const redis = await startPrivateRedis();
  project.provide('redisUrl', redis.url);
  return async () => {
    await redis.stop();
  };
}
