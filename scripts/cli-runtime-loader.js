/**
 * The command line's runtime (src/transports/cli/run.ts and everything it uses), as the bundle
 * loads it: `loadCliRuntime()` in src/transports/cli/main.ts resolves to this module in dist/bundle/ (see
 * scripts/build.js). Only the bundle uses it; tsc's dist/ still imports run.js directly.
 *
 * The runtime is one CommonJS file compiled with V8's code cache: on Node 20 an ES module cannot
 * use one, and compiling the runtime's ~1 MB of code was a sixth of every `queue-ops` run. The
 * cache sits next to it (`runtime-<hash>.cjs.cache`, the hash being the runtime's content) and is
 * written by the first run that finds none, or one this Node rejects (another version, other V8
 * flags), after that run's command, so it holds the functions the command compiled. Only a run that
 * succeeded writes it: a first run that stops at a config error compiles a third less, and a cache
 * of that made every later `status` ~14 % slower until the next build. Such a run's cache is kept
 * apart (`.cache-partial`), used only until a run that succeeds writes the real one. A cache that
 * cannot be written (a read-only install) costs nothing: the runtime is compiled from source, as
 * without one. Node ≥ 22.1 has its own compile cache (`bin/queue-ops.js` turns it on); this one
 * works on Node 20 as well.
 */
import { isAscii } from 'node:buffer';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

// The bundle's runtime, named by its content (scripts/build.js writes the name in here).
const RUNTIME = 'runtime.cjs';
const file = fileURLToPath(new URL(`./${RUNTIME}`, import.meta.url));
const cacheFile = `${file}.cache`;
const partialCacheFile = `${file}.cache-partial`;

let cachedData;
let cacheIsPartial = false;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  // None yet: this run writes it, if it succeeds. Meanwhile, a failed run's cache, if any.
  try {
    cachedData = readFileSync(partialCacheFile);
    cacheIsPartial = true;
  } catch {
    // None either.
  }
}
// ASCII (the build makes it so) is read as Latin-1, a plain copy; UTF-8 would be decoded into a
// two-byte source, twice the memory and a tenth of a `--json status` run's CPU to decode and scan.
const bytes = readFileSync(file);
const source = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
// Node's own wrapper for a CommonJS module, on the first line so the source map's lines hold.
// With `__queueOpsImport`: the runtime's `import()` of a package behind a seam (BullMQ, echarts…)
// is this module's own, since code compiled from a cache cannot import by itself (scripts/build.js).
const script = new vm.Script(
  `(function (exports, require, module, __filename, __dirname, __queueOpsImport) {${source}\n})`,
  { filename: file, cachedData },
);
if (cachedData === undefined || cacheIsPartial || script.cachedDataRejected) {
  process.once('exit', (code) => {
    const succeeded = code === 0;
    // A failed run replaces no usable cache: it writes only where there is none to use.
    if (!succeeded && cachedData !== undefined && !script.cachedDataRejected) return;
    const target = succeeded ? cacheFile : partialCacheFile;
    const next = `${target}.${process.pid}`;
    try {
      writeFileSync(next, script.createCachedData());
      renameSync(next, target);
      if (succeeded) rmSync(partialCacheFile, { force: true });
    } catch {
      rmSync(next, { force: true });
    }
  });
}
// In require.cache under its path, as a file `require()`d would be (the tests' load probe reads it).
const runtime = new Module(file);
runtime.filename = file;
const requireFromRuntime = createRequire(file);
requireFromRuntime.cache[file] = runtime;
script.runInThisContext()(
  runtime.exports,
  requireFromRuntime,
  runtime,
  file,
  dirname(file),
  (specifier) => import(specifier),
);
runtime.loaded = true;

export const { runCli, exitCodeOf, toCliJson, ExitCode } = runtime.exports;
