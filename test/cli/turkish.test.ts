import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { peekLocale } from '../../src/config/locale-peek.js';
import type { ConfigInput } from '../../src/config/schema.js';
import { isOpsError } from '../../src/errors.js';
import { runCli } from '../../src/transports/cli/run.js';
import { tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, configYaml, envRef } from '../helpers/config-file.js';

/**
 * `locale: tr` reaches the command line's answers that come before there is a valid config:
 * `--help`, a wrong option, and the config's own problems (its framing, queue-ops' wording and
 * zod's). The config that asks for English, or says nothing, is still answered in English.
 */

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir('turkish-cli');
});
afterEach(() => dir.remove());

/** Writes `queue-ops.yml`: a typed config, or text lines where the test is about how it is written. */
function config(content: ConfigInput | string[]): string {
  const path = join(dir.dir, 'queue-ops.yml');
  writeFileSync(path, Array.isArray(content) ? `${content.join('\n')}\n` : configYaml(content));
  return path;
}

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv,
    env: {},
    cwd: dir.dir,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    osUser: 'tester',
  });
  return { code, stdout, stderr };
}

const VALID: ConfigInput = {
  store: 'sqlite:./q.db',
  systems: [bullmqSystem('pushizo', 'redis://127.0.0.1:1')],
};

/**
 * Wrong in three ways: queue-ops' own check, zod's own type check, and a key that does not exist.
 * Text, as a typed config could not be wrong in these ways.
 */
const WRONG = [
  'systems:',
  '  - name: pushizo',
  '    type: bullmq',
  '    redis: http://127.0.0.1:6379',
  'escalation:',
  '  intervalSeconds: often',
  'colour: blue',
];

