import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configSchema } from '../../src/config/schema.js';
import { VERB_LIST } from '../../src/verbs.js';
import { schemaKeyPaths } from './schema-keys.js';

const root = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The first column of a Markdown table's rows, from the row after `header` on, backticks removed. */
function tableKeys(text: string, header: RegExp): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => header.test(line));
  expect(start, `a table whose header matches ${header}`).toBeGreaterThanOrEqual(0);
  const keys: string[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    keys.push(line.split('|')[1]!.trim().replaceAll('`', ''));
  }
  return keys;
}

/** `policies.pause.role` → `policies.<action>.role`: the table documents the actions once. */
function collapsePolicies(path: string): string {
  return path.replace(/^policies\.[^.]+/, 'policies.<action>');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** Every environment variable the product reads (`env.X`, `env['X']`), outside the demo. */
function environmentVariablesRead(): Set<string> {
  const names = new Set<string>();
  for (const file of sourceFiles(join(root, 'src'))) {
    if (relative(root, file).startsWith('src/demo/')) continue;
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\benv\??\.([A-Z][A-Z0-9_]+)|\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g))
      names.add((match[1] ?? match[2])!);
  }
  return names;
}

/** Read from the machine, not set by whoever runs the bot: not in the table, and why. */
const NOT_SETTINGS = new Map([
  ['USER', 'the OS user the command line records in the audit trail'],
  ['USERNAME', 'the same, on Windows'],
  ['KUBERNETES_SERVICE_HOST', 'set by Kubernetes inside a pod: tells the in-cluster account is there'],
  [
    'PATH',
    'the shell’s: tells whether the buttons hint can name `queue-ops` or must name `node bin/queue-ops.js`',
  ],
]);

describe('what the documentation promises matches the code', () => {
  it('docs/configuration.md lists every key the config schema accepts, and no other', () => {
    const documented = new Set(tableKeys(read('docs/configuration.md'), /^\| key \| default \| meaning \|$/));
    const accepted = new Set(schemaKeyPaths(configSchema as never).map(collapsePolicies));
    expect(
      [...accepted].filter((key) => !documented.has(key)),
      'keys missing from the docs',
    ).toEqual([]);
    expect(
      [...documented].filter((key) => !accepted.has(key)),
      'documented keys the schema refuses',
    ).toEqual([]);
  });

  it("docs/configuration.md's policies row names every action a policy can be set for", () => {
    const text = read('docs/configuration.md');
    const row = text.split('\n').find((line) => line.startsWith('| `policies.<action>` |'))!;
    const actions = schemaKeyPaths(configSchema as never)
      .filter((path) => /^policies\.[^.]+$/.test(path))
      .map((path) => path.slice('policies.'.length));
    for (const action of actions) expect(row, action).toContain(`\`${action}\``);
  });

  it("README's environment table lists every variable the bot and the command line read, and no other", () => {
    const documented = new Set(tableKeys(read('README.md'), /^\| variable +\| meaning +\|$/));
    const read_ = [...environmentVariablesRead()].filter((name) => !NOT_SETTINGS.has(name));
    expect(
      read_.filter((name) => !documented.has(name)),
      'variables missing from README',
    ).toEqual([]);
    expect(
      [...documented].filter((name) => !read_.includes(name)),
      'documented variables nothing reads',
    ).toEqual([]);
  });

  it("README's scope list is manifest.yml's", () => {
    const manifest = parse(read('manifest.yml')) as { oauth_config: { scopes: { bot: string[] } } };
    const readme = read('README.md');
    const from = readme.indexOf('It asks for these bot scopes');
    const line = readme.slice(from, readme.indexOf('\n2. ', from));
    const listed = [...line.matchAll(/`([a-z]+:[a-z.]+|commands)`/g)].map((m) => m[1]);
    expect(listed.filter((scope) => scope !== 'chat:write.public').sort()).toEqual(
      [...manifest.oauth_config.scopes.bot].sort(),
    );
  });

  // Every descriptor of src/verbs.ts, not a list written here: a new verb fails this until its
  // README row and its usage hint are written.
  it("every verb is in README's command table and in manifest.yml's usage hint", () => {
    const readme = read('README.md');
    const table = tableKeys(readme, /^\| command +\| what it does/).join(' ');
    const manifest = parse(read('manifest.yml')) as {
      features: { slash_commands: { usage_hint: string }[] };
    };
    const hint = manifest.features.slash_commands[0]!.usage_hint;
    expect(hint.length, "Slack's limit for a usage hint").toBeLessThanOrEqual(1000);
    for (const { verb } of VERB_LIST) {
      expect(table, `README's command table names ${verb}`).toMatch(new RegExp(`(^|[\\s/|])${verb}\\b`));
      expect(hint, `the usage hint names ${verb}`).toMatch(new RegExp(`(^|[\\s|])${verb}\\b`));
    }
  });
});
