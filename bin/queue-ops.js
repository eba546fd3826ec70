#!/usr/bin/env node
// Runs the compiled command line: tsc's output in dist/, linked into two files in dist/bundle/
// (`npm run build`; `npm ci` and `npm link` build it through the `prepare` script, and nothing else
// does: not this file, not `npx queue-ops`, not `npm start`). No TypeScript
// compiler at run time, and a handful of files to load rather than hundreds: it starts in a blink.
//
// CommonJS (bin/package.json), as is the bundle's entry: Node loads a CommonJS file without its ES
// module loader, which a run would otherwise set up (and compile) for these two files alone.
const { enableCompileCache } = require('node:module');
const { join } = require('node:path');

// Node ≥ 22.1 keeps V8's compiled code on disk between runs; most of a cold start is compiling
// the modules this loads. Older Node has no such API and simply compiles them each time.
enableCompileCache?.();

// No V8 flag is set here (a smaller young generation was, once, for ~1 MB of peak RSS): a flag
// changed at run time changes V8's flag hash, and every code cache made under the old one is then
// refused, Node's own for its built-in modules included. Each `node:net`, `node:tls`, `node:crypto`…
// loaded after it was compiled from source: a tenth of a `--json status` run's CPU.

const root = join(__dirname, '..');

// A clone whose src/ changed since its build runs that build, and says so in one line: a run of
// the command line never builds.
const stale = require('./stale-build.js').staleBuildNote(root);
if (stale) process.stderr.write(stale);

try {
  require('../dist/bundle/queue-ops.cjs');
} catch (error) {
  if (error?.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes('dist/bundle/queue-ops.cjs'))
    throw error;
  process.stderr.write(`queue-ops is not built yet: run \`npm run build\` in ${root}/\n`);
  process.exitCode = 1;
}
