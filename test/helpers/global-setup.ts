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
  const redis = await startPrivateRedis();
  project.provide('redisUrl', redis.url);
  return async () => {
    await redis.stop();
  };
}
