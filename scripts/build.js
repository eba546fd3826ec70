#!/usr/bin/env node
/**
 * `npm run build`: src/ → dist/ with tsc (ES modules and source maps, tsconfig.build.json), then
 * the files tsc does not emit but the code reads at run time (the demo's Celery app), copied next
 * to the modules that look for them. Then the command line, linked from tsc's output into a few
 * files by esbuild (dist/bundle/, what `bin/queue-ops.js` runs): see `bundleCli` below.
 *
 * First it writes the verbs' generated modules from src/commands/*.ts (scripts/gen-verbs.js).
 * It builds into a fresh directory and swaps it for dist/ at the end: a deleted source never
 * lingers, and a `queue-ops` that cron starts during the build still finds a whole dist/.
 *
 * As `prepare`, it builds under `npm ci` / `npm install` / `npm link`, never under `npm exec`
 * (`npx queue-ops`), which would rebuild the clone for one command.
 *
 * `--if-stale` (the tests' global setup, the bench) builds only when a source or build setting is
 * newer than the last build, so running one test file does not pay for a full compile.
 */
import { isAscii } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeVerbFiles } from './gen-verbs.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const stamp = join(dist, '.built');
const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts'];

function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

// `npx queue-ops` in a clone has npm install the clone into its own cache, and npm packs a
// directory by running its `prepare` first: a whole build (15 s, swapping dist/ under anything
// running) for one command. Builds come from `npm ci`, `npm install`, `npm link` and
// `npm run build`; a run of the command line never builds (it says when dist/ is stale).
if (process.env.npm_lifecycle_event === 'prepare' && process.env.npm_command === 'exec') process.exit(0);

if (process.argv.includes('--if-stale') && existsSync(stamp)) {
  const built = statSync(stamp).mtimeMs;
  if (inputs.every((input) => newest(join(root, input)) <= built)) process.exit(0);
}

// The verbs' generated modules first (scripts/gen-verbs.js): tsc compiles them with the rest.
// An unchanged one is not written, so it does not make the next `--if-stale` build again.
for (const file of writeVerbFiles(root)) process.stdout.write(`build: wrote ${file} (npm run gen:verbs)\n`);

const next = join(root, `.dist-${process.pid}`);
const old = join(root, `.dist-old-${process.pid}`);
rmSync(next, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(
  process.execPath,
  [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', next],
  { stdio: 'inherit' },
);
if (compiled.status !== 0) {
  rmSync(next, { recursive: true, force: true });
  process.stderr.write('build: tsc failed; dist/ is left as it was\n');
  process.exit(compiled.status ?? 1);
}
cpSync(join(root, 'src'), next, {
  recursive: true,
  filter: (path) =>
    !path.includes('__pycache__') && (statSync(path).isDirectory() || !/\.[cm]?ts$/.test(path)),
});
try {
  await bundleCli(next);
} catch (error) {
  rmSync(next, { recursive: true, force: true });
  process.stderr.write(
    `build: bundling the command line failed (${error.message}); dist/ is left as it was\n`,
  );
  process.exit(1);
}
writeFileSync(join(next, '.built'), `${new Date().toISOString()}\n`);
if (existsSync(dist)) renameSync(dist, old);
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });

/**
 * The command line, linked by esbuild from the modules tsc just wrote, into dist/bundle/. A cold
 * start of `queue-ops` was mostly Node finding, reading and compiling about 480 files (our modules,
 * zod, yaml, ioredis, pino…) one by one; linked, it reads a handful. The code is tsc's, unchanged;
 * the source maps lead back to src/.
 *
 * Two parts, along the command line's first seam (`loadCliRuntime()` in src/transports/cli/main.ts):
 *   - `queue-ops.cjs`, one CommonJS file: the entry point, all that `--help` and a bad flag run
 *     (the loader and the Turkish words are in it, run only when their `import()` is);
 *   - `runtime-<hash>.cjs`, everything `loadCliRuntime()` brings in (config, store, backends, commands),
 *     one CommonJS file that scripts/cli-runtime-loader.js compiles with V8's code cache.
 * The other seams stay seams: our own modules behind them are in the runtime but run only when
 * their `import()` does (each verb's command, the purge engine and archive, a store driver…),
 * and the heavy libraries behind them (pg, BullMQ, Bolt, echarts…) stay outside the bundle,
 * loaded from node_modules only by the verbs and configs that need them; better-sqlite3's
 * JavaScript is linked in, its native addon is not.
 *
 * `sources.json` says which modules each file of the bundle holds, so that a test can tell what a
 * run loaded (test/cli/lazy-loading.test.ts).
 */
