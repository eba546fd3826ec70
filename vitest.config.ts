import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Files share their worker's process (and its loaded modules) rather than a fresh process
    // each: starting one and importing bullmq, bolt and the app again cost 2-3 s a file, 214
    // files over three workers about 70 s of the suite (469 s -> 398 s on 2 cores). Each file
    // still sets up and tears down what it uses (Redis prefixes, temp dirs, real timers).
    isolate: false,
    // Most files wait on Redis, a Celery worker or a child process rather than on the CPU, so
    // three run at once on two cores. Each worker has a private Redis of its own (global-setup.ts).
    maxWorkers: 3,
  },
});
