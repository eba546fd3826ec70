// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text, where ${VAR} is literal
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import type { Config, ConfigInput } from '../../src/config/schema.js';
import { ErrorCode, OpsError } from '../../src/errors.js';

/**
 * The config loader, for any text and any environment: a frozen config, or one `ConfigInvalid`
 * whose problems are single lines each naming where (`systems[0].redis: …`, `(root): …`, or
 * `not valid YAML: …`). Never another exception, never an internal placeholder in the answer.
 */
type Outcome = { ok: true; config: Config } | { ok: false; problems: string[]; locale: unknown };

function load(text: string, env: Record<string, string | undefined> = {}): Outcome {
  try {
    return { ok: true, config: parseConfig(text, env, 'fuzz.yml') };
  } catch (error) {
    // Anything but a ConfigInvalid is the bug this file looks for: rethrown with its input.
    if (!(error instanceof OpsError) || error.code !== ErrorCode.ConfigInvalid) {
      throw new Error(`parseConfig threw ${String(error)} for ${JSON.stringify(text).slice(0, 500)}`);
    }
    return { ok: false, problems: error.params.problems as string[], locale: error.params.locale };
  }
}

/**
 * Where, then `: ` and the reason: a path as `formatPath` writes it (`systems[0].redis`, `(root)`,
 * a key as written, even `[ a, b ]`), or `not valid YAML: ` and the parser's own line.
 */
const PROBLEM = /^\S[^\n]*?: \S[^\n]*$/;

function expectClear(outcome: Outcome): void {
  if (outcome.ok) {
    expect(Object.isFrozen(outcome.config)).toBe(true);
    expect(outcome.config.systems.length).toBeGreaterThan(0);
    return;
  }
  expect(outcome.problems.length).toBeGreaterThan(0);
  for (const line of outcome.problems) {
    expect(typeof line).toBe('string');
    expect(line).toMatch(PROBLEM);
    expect(line).not.toContain('\n');
    // The loader's stand-in for `${VAR}` while the YAML is parsed must never reach a person.
    expect(line).not.toMatch(/qoenv[0-9a-f]{8}r\d+e/);
  }
  expect(['en', 'tr']).toContain(outcome.locale);
}

const VALID = `systems:
  - name: pushizo
    type: bullmq
    redis: redis://127.0.0.1:6390
    prefix: hs
`;

/** Pieces people (and attackers) put in YAML: anchors, tags, merges, env references, quotes. */
const YAML_TOKENS = [
  'systems:',
  '\n',
  '\n  - ',
  '\n    ',
  'name: pushizo',
  'name: "a/b*?["',
  'type: bullmq',
  'type: celery',
  'redis: redis://127.0.0.1:6390',
  'redis: ${REDIS_URL}',
  'prefix: ${PREFIX:-hs}',
  'queues: [celery, "celery:alarm_processing"]',
  'workers: {ios: {type: compose, project: p, file: f.yml, service: w, min: 0, max: 3}}',
  'locale: tr',
  'roles: {operator: [U0ALICE]}',
  'policies: {purge: {role: admin, approvals: 9}}',
  'escalation: {rules: [{name: r, metric: waiting, above: 1, for: 2x}]}',
  '&a ',
  '*a',
  '*nope',
  '<<: *a',
  '!!binary aGk=',
  '!!set {a, b}',
  '!!omap [a: 1]',
  '!custom x',
  '? [a, b]\n: c',
  ': ',
  '- ',
  '[',
  ']',
  '{',
  '}',
  '---',
  '...',
  '%YAML 1.1\n---\n',
  '$${X}',
  '${X}',
  '${X:-}',
  '"',
  "'",
  '# c',
  '|',
  '>',
  '__proto__: {a: 1}',
  'constructor: 1',
  '\t',
  '\u0000',
  '\u2028',
  '~',
  '1e400',
  '-0',
  '.nan',
  '0x1F',
  'true',
];

