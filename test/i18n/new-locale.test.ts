import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A third locale is one folder of strings plus one line in src/i18n/locales.ts. This test adds a
 * made-up one, `xx` (English words marked `[xx]`), to a copy of the source exactly that way, and
 * shows that it type-checks and that the command line speaks it: `--help`, the config's
 * `locale: xx`, an answer from the runtime. Nothing else in the copy is touched.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

function run(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      command,
      args,
      { cwd, timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) =>
        done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('a made-up locale added as one folder and one registry line', () => {
  let copy: string;

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'queue-ops-locale-'));
    cpSync(join(ROOT, 'src'), join(copy, 'src'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    // The folder: English's files, with the words a user sees in the command line marked.
    const folder = join(copy, 'src/i18n/xx');
    cpSync(join(copy, 'src/i18n/en'), folder, { recursive: true });
    for (const file of readdirSync(folder)) {
      const path = join(folder, file);
      const text = readFileSync(path, 'utf8')
        .replace("'Usage: queue-ops", "'[xx] Usage: queue-ops")
        .replace('is not a /queue command.', 'is not a /queue command [xx].');
      writeFileSync(path, text);
    }
    // The one line (and its import).
    const registry = join(copy, 'src/i18n/locales.ts');
    writeFileSync(
      registry,
      readFileSync(registry, 'utf8')
        .replace(
          "import { tr } from './tr/index.js';",
          "import { tr } from './tr/index.js';\nimport { en as xx } from './xx/index.js';",
        )
        .replace(
          'export const LOCALES = {',
          "export const LOCALES = {\n  xx: { catalog: xx, intl: 'en-US', dates: enUS, inWords: false, slack: /^xx(-XX)?$/i },",
        ),
    );
    writeFileSync(
      join(copy, 'queue-ops.yml'),
      ['locale: xx', 'systems:', '  - name: hs', '    type: bullmq', '    redis: redis://127.0.0.1:1'].join(
        '\n',
      ),
    );
  });

  afterAll(() => {
    rmSync(copy, { recursive: true, force: true });
  });

  it('type-checks: the new folder fits the catalog, and the registry takes the line', async () => {
    const checked = await run(
      process.execPath,
      [
        TSC,
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--target',
        'ES2022',
        '--module',
        'NodeNext',
        '--moduleResolution',
        'NodeNext',
        '--types',
        'node',
        'src/i18n/index.ts',
        'src/config/load.ts',
      ],
      copy,
    );
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.code).toBe(0);
  }, 120_000);

  it('--help answers in it when the config says locale: xx', async () => {
    const help = await run(
      process.execPath,
      ['--import', 'tsx', 'src/transports/cli/main.ts', '--config', 'queue-ops.yml', '--help'],
      copy,
    );
    expect(help.stdout).toMatch(/^\[xx\] Usage: queue-ops/);
  }, 120_000);

  it('the config accepts locale: xx and the runtime answers in it', async () => {
    const answer = await run(
      process.execPath,
      ['--import', 'tsx', 'src/transports/cli/main.ts', '--config', 'queue-ops.yml', 'nosuchverb'],
      copy,
    );
    expect(answer.stderr).not.toMatch(/locale/);
    expect(answer.stdout + answer.stderr).toContain('is not a /queue command [xx].');
  }, 120_000);

  it('the config still refuses a locale nobody added, naming the valid ones', async () => {
    writeFileSync(
      join(copy, 'other.yml'),
      ['locale: zz', 'systems:', '  - name: hs', '    type: bullmq', '    redis: redis://127.0.0.1:1'].join(
        '\n',
      ),
    );
    const refused = await run(
      process.execPath,
      ['--import', 'tsx', 'src/transports/cli/main.ts', '--config', 'other.yml', 'status'],
      copy,
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/locale/);
    expect(refused.stderr).toMatch(/xx/);
  }, 120_000);
});
