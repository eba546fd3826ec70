#!/usr/bin/env node
/**
 * `npm run build`: src/ → dist/ with tsc (ES modules and source maps, tsconfig.build.json), then
 * the files tsc does not emit but the code reads at run time (the demo's Celery app), copied next
 * to the modules that look for them.
 *
 * It builds into a fresh directory and swaps it for dist/ at the end: a deleted source never
 * lingers, and a `queue-ops` that cron starts during the build still finds a whole dist/.
 *
 * `--if-stale` (the tests' global setup, the bench) builds only when a source or build setting is
 * newer than the last build, so running one test file does not pay for a full compile.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const stamp = join(dist, '.built');
const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/build.js'];

function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

if (process.argv.includes('--if-stale') && existsSync(stamp)) {
  const built = statSync(stamp).mtimeMs;
  if (inputs.every((input) => newest(join(root, input)) <= built)) process.exit(0);
}

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
writeFileSync(join(next, '.built'), `${new Date().toISOString()}\n`);
if (existsSync(dist)) renameSync(dist, old);
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