describe('the config loader under hostile input', () => {
  it('answers any text at all with a valid config or path-named problems, never a throw', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (text) => {
        expectClear(load(text));
      }),
      { numRuns: 150 },
    );
  });

  it('answers YAML built from anchors, aliases, tags, merges and env references the same way', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...YAML_TOKENS), { maxLength: 40 }),
        fc.dictionary(fc.constantFrom('X', 'REDIS_URL', 'PREFIX'), fc.string({ maxLength: 30 })),
        (tokens, env) => {
          expectClear(load(VALID + tokens.join(''), env));
          expectClear(load(tokens.join(' '), env));
        },
      ),
      { numRuns: 200 },
    );
  });

  /** Where a value is swapped for anything: each a field of the documented config. */
  const FIELDS: readonly (string | number)[][] = [
    ['systems'],
    ['systems', 0],
    ['systems', 0, 'name'],
    ['systems', 0, 'type'],
    ['systems', 0, 'redis'],
    ['systems', 0, 'prefix'],
    ['systems', 0, 'queues'],
    ['systems', 0, 'queues', 0],
    ['systems', 0, 'workers'],
    ['systems', 0, 'workers', 'ios'],
    ['systems', 0, 'workers', 'ios', 'max'],
    ['systems', 0, 'workers', 'ios', 'type'],
    ['slack'],
    ['slack', 'allowedChannels'],
    ['slack', 'allowedChannels', 0],
    ['slack', 'incidentChannel'],
    ['store'],
    ['roles'],
    ['roles', 'operator'],
    ['roles', 'operator', 0],
    ['policies'],
    ['policies', 'purge'],
    ['policies', 'purge', 'approvals'],
    ['policies', 'purge', 'role'],
    ['approvals', 'ttlMinutes'],
    ['rateLimit', 'perUserPerMinute'],
    ['archive', 'retentionDays'],
    ['metrics', 'cacheSeconds'],
    ['escalation', 'rules'],
    ['escalation', 'rules', 0, 'for'],
    ['escalation', 'rules', 0, 'metric'],
    ['escalation', 'rules', 0, 'above'],
    ['locale'],
  ];

  /** Values of every YAML type and the numbers and strings that break naive checks. */
  const anyValue = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom(
      -1,
      0.5,
      Number.POSITIVE_INFINITY,
      -0,
      Number.NaN,
      Number.MAX_SAFE_INTEGER + 2,
      '',
      ' ',
      '*',
      'a\nb',
      'redis://',
      'sqlite:',
      '__proto__',
      'constructor',
      'ｐｕｓｈｉｚｏ',
      'C0ΙNCIDENT',
      '\u0000',
      'x'.repeat(5000),
    ),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );

  /** A valid config (tsc holds it to the schema) that each run spoils in one field. */
  function base(): ConfigInput {
    return {
      systems: [
        {
          name: 'pushizo',
          type: 'bullmq',
          redis: 'redis://127.0.0.1:6390',
          prefix: 'hs',
          queues: ['dispatch-ios'],
          workers: {
            ios: { type: 'compose', project: 'hs', file: 'compose.yml', service: 'worker', min: 0, max: 3 },
          },
        },
      ],
      slack: { allowedChannels: ['C0INCIDENT'], incidentChannel: 'C0INCIDENT' },
      store: 'sqlite:./data/q.db',
      roles: { operator: ['U0ALICE'] },
      policies: { purge: { role: 'admin', approvals: 1 } },
      approvals: { ttlMinutes: 15 },
      rateLimit: { perUserPerMinute: 10 },
      archive: { retentionDays: 7 },
      metrics: { cacheSeconds: 10 },
      escalation: { rules: [{ name: 'r', metric: 'waiting', above: 5, for: '2m' }] },
      locale: 'en',
    };
  }

  function setAt(target: Record<string, unknown>, path: readonly (string | number)[], value: unknown) {
    let node: Record<string | number, unknown> = target;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
    node[path.at(-1)!] = value;
  }

  it('names the field a wrong value sits at, whatever the value', () => {
    // The base itself is valid, so any problem comes from the one field swapped.
    expect(load(stringify(base())).ok).toBe(true);
    fc.assert(
      fc.property(fc.constantFrom(...FIELDS), anyValue, (path, value) => {
        const doc = base();
        setAt(doc as Record<string, unknown>, path, value);
        const outcome = load(stringify(doc));
        expectClear(outcome);
        if (outcome.ok) return;
        // The problem is about that field, its parent or something inside it.
        const top = String(path[0]);
        expect(outcome.problems.some((line) => line.startsWith(top) || line.startsWith('(root)'))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps any environment value exactly, inside quotes, even one that looks like an escape or YAML', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }), (value) => {
        const outcome = load(
          `systems:\n  - { name: p, type: bullmq, redis: "redis://h:1", prefix: "\${P}" }\n`,
          { P: value },
        );
        expectClear(outcome);
        expect(outcome.ok && (outcome.config.systems[0] as { prefix?: string }).prefix).toBe(value);
      }),
      { numRuns: 150 },
    );
  });

  // fast-check's counterexamples, kept as fixed cases.
  it('refuses a YAML alias bomb with one line instead of throwing a ReferenceError', () => {
    const bomb = `a: &a [x,x,x,x,x,x,x,x,x,x]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
${VALID}`;
    const outcome = load(bomb);
    expectClear(outcome);
    expect(outcome).toMatchObject({ ok: false, problems: [expect.stringMatching(/^not valid YAML: /)] });
  });

  it('refuses an alias to an anchor that does not exist with one line naming it', () => {
    const outcome = load('systems: *nope\n');
    expectClear(outcome);
    expect(outcome).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/^not valid YAML: .*nope/)],
    });
  });

  it('names an unknown key written as ${VAR} as the user wrote it', () => {
    const outcome = load(`${VALID}\${X}: 1\n`, { X: 'whatever' });
    expect(outcome).toEqual({ ok: false, problems: ['${X}: unknown key'], locale: 'en' });
  });

  it('shows a key with an invisible line separator in it quoted, on one line', () => {
    const outcome = load(`\u2028systems:\n  - { name: p, type: bullmq, redis: "redis://h:1" }\n`);
    expect(outcome).toMatchObject({
      ok: false,
      problems: expect.arrayContaining(['"\\u2028systems": unknown key']),
    });
    expectClear(outcome);
  });

  it('keeps a problem that quotes a value with a line break in it (a cluster prefix) on one line', () => {
    const outcome = load(
      'systems:\n  - { name: p, type: bullmq, redis: "redis://h:1", cluster: true, prefix: "hs\\nx" }\n',
    );
    expectClear(outcome);
    expect(outcome).toMatchObject({ ok: false, problems: [expect.stringContaining('"{hs\\u000ax}"')] });
  });

  it('keeps an environment value holding $${ as it is (a password), not unescaped as if it were config text', () => {
    const outcome = load(
      `systems:\n  - { name: p, type: bullmq, redis: "redis://:\${PW}@h:1", prefix: "$\${KEEP}" }\n`,
      { PW: 'a$${b}c' },
    );
    expect(outcome.ok && outcome.config.systems[0]).toMatchObject({
      redis: 'redis://:a$${b}c@h:1',
      prefix: '${KEEP}',
    });
  });
});
