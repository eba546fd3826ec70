import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * A first run must be fast, so a build is never hidden in a run: only `npm ci` / `npm install` / `npm link` / `npm run build` build. A run of the
 * command line (also as `npx queue-ops`, whose install of the clone runs `prepare`) or `npm start`
 * never does; a stale dist/ gets one line naming `npm run build`.
 */
describe('start fast: nothing but a build builds', () => {
  const temps: string[] = [];
  afterEach(() => {
    for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('`prepare` run by `npm exec` (npx queue-ops) leaves dist/ as it is', () => {
    const stamp = join(ROOT, 'dist', '.built');
    const before = statSync(stamp).mtimeMs;
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.js')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', npm_lifecycle_event: 'prepare', npm_command: 'exec' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status).toBe(0);
    expect(statSync(stamp).mtimeMs).toBe(before);
    expect(readdirSync(ROOT).filter((name) => name.startsWith('.dist-'))).toEqual([]);
  });

  /** A clone of bin/ and src/ whose dist/ is this one's (a link), with src/ changed or not since. */
  function clone(srcChanged: boolean): string {
    const dir = mkdtempSync(join(tmpdir(), 'queue-ops-stale-'));
    temps.push(dir);
    mkdirSync(join(dir, 'bin'));
    for (const file of ['queue-ops.js', 'stale-build.js'])
      copyFileSync(join(ROOT, 'bin', file), join(dir, 'bin', file));
    symlinkSync(join(ROOT, 'dist'), join(dir, 'dist'));
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'main.ts'), '// changed\n');
    const built = statSync(join(ROOT, 'dist', '.built')).mtime;
    const at = new Date(built.getTime() + (srcChanged ? 60_000 : -60_000));
    utimesSync(join(dir, 'src', 'main.ts'), at, at);
    utimesSync(join(dir, 'src'), at, at);
    writeConfigFile(dir, { systems: [bullmqSystem('pushizo', 'redis://127.0.0.1:1')] });
    return dir;
  }

  const cli = (dir: string) =>
    spawnSync(process.execPath, [join(dir, 'bin', 'queue-ops.js'), '--json', 'help'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('a dist/ older than src/ runs as built and says so in one line naming `npm run build`', () => {
    const stale = cli(clone(true));
    expect(stale.status).toBe(0);
    expect(JSON.parse(stale.stdout).ok).toBe(true);
    const lines = stale.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('src/ changed after the last build');
    expect(lines[0]).toContain('Run `npm run build`');
    // Nothing was built for it.
    expect(readdirSync(ROOT).filter((name) => name.startsWith('.dist-'))).toEqual([]);

    const fresh = cli(clone(false));
    expect(fresh.status).toBe(0);
    expect(fresh.stderr).toBe('');
  });

  it('`npm start` and the command line run dist/ as it is: no build in their scripts', () => {
    const pkg = JSON.parse(
      execFileSync(
        process.execPath,
        ['-e', 'process.stdout.write(require("fs").readFileSync("package.json","utf8"))'],
        { cwd: ROOT, encoding: 'utf8' },
      ),
    );
    expect(pkg.scripts.start).not.toMatch(/build|tsc|tsx/);
    expect(pkg.scripts.cli).toBe('node bin/queue-ops.js');
  });
});
