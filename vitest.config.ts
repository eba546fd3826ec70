import { defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/helpers/slow-first-sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most files wait on Redis, a Celery worker or a child process rather than on the CPU, so
    // three run at once on two cores. Each worker has a private Redis of its own (global-setup.ts).
    maxWorkers: 3,
    // The longest files start first (a clean clone has no timings for vitest to order by).
    sequence: { sequencer: SlowFirstSequencer },
  },
});