async function bundleCli(dir) {
  const outdir = join(dir, 'bundle');
  const shared = {
    absWorkingDir: root,
    outdir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    // Without comments and blanks: less for V8 to read, and the text stays one-byte (a single
    // non-ASCII character in a comment would double the memory of a whole chunk's source). Names
    // are kept, so stack traces read as the code does.
    minifyWhitespace: true,
    minifySyntax: true,
    metafile: true,
    logLevel: 'warning',
    // Behind the seams (src/lib/lazy.ts, and our own modules' `load…()`) or never on the command
    // line's path; native addons and packages that read their own files (BullMQ's Lua scripts)
    // must stay where they are anyway.
    external: [
      'better-sqlite3',
      'pg',
      'bullmq',
      'bullmq5',
      '@slack/*',
      '@kubernetes/client-node',
      'echarts',
      '@resvg/resvg-js',
      'prom-client',
    ],
  };
  // Both files are CommonJS, which has no `import.meta`: `import.meta.url` is the file's own URL,
  // and packages look for their own files next to themselves (see `ownDirname`).
  const commonJs = {
    format: 'cjs',
    outExtension: { '.js': '.cjs' },
    banner: {
      js: [
        "const __queueOpsPath = (path) => require('node:path').join(__dirname, path);",
        "const __queueOpsUrl = require('node:url').pathToFileURL(__filename).href;",
      ].join(' '),
    },
    define: { 'import.meta.url': '__queueOpsUrl' },
  };
  const runtime = await build({
    ...shared,
    // better-sqlite3's JavaScript is linked in (compiled from the runtime's code cache, not from
    // its dozen files on every run); its native addon stays in node_modules, loaded by path when a
    // SQLite store opens (src/store/sqlite.ts), and never with a PostgreSQL one.
    external: shared.external.filter((name) => name !== 'better-sqlite3'),
    entryPoints: { runtime: join(dir, 'transports', 'cli', 'run.js') },
    // Named by its content: the code cache next to it (see the loader) can only ever be this
    // file's, even one written by a run that started before a rebuild swapped dist/.
    entryNames: '[name]-[hash]',
    // Our modules' `createRequire(import.meta.url)` resolves from the runtime file, which sits in
    // the same node_modules tree as dist/ does.
    ...commonJs,
    plugins: [
      absentPackages(),
      lazyBuiltins(),
      debugWithoutStderrStream(),
      ownDirname(outdir),
      importThroughLoader(dir),
      ioredisCommandsInBulk(),
      asciiRegexps(),
    ],
  });
  const runtimeFile = Object.keys(runtime.metafile.outputs).find((file) => file.endsWith('.cjs'));
  // Code compiled from a cache cannot call import() (see importThroughLoader): none may be left.
  const dynamic = runtime.metafile.outputs[runtimeFile].imports.filter((i) => i.kind === 'dynamic-import');
  if (dynamic.length > 0) {
    throw new Error(`${runtimeFile} still imports ${dynamic.map((i) => i.path).join(', ')} with import()`);
  }
  // One with a computed specifier does not show in the metafile; the text may still hold one
  // inside a string, so this one only warns.
  const runtimeText = readFileSync(join(root, runtimeFile));
  if (/\bimport\(/.test(runtimeText.toString('latin1'))) {
    process.stderr.write(`build: ${runtimeFile} may still call import(); see importThroughLoader\n`);
  }
  // The loader reads an ASCII runtime as Latin-1, a copy; anything else is decoded as UTF-8 into
  // a source of twice the size (see asciiRegexps).
  if (!isAscii(runtimeText)) process.stderr.write(`build: ${runtimeFile} is not ASCII; it loads slower\n`);
  const loader = join(root, 'scripts', 'cli-runtime-loader.js');
  const entry = await build({
    ...shared,
    entryPoints: { 'queue-ops': join(dir, 'transports', 'cli', 'main.js') },
    // One file: the loader and the Turkish words behind their `import()` run only when it is
    // called, and each file more was one more ES module for Node to resolve and load per run.
    // CommonJS, as bin/queue-ops.js is: no ES module loader to set up for a run. The loader finds
    // the runtime beside it by `import.meta.url`.
    ...commonJs,
    plugins: [
      ownDirname(outdir),
      {
        name: 'cli-runtime',
        setup(build) {
          // `loadCliRuntime()`: the entry point's `import('./run.js')`.
          build.onResolve({ filter: /^\.\/run\.js$/ }, (args) =>
            args.kind === 'dynamic-import' && args.importer.endsWith(join('transports', 'cli', 'main.js'))
              ? { path: loader }
              : undefined,
          );
          // The loader learns the runtime's file name here.
          build.onLoad({ filter: /cli-runtime-loader\.js$/ }, (args) => ({
            contents: readFileSync(args.path, 'utf8').replace(
              "const RUNTIME = 'runtime.cjs';",
              `const RUNTIME = ${JSON.stringify(basename(runtimeFile))};`,
            ),
            loader: 'js',
          }));
        },
      },
    ],
  });
  const here = relative(root, dir);
  const named = (input) => (input.startsWith(`${here}/`) ? `dist/${input.slice(here.length + 1)}` : input);
  // The loader puts the runtime in require.cache, where a test's probe sees it loaded.
  const sources = {};
  for (const result of [runtime, entry]) {
    for (const [file, output] of Object.entries(result.metafile.outputs)) {
      if (file.endsWith('.map')) continue;
      sources[basename(file)] = Object.keys(output.inputs).map(named).sort();
    }
  }
  writeFileSync(join(outdir, 'sources.json'), `${JSON.stringify(sources, null, 1)}\n`);
}

/**
 * Node's `assert` and `tls` as required by the packages in the runtime (redis-errors, sonic-boom,
 * thread-stream; ioredis' connectors), loaded on first use instead of when the package loads:
 * `assert` is only called on a broken invariant, `tls` only for `rediss://`. Loading `assert`
 * also builds `process.stderr` (a socket when stderr is a pipe), and `tls` its five modules:
 * every run paid for both. The same functions and properties, from the same modules.
 */
function lazyBuiltins() {
  const lazy = new Set(['assert', 'node:assert', 'tls', 'node:tls']);
  return {
    name: 'lazy-builtins',
    setup(build) {
      build.onResolve({ filter: /^(node:)?(assert|tls)$/ }, (args) =>
        args.kind === 'require-call' && lazy.has(args.path) && args.importer.includes('/node_modules/')
          ? { path: args.path.replace(/^node:/, ''), namespace: 'lazy-builtin' }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
        contents: [
          'let real;',
          `const load = () => (real ??= require(${JSON.stringify(`node:${args.path}`)}));`,
          // A function target, so that `assert(...)` calls through; every property is the module's own.
          'module.exports = new Proxy(function lazyBuiltin() {}, {',
          '  apply: (_, self, args) => Reflect.apply(load(), self, args),',
          '  construct: (_, args) => Reflect.construct(load(), args),',
          '  get: (_, key) => load()[key],',
          '  has: (_, key) => key in load(),',
          '});',
        ].join('\n'),
        loader: 'js',
      }));
    },
  };
}