describe('the command line before the config, in the config’s locale', () => {
  it('--help is Turkish when the config says locale: tr, and English otherwise', async () => {
    // The locale line as a person writes it, with a comment.
    config(['locale: tr # ekip dili', configYaml(VALID)]);
    const tr = await cli(['--help']);
    expect(tr.code).toBe(0);
    expect(tr.stdout).toContain('Kullanım: queue-ops [--config DOSYA]');
    expect(tr.stdout).toContain('Çıkış kodları');
    expect(tr.stdout).not.toContain('Usage:');

    config(VALID);
    const en = await cli(['--help']);
    expect(en.stdout).toContain('Usage: queue-ops [--config FILE]');
  });

  it('a config named by --config counts, and QUEUE_OPS_CONFIG’s name does too', async () => {
    const path = join(dir.dir, 'ops-tr.yml');
    writeFileSync(path, ['locale: "tr"', configYaml(VALID)].join('\n'));
    expect((await cli(['--config', path, '-h'])).stdout).toContain('Kullanım:');
    expect((await cli([`--config=${path}`, '--help'])).stdout).toContain('Kullanım:');
    let stdout = '';
    await runCli({
      argv: ['--help'],
      env: { QUEUE_OPS_CONFIG: path },
      cwd: dir.dir,
      stdout: (text) => {
        stdout += text;
      },
      stderr: () => {},
    });
    expect(stdout).toContain('Kullanım:');
  });

  it('a wrong option is refused in Turkish, exit 2, and --json still prints one object', async () => {
    config({ locale: 'tr', ...VALID });
    const run = await cli(['--bogus', 'status']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Bilinmeyen seçenek --bogus.');
    const json = await cli(['--user', '--json']);
    expect(json.code).toBe(2);
    expect(json.stderr).toContain('--user seçeneği bir değer ister.');
  });

  it('an invalid config with locale: tr is refused in Turkish, every problem on its own line', async () => {
    config(['locale: tr', ...WRONG]);
    const run = await cli(['status']);
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^queue-ops: .*queue-ops\.yml içindeki config geçerli değil:$/);
    expect(run.stderr).toContain('systems[0].redis: bir redis://, rediss:// ya da sentinel:// adresi olmalı');
    expect(run.stderr).toContain(
      'escalation.intervalSeconds: Geçersiz değer: beklenen number, alınan string',
    );
    expect(run.stderr).toContain('colour: bilinmeyen anahtar');
    expect(run.stderr).not.toMatch(/expected|unknown key|Invalid input/);
  });

  it('the same config without locale is refused in English, word for word as before', async () => {
    config(WRONG);
    const run = await cli(['status']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('config in');
    expect(run.stderr).toContain('systems[0].redis: expected a redis://, rediss:// or sentinel:// URL');
    expect(run.stderr).toContain(
      'escalation.intervalSeconds: Invalid input: expected number, received string',
    );
    expect(run.stderr).toContain('colour: unknown key');
  });

  it('--json carries the Turkish problems too, for a script that reads them', async () => {
    config(['locale: tr', ...WRONG]);
    const run = await cli(['--json', 'status']);
    const out = JSON.parse(run.stdout) as { ok: boolean; error: { code: string; problems: string[] } };
    expect(out.ok).toBe(false);
    expect(out.error.code).toBe('ConfigInvalid');
    expect(out.error.problems).toContain('colour: bilinmeyen anahtar');
  });

  it(`YAML that does not parse, and an unset ${envRef('VAR')}, are told in Turkish when the text asks for it`, () => {
    const refused = (text: string, env: Record<string, string> = {}) => {
      try {
        parseConfig(text, env, 'x.yml');
      } catch (error) {
        if (isOpsError(error)) return error.params.problems as string[];
      }
      throw new Error('accepted');
    };
    expect(refused('locale: tr\nsystems: [\n')[0]).toMatch(/^geçerli bir YAML değil: /);
    expect(
      refused(
        [
          'locale: tr',
          'systems:',
          '  - name: z',
          '    type: celery',
          `    redis: ${envRef('ZEUS_REDIS')}`,
        ].join('\n'),
      ),
    ).toEqual([`systems[0].redis: ${envRef('ZEUS_REDIS')} ortamda tanımlı değil`]);
    expect(
      refused(
        [
          'locale: tr',
          'systems:',
          ...[0, 1].flatMap(() => ['  - name: z', '    type: celery', '    redis: redis://h']),
        ].join('\n'),
      ),
    ).toEqual(['systems[1].name: "z" sistem adı iki kez kullanılmış (ilki systems[0])']);
  });
});

describe('the command line run in another directory', () => {
  it('keeps a relative sqlite store (and the archive) in that directory, never in the clone', async () => {
    // `store: "sqlite:./q.db"`, run with the temp dir as its working directory.
    const leak = join(process.cwd(), 'q.db');
    const touched = () => (existsSync(leak) ? statSync(leak).mtimeMs : undefined);
    const before = touched();
    config(VALID);
    await cli(['status', 'pushizo']);
    expect(existsSync(join(dir.dir, 'q.db'))).toBe(true);
    expect(touched()).toBe(before);
  });
});

describe('locale: tr, answers from deep inside a command', () => {
  it('a Redis that refuses, a bad target, a bad task id and an unknown worker group are all told in Turkish', async () => {
    config({
      locale: 'tr',
      store: 'sqlite:./q.db',
      roles: { viewer: ['*'], operator: ['U0OPS'] },
      systems: [
        {
          name: 'pushizo',
          type: 'bullmq',
          redis: 'redis://127.0.0.1:1',
          queues: ['dispatch-ios'],
          workers: {
            dispatch: { type: 'compose', project: 'p', file: 'f.yml', service: 'worker', min: 1, max: 4 },
          },
        },
        { name: 'zeus', type: 'celery', redis: 'redis://127.0.0.1:1/0', queues: ['celery'] },
      ],
    });
    const said = async (...words: string[]) => {
      const run = await cli(['--user', 'U0OPS', ...words]);
      return `${run.stdout}${run.stderr}`;
    };
    expect(await said('status', 'pushizo')).toContain('bağlantı reddedildi');
    expect(await said('dlq', 'pushizo/')).toContain('`pushizo/` bir');
    const revoke = await said('revoke', 'zeus', 'bad id!');
    expect(revoke).toContain('bir görev kimliği değil');
    const scale = await said('scale', 'pushizo/dispach', '2');
    expect(scale).toContain('mi demek istediniz?');
    for (const out of [await said('status', 'pushizo'), revoke, scale])
      expect(out).not.toMatch(/connection refused|is not a task id|Did you mean|has no worker group/);
  });
});

describe('peekLocale', () => {
  it(`reads a top-level locale line, quoted or not, with a comment or ${envRef('VAR')}`, () => {
    expect(peekLocale('locale: tr\n', {})).toBe('tr');
    expect(peekLocale("store: x\nlocale: 'tr'   # ekip\n", {})).toBe('tr');
    expect(peekLocale(`locale: ${envRef('LANG_OF_TEAM:-tr')}\n`, {})).toBe('tr');
    expect(peekLocale(`locale: ${envRef('LANG_OF_TEAM')}\n`, { LANG_OF_TEAM: 'en' })).toBe('en');
  });

  it('reads nothing else: a nested locale, an unknown one, or one commented out', () => {
    expect(peekLocale('slack:\n  locale: tr\n', {})).toBeUndefined();
    expect(peekLocale('locale: de\n', {})).toBeUndefined();
    expect(peekLocale('# locale: tr\n', {})).toBeUndefined();
  });
});
