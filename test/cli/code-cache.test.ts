import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BUNDLE = join(ROOT, 'dist', 'bundle');

/**
 * The command line's runtime is compiled with a V8 code cache that the first run writes (see
 * scripts/cli-runtime-loader.js). A first run that stops at a config error compiles much less than
 * a `status`; its cache must not be the one every later run uses. Run on a copy of the bundle
 * (inside dist/, so its packages resolve from the project's node_modules), so that no other test's
 * runs write the cache these look at.
 */
describe("the runtime's code cache", () => {
  let dir: string;
  let runtime: string;
  // A config that loads, for a command that needs no Redis (`alerts` reads the store).
  const home = mkdtempSync(join(tmpdir(), 'queue-ops-code-cache-'));
  beforeAll(() => {
    writeConfigFile(home, { systems: [bullmqSystem('pushizo', 'redis://127.0.0.1:1')] });
    dir = mkdtempSync(join(ROOT, 'dist', '.code-cache-test-'));
    for (const name of readdirSync(BUNDLE))
      if (name === 'queue-ops.cjs' || name === 'sources.json' || /^runtime-[^.]+\.cjs$/.test(name))
        copyFileSync(join(BUNDLE, name), join(dir, name));
    runtime = join(dir, readdirSync(dir).find((name) => /^runtime-[^.]+\.cjs$/.test(name))!);
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  const run = (...args: string[]) =>
    spawnSync(process.execPath, [join(dir, 'queue-ops.cjs'), ...args], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('is not written by a run that fails: that run keeps its own apart', () => {
    const failed = run('--config', 'no-such-config.yml', '--json', 'status');
    expect(failed.status).not.toBe(0);
    expect(existsSync(`${runtime}.cache`)).toBe(false);
    expect(existsSync(`${runtime}.cache-partial`)).toBe(true);
  });

  it('a failed run after it leaves the kept one as it was', () => {
    const before = statSync(`${runtime}.cache-partial`).mtimeMs;
    expect(run('--config', 'no-such-config.yml', '--json', 'status').status).not.toBe(0);
    expect(statSync(`${runtime}.cache-partial`).mtimeMs).toBe(before);
    expect(existsSync(`${runtime}.cache`)).toBe(false);
  });

  it('is written by the first run that succeeds, which drops the failed run’s', () => {
    const ok = run('--json', 'alerts');
    expect([ok.status, ok.stderr]).toEqual([0, '']);
    expect(existsSync(`${runtime}.cache`)).toBe(true);
    expect(existsSync(`${runtime}.cache-partial`)).toBe(false);
  });
});