/**
 * debug (ioredis' logger) asks `tty.isatty(process.stderr.fd)` for every logger it makes: that
 * builds `process.stderr`, a socket when stderr is a pipe, in every run that writes nothing to it.
 * Its fd is always 2. If a newer debug no longer has the line, the file is bundled untouched.
 */
function debugWithoutStderrStream() {
  return {
    name: 'debug-without-stderr-stream',
    setup(build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/]debug[\\/]src[\\/]node\.js$/ }, (args) => {
        const contents = readFileSync(args.path, 'utf8');
        const rewritten = contents.replace('tty.isatty(process.stderr.fd)', 'tty.isatty(2)');
        return rewritten === contents ? undefined : { contents: rewritten, loader: 'js' };
      });
    },
  };
}

/**
 * A package's `require()` of a package that is not installed (debug's optional `supports-color`),
 * as a module that throws what Node would: the same answer as at run time, since the bundle
 * resolves from the same node_modules, without Node's search of every node_modules folder above
 * it for a file that is not there (a few milliseconds of every run).
 */
function absentPackages() {
  return {
    name: 'absent-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.kind !== 'require-call' || args.pluginData === 'absent-packages') return undefined;
        if (!args.importer.includes('/node_modules/')) return undefined;
        const found = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: 'absent-packages',
        });
        return found.errors.length > 0 ? { path: args.path, namespace: 'absent-package' } : undefined;
      });
      build.onLoad({ filter: /.*/, namespace: 'absent-package' }, (args) => ({
        contents: `throw Object.assign(new Error(${JSON.stringify(`Cannot find module '${args.path}'`)}), { code: 'MODULE_NOT_FOUND' });`,
        loader: 'js',
      }));
    },
  };
}

/**
 * The non-ASCII characters of regular expression literals as `\u` escapes, which match the same.
 * esbuild escapes them in strings and templates but leaves them in regexes (date-fns' Turkish
 * month names), and one such character makes the whole runtime UTF-8 that the loader
 * must decode into a source twice its size; an ASCII file is read as Latin-1, a plain copy. Last
 * of the plugins: a file another one rewrites is left as it is (the build then says it is not ASCII).
 */
