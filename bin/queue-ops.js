#!/usr/bin/env node
// Runs the compiled command line: tsc's output in dist/, linked into a few files in dist/bundle/
// (`npm run build`; `npm ci` and `npm link` build it through the `prepare` script, and nothing else
// does: not this file, not `npx queue-ops`, not `npm start`). No TypeScript
// compiler at run time, and a handful of files to load rather than hundreds: it starts in a blink.
import module from 'node:module';
import v8 from 'node:v8';

// Node ≥ 22.1 keeps V8's compiled code on disk between runs; most of a cold start is compiling
// the modules this loads. Older Node has no such API and simply compiles them each time.
module.enableCompileCache?.();

// A command line lives half a second: keep V8's young generation at its starting size rather than
// growing it for a throughput it never needs (about 8 MB less peak RSS, no measurable time). The
// flag is read whenever the young generation would grow, so setting it here takes effect; only on
// the V8 versions known to have it (Node 20–24), since V8 prints an error for an unknown flag.
const v8Major = Number(process.versions.v8.split('.')[0]);
if (v8Major >= 11 && v8Major <= 13) v8.setFlagsFromString('--semi-space-growth-factor=1');

// A clone whose src/ changed since its build runs that build, and says so in one line: a run of
// the command line never builds.
const { staleBuildNote } = await import('./stale-build.js');
const stale = staleBuildNote(new URL('..', import.meta.url).pathname);
if (stale) process.stderr.write(stale);

try {
  await import('../dist/bundle/queue-ops.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('dist/bundle/queue-ops.js'))
    throw error;
  const root = new URL('..', import.meta.url).pathname;
  process.stderr.write(`queue-ops is not built yet: run \`npm run build\` in ${root}\n`);
  process.exitCode = 1;
}
