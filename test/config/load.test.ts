// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text, where ${VAR} is literal
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigFile, parseConfig } from '../../src/config/load.js';
import { ErrorCode, OpsError } from '../../src/errors.js';

/** The problems a config is refused with (fails the test if it is accepted). */
function problemsOf(text: string, env: Record<string, string | undefined> = {}): string[] {
  try {
    parseConfig(text, env);
  } catch (error) {
    expect(error).toBeInstanceOf(OpsError);
    expect((error as OpsError).code).toBe(ErrorCode.ConfigInvalid);
    return (error as OpsError).params.problems as string[];
  }
  throw new Error('config was accepted');
}

const twoSystems = `
systems:
  - name: pushizo
    type: bullmq
    redis: \${PUSHIZO_REDIS_URL}
    prefix: hs
    queues: [scheduler, dispatch-ios]
  - name: zeus
    type: celery
    redis: \${ZEUS_BROKER_URL}
    resultBackend: \${ZEUS_RESULT_URL}
    queues: ["celery", "celery:alarm_processing"]
    globalKeyprefix: ""
`;

describe('config loading', () => {
  it('names a key holding a ${VAR} as written when the variable in its value is unset, never by a stand-in', () => {
    const problems = problemsOf('${X} redis: ${REDIS_URL}\nsystems: []');
    expect(problems).toContain('"${X} redis": ${REDIS_URL} is not set in the environment');
    for (const line of problems) expect(line).not.toMatch(/qoenv/);
  });

  it('substitutes ${VAR} from the environment, inside a URL as well as for a whole value', () => {
    const config = parseConfig(
      `systems:
  - name: pushizo
    type: bullmq
    redis: redis://:\${PW}@cache.internal:6380/2
    prefix: \${PREFIX}
`,
      { PW: 's3cret', PREFIX: 'hs' },
    );
    expect(config.systems[0]).toMatchObject({ redis: 'redis://:s3cret@cache.internal:6380/2', prefix: 'hs' });
  });

  it('reads the example from the issue with every documented key', () => {
    const config = parseConfig(
      `slack: { incidentChannel: C0123, auditChannel: C0456, allowedChannels: [C0123] }
store: sqlite:./data/queue-ops.db
roles: { viewer: ["*"], operator: [S0ONCALL, U0ALICE], admin: [U0BOB] }
${twoSystems}`,
      {
        PUSHIZO_REDIS_URL: 'redis://localhost:6379/0',
        ZEUS_BROKER_URL: 'redis://localhost:6379/1',
        ZEUS_RESULT_URL: 'redis://localhost:6379/2',
      },
    );
    expect(config.slack).toEqual({
      incidentChannel: 'C0123',
      auditChannel: 'C0456',
      allowedChannels: ['C0123'],
    });
    expect(config.roles.operator).toEqual(['S0ONCALL', 'U0ALICE']);
    expect(config.systems.map((s) => s.name)).toEqual(['pushizo', 'zeus']);
    expect(config.systems[1]).toMatchObject({
      type: 'celery',
      resultBackend: 'redis://localhost:6379/2',
      queues: ['celery', 'celery:alarm_processing'],
      globalKeyprefix: '',
    });
  });

  it('keeps an environment value that looks like YAML structure as one string', () => {
    // `{hs}` is the usual Redis Cluster hash-tag prefix; pasted into the text it would be a mapping.
    // `: ` and ` #` would end a plain scalar (a URL's password holds them percent-encoded, as the
    // client needs: a raw `#` there is refused, see below; a file path may hold them as they are).
    const config = parseConfig(
      `store: \${STORE}
systems:
  - { name: pushizo, type: bullmq, redis: "\${URL}", prefix: \${PREFIX} }
`,
      { STORE: 'sqlite:/var/lib/q: #1.db', URL: 'redis://:p@ss:%20%23word@h:1', PREFIX: '{hs}' },
    );
    expect(config.store).toBe('sqlite:/var/lib/q: #1.db');
    expect(config.systems[0]).toMatchObject({ redis: 'redis://:p@ss:%20%23word@h:1', prefix: '{hs}' });
  });

  it('reads an unquoted whole-value variable as YAML would, so numbers stay numbers', () => {
    const config = parseConfig(
      `systems:
  - name: zeus
    type: celery
    redis: redis://h:1
    inspectTimeoutMs: \${INSPECT_MS}
    globalKeyprefix: "\${KP}"
`,
      { INSPECT_MS: '2500', KP: '42' },
    );
    expect(config.systems[0]).toMatchObject({ inspectTimeoutMs: 2500, globalKeyprefix: '42' });
  });

  it('uses ${VAR:-default} when the variable is unset and leaves $${VAR} literal', () => {
    const config = parseConfig(
      `systems:
  - name: pushizo
    type: bullmq
    redis: \${URL:-redis://localhost:6379}
    prefix: "$\${NOT_A_VAR}"
`,
      {},
    );
    expect(config.systems[0]).toMatchObject({ redis: 'redis://localhost:6379', prefix: '${NOT_A_VAR}' });
  });

  it('fills in the defaults: prefix bull, the SQLite store, viewers everyone, the action policies, the archive', () => {
    const config = parseConfig('systems: [{ name: p, type: bullmq, redis: "redis://h:1" }]', {});
    expect(config.systems[0]).toMatchObject({ prefix: 'bull' });
    expect(config.systems[0]).not.toHaveProperty('queues');
    expect(config.store).toBe('sqlite:./data/queue-ops.db');
    expect(config.roles).toEqual({ viewer: ['*'], operator: [], admin: [] });
    expect(config.slack.allowedChannels).toEqual([]);
    expect(config.policies.purge).toEqual({ role: 'admin', approvals: 1 });
    expect(config.approvals).toEqual({ ttlMinutes: 15, require2fa: false, cliSameOsUser: 'refuse' });
    expect(config.policies.undo).toEqual({ role: 'admin', approvals: 1 });
    expect(config.archive).toEqual({ dir: './data/archive', retentionDays: 7 });
    expect(config.locale).toBe('en');
  });

  it('fills in the Celery defaults (kombu priority steps, separator, no global prefix)', () => {
    const config = parseConfig('systems: [{ name: z, type: celery, redis: "redis://h:1" }]', {});
    expect(config.systems[0]).toMatchObject({
      globalKeyprefix: '',
      prioritySteps: [0, 3, 6, 9],
      separator: '\x06\x16',
    });
  });

  it('returns a frozen config', () => {
    const config = parseConfig('systems: [{ name: p, type: bullmq, redis: "redis://h:1" }]', {});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.systems[0])).toBe(true);
  });

  it('names a bad Redis URL by its path, in exactly the documented words', () => {
    const problems = problemsOf(`systems:
  - { name: a, type: bullmq, redis: "redis://h:1" }
  - { name: b, type: celery, redis: "http://h:1" }
`);
    expect(problems).toEqual(['systems[1].redis: expected a redis://, rediss:// or sentinel:// URL']);
  });

  it('refuses a Redis URL the client cannot read (a password with a space and a #), naming its path, never the password', () => {
    const unreadable =
      'not a URL the Redis client can read: percent-encode # / ? @ % and spaces in the user and password (# as %23, / as %2F, ? as %3F, @ as %40, % as %25, space as %20)';
    const env = { PASSWORD: 'pa ss#7', BAD_ESCAPE: 'p%zz' };
    const problems = problemsOf(
      `systems:
  - { name: a, type: bullmq, redis: "redis://h:1" }
  - { name: b, type: bullmq, redis: "redis://:\${PASSWORD}@h:6379/0" }
  - { name: c, type: bullmq, redis: "redis://h:7000", cluster: true, prefix: "{hs}", nodes: ["redis://h:7001", "redis://:a/b@h:7002"] }
  - { name: d, type: celery, redis: "sentinel://:\${BAD_ESCAPE}@h:26379/mymaster", resultBackend: "rediss://:x?y@h:6380/1" }
`,
      env,
    );
    expect(problems).toEqual([
      `systems[1].redis: ${unreadable}`,
      `systems[2].nodes[1]: ${unreadable}`,
      `systems[3].redis: ${unreadable}`,
      `systems[3].resultBackend: ${unreadable}`,
    ]);
    expect(problems.join('\n')).not.toContain('pa ss');
    // The same password percent-encoded is read, and the client gets it back as written.
    expect(
      parseConfig('systems: [{ name: b, type: bullmq, redis: "redis://:pa%20ss%237@h:6379/0" }]', {})
        .systems[0]?.redis,
    ).toBe('redis://:pa%20ss%237@h:6379/0');
  });

  it('names a role entry that is neither "*", a user id nor a user group, saying what would be valid', () => {
    const problems = problemsOf(`roles: { operator: [alice, U0ALICE, S0ONCALL, "*"] }
systems:
  - { name: a, type: bullmq, redis: "redis://h:1" }
`);
    expect(problems).toEqual([
      'roles.operator[0]: expected "*", a Slack user id (U…/W…) or a user group id (S…)',
    ]);
  });

  it('cli.users binds OS accounts to Slack user ids', () => {
    const config = parseConfig(
      `cli: { users: { alice: [U0ALICE], bob.smith: [U0BOB, W0BOBGRID] } }
systems:
  - { name: a, type: bullmq, redis: "redis://h:1" }
`,
      {},
    );
    expect(config.cli.users).toEqual({ alice: ['U0ALICE'], 'bob.smith': ['U0BOB', 'W0BOBGRID'] });
  });

  it('cli.users binds no one when not given', () => {
    expect(parseConfig('systems: [{ name: a, type: bullmq, redis: "redis://h:1" }]', {}).cli).toEqual({
      users: {},
    });
  });

  it('cli.users refuses a group, "*", a name or an empty list, by its path', () => {
    const problems =
      problemsOf(`cli: { users: { alice: [S0ONCALL], bob: ["*"], carol: [carol], dave: [], "e ve": [U0EVE] } }
systems:
  - { name: a, type: bullmq, redis: "redis://h:1" }
`);
    expect(problems).toEqual(
      expect.arrayContaining([
        'cli.users.alice[0]: expected a Slack user id (U…/W…)',
        'cli.users.bob[0]: expected a Slack user id (U…/W…)',
        'cli.users.carol[0]: expected a Slack user id (U…/W…)',
        'cli.users.dave: expected a Slack user id (U…/W…)',
        'cli.users."e ve": expected an OS account name (no spaces or ":")',
      ]),
    );
    expect(problems).toHaveLength(5);
  });

  it('reports every problem at once, not just the first', () => {
    const problems = problemsOf(`slack: { incidentChannel: "#incidents" }
store: mysql://x
systems:
  - { name: a, type: bullmq, redis: "redis://h:1", prefix: "" }
  - { name: b, type: celery, redis: "http://h:1" }
  - { name: c, type: kafka, redis: "redis://h:1" }
`);
    expect(problems).toEqual(
      expect.arrayContaining([
        'slack.incidentChannel: expected a Slack channel id',
        'store: expected sqlite:<path> or postgres://…',
        expect.stringMatching(/^systems\[0\]\.prefix: /),
        'systems[1].redis: expected a redis://, rediss:// or sentinel:// URL',
        'systems[2].type: expected type: bullmq or celery',
      ]),
    );
    expect(problems).toHaveLength(5);
  });

  it('refuses unknown keys, naming each at its own path', () => {
    const problems = problemsOf(`systms: []
systems:
  - { name: a, type: bullmq, redis: "redis://h:1", prefx: hs }
`);
    expect(problems).toEqual(
      expect.arrayContaining(['systms: unknown key', 'systems[0].prefx: unknown key']),
    );
  });

  it('refuses a Celery-only key on a BullMQ system', () => {
    expect(
      problemsOf('systems: [{ name: a, type: bullmq, redis: "redis://h:1", globalKeyprefix: x }]'),
    ).toEqual(['systems[0].globalKeyprefix: unknown key']);
  });

  it('refuses two systems with the same name, also alongside other problems', () => {
    const alone = problemsOf(`systems:
  - { name: a, type: bullmq, redis: "redis://h:1" }
  - { name: a, type: celery, redis: "redis://h:2" }
`);
    expect(alone).toEqual(['systems[1].name: duplicate system name "a" (also systems[0])']);
    const withOthers = problemsOf(`systems:
  - { name: a, type: bullmq, redis: "redis://h:1" }
  - { name: a, type: celery, redis: "nope" }
`);
    expect(withOthers).toEqual([
      'systems[1].redis: expected a redis://, rediss:// or sentinel:// URL',
      'systems[1].name: duplicate system name "a" (also systems[0])',
    ]);
  });

  it('names a ${VAR} that is not set, at the path where it is used', () => {
    const problems = problemsOf(twoSystems, {
      PUSHIZO_REDIS_URL: 'redis://localhost:6379/0',
      ZEUS_RESULT_URL: 'redis://localhost:6379/2',
    });
    expect(problems).toEqual(['systems[1].redis: ${ZEUS_BROKER_URL} is not set in the environment']);
  });

  it('refuses an unset ${VAR} even where an empty value would pass the schema', () => {
    const problems = problemsOf(`systems:
  - { name: z, type: celery, redis: "redis://h:1", globalKeyprefix: "\${ZEUS_KEYPREFIX}" }
`);
    expect(problems).toEqual(['systems[0].globalKeyprefix: ${ZEUS_KEYPREFIX} is not set in the environment']);
  });

  it('refuses a config without systems, and text that is not YAML', () => {
    expect(problemsOf('systems: []')).toEqual(['systems: expected at least one system']);
    expect(problemsOf('systems: [unclosed')[0]).toMatch(/^not valid YAML: /);
  });

  it('names a config file that cannot be read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'queue-ops-config-'));
    try {
      const missing = join(dir, 'nope.yml');
      expect(() => loadConfigFile(missing, {})).toThrow(OpsError);
      try {
        loadConfigFile(missing, {});
      } catch (error) {
        expect((error as OpsError).params.problems).toEqual([`cannot read ${missing}: ENOENT`]);
      }
      const present = join(dir, 'queue-ops.yml');
      writeFileSync(present, 'systems: [{ name: p, type: bullmq, redis: "${R}" }]\n');
      expect(loadConfigFile(present, { R: 'redis://h:1' }).systems[0]?.redis).toBe('redis://h:1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