function asciiRegexps() {
  const ts = createRequire(import.meta.url)('typescript');
  const escapeNonAscii = (text) =>
    text.replace(/(\\*)([^\x00-\x7f])/g, (_, slashes, char) => {
      // `\ö` (an identity escape) is `ö`: its backslash goes, or it would escape the new one.
      const kept = slashes.length % 2 === 1 ? slashes.slice(1) : slashes;
      return `${kept}\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
    });
  return {
    name: 'ascii-regexps',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?js$/ }, (args) => {
        const contents = readFileSync(args.path, 'utf8');
        if (!/[^\x00-\x7f]/.test(contents)) return undefined;
        const file = ts.createSourceFile(
          args.path,
          contents,
          ts.ScriptTarget.Latest,
          false,
          ts.ScriptKind.JS,
        );
        const literals = [];
        const visit = (node) => {
          if (node.kind === ts.SyntaxKind.RegularExpressionLiteral)
            literals.push([node.getStart(file), node.end]);
          ts.forEachChild(node, visit);
        };
        visit(file);
        let out = '';
        let at = 0;
        for (const [start, end] of literals) {
          out += contents.slice(at, start) + escapeNonAscii(contents.slice(start, end));
          at = end;
        }
        out += contents.slice(at);
        return out === contents ? undefined : { contents: out, loader: 'js' };
      });
    },
  };
}

/**
 * `import()` of a package (the heavy libraries behind the seams) in the runtime becomes a call of
 * `__queueOpsImport`, which scripts/cli-runtime-loader.js hands to the runtime: an ES module's own
 * `import()`. Code compiled by `vm.Script` from a code cache cannot call `import()` itself on
 * Node 20. Our own modules' `import('./…')` are linked into the runtime by esbuild as before.
 */
function importThroughLoader(dir) {
  return {
    name: 'import-through-loader',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(`${dir}/`)) return undefined;
        const contents = readFileSync(args.path, 'utf8');
        const rewritten = contents.replace(/\bimport\((?!\s*['"]\.)/g, '__queueOpsImport(');
        return rewritten === contents ? undefined : { contents: rewritten, loader: 'js' };
      });
    },
  };
}

/**
 * ioredis gives its `Commander.prototype` two methods per Redis command, one by one: about 480
 * properties added to an object V8 keeps in fast mode, each addition copying the descriptors so
 * far. That is ~5 MB of garbage and ~30 ms (a tenth of a `--json status` run) spent before any
 * command is sent. Put in dictionary mode first (adding two properties and deleting the first does
 * it; the second goes after the loop), the same loop costs ~1 ms; V8 makes the prototype fast
 * again once objects use it. Nothing else changes: the same methods, in the same order. If a
 * newer ioredis no longer has the loop as written, the file is bundled untouched.
 */
function ioredisCommandsInBulk() {
  const loop = 'commands.forEach(function (commandName) {';
  return {
    name: 'ioredis-commands-in-bulk',
    setup(build) {
      build.onLoad(
        { filter: /[\\/]node_modules[\\/]ioredis[\\/]built[\\/]utils[\\/]Commander\.js$/ },
        (args) => {
          const contents = readFileSync(args.path, 'utf8');
          const at = contents.indexOf(loop);
          const end = at === -1 ? -1 : contents.indexOf('\n});\n', at);
          if (end === -1) return undefined;
          const before =
            'Commander.prototype.__queueOpsA = 0; Commander.prototype.__queueOpsB = 0; delete Commander.prototype.__queueOpsA; ';
          const after = ' delete Commander.prototype.__queueOpsB;';
          const close = end + '\n});'.length;
          return {
            contents: `${contents.slice(0, at)}${before}${contents.slice(at, close)}${after}${contents.slice(close)}`,
            loader: 'js',
          };
        },
      );
    },
  };
}

/**
 * A CommonJS package's `__dirname` and `__filename` inside the bundle: still its own folder in
 * node_modules, as a path relative to the bundle (so the clone can move). ioredis reads its
 * version from `__dirname/../../package.json` for `CLIENT SETINFO`, pino finds its worker files
 * there; an ES module has no `__dirname` of its own, and the bundle's would be the wrong one.
 * Declared on the module's first line, so source map lines are unchanged.
 */
function ownDirname(outdir) {
  return {
    name: 'own-dirname',
    setup(build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/].*\.c?js$/ }, (args) => {
        const contents = readFileSync(args.path, 'utf8');
        if (!/\b__(dirname|filename)\b/.test(contents)) return undefined;
        const path = (to) => JSON.stringify(relative(outdir, to).split('\\').join('/'));
        const declare = `var __dirname = __queueOpsPath(${path(dirname(args.path))}), __filename = __queueOpsPath(${path(args.path)});`;
        return { contents: `${declare} ${contents}`, loader: 'js' };
      });
    },
  };
}
