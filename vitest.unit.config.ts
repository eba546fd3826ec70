import { defineConfig } from 'vitest/config';
import { UNIT_TESTS } from './test/unit-tier.js';

/**
 * `npm run test:unit`: the tests that need no Redis, process or network (test/unit-tier.ts), in
 * seconds. No global setup: no private redis-servers are started and dist/ is not built, so a
 * file that asks for the worker's Redis (`testRedisUrl`) fails here at once.
 */
export default defineConfig({
  test: {
    include: [...UNIT_TESTS],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
