#!/usr/bin/env node
// Runs the compiled command line in dist/ (`npm run build`; `npm ci` and `npm link` build it
// through the `prepare` script). No TypeScript compiler at run time: it starts in a blink.
import module from 'node:module';

// Node ≥ 22.1 keeps V8's compiled code on disk between runs; most of a cold start is compiling
// the modules this loads. Older Node has no such API and simply compiles them each time.
module.enableCompileCache?.();

try {
  await import('../dist/transports/cli/main.js');
} catch (error) {
  if (
    error?.code !== 'ERR_MODULE_NOT_FOUND' ||
    !String(error.message).includes('dist/transports/cli/main.js')
  )
    throw error;
  const root = new URL('..', import.meta.url).pathname;
  process.stderr.write(`queue-ops is not built yet: run \`npm run build\` in ${root}\n`);
  process.exitCode = 1;
}
