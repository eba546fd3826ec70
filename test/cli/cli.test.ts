import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../../src/lib/redis-server.js';
import { runCli } from '../../src/transports/cli/run.js';
import { BullmqScene, EVERY_VERB, keysOf } from '../commands/fixture.js';
import { bullmqSystem, configYaml, envRef } from '../helpers/config-file.js';
import { withClockStopped } from '../helpers/frozen-timers.js';
import { testRedisUrl } from '../helpers/test-redis.js';

const redisUrl = testRedisUrl();
const BIN = resolve(import.meta.dirname, '../../bin/queue-ops.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real command line as a child process, the way a script would. */
function cli(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: options.cwd ?? process.cwd(),
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...options.env },
        timeout: 20_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** Stdout must be one JSON object and nothing else. */
function onlyJson(run: Run): Record<string, unknown> {
  const lines = run.stdout.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  const parsed: unknown = JSON.parse(lines[0]!);
  expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)).toBe(true);
  return parsed as Record<string, unknown>;
}

describe('the queue-ops command line', () => {
  let scene: BullmqScene;
  let config: string;
  let closedPort: number;

  beforeEach(async () => {
    scene = new BullmqScene(redisUrl);
    closedPort = await freePort();
    config = scene.writeConfig(
      configYaml({ systems: [bullmqSystem('pushizo', envRef('PUSHIZO_REDIS_URL'), scene.prefix)] }),
    );
  });

  afterEach(async () => {
    await scene.cleanup();
  });

  const env = () => ({ PUSHIZO_REDIS_URL: redisUrl });

  it('--json status prints exactly one JSON object that agrees with BullMQ getJobCounts, exit 0', async () => {
    const queue = await scene.everyState('dispatch-ios');
    const run = await cli(['--config', config, '--json', 'status'], { env: env() });
    expect(run.code).toBe(0);
    const out = onlyJson(run);
    expect(keysOf(out)).toEqual(['data', 'message', 'ok']);
    expect(out.ok).toBe(true);
    expect(keysOf(out.message)).toEqual(['blocks', 'text']);
    const counts = await queue.getJobCounts(
      'wait',
      'active',
      'delayed',
      'prioritized',
      'failed',
      'completed',
    );
    const systems = (out.data as { systems: { queues: Record<string, unknown>[] }[] }).systems;
    expect(systems[0]!.queues).toEqual([
      {
        name: 'dispatch-ios',
        waiting: counts.wait,
        active: counts.active,
        delayed: counts.delayed,
        prioritized: counts.prioritized,
        failed: counts.failed,
        completed: counts.completed,
        isPaused: false,
        oldestWaitingSeconds: expect.any(Number),
        oldestWaitingFrom: 'due',
        limits: { concurrency: null, rateLimit: null },
        // Everything finished in the last minute: the 5-minute rates count each job BullMQ does.
        throughput: expect.objectContaining({
          source: 'jobs',
          spanSeconds: 300,
          completed: counts.completed,
          failed: counts.failed,
          wait: { unknown: 'notSampled' },
          run: { unknown: 'notSampled' },
        }),
      },
    ]);
    expect(counts).toMatchObject({ wait: 3, active: 1, failed: 3 });
  });

  it('without --json prints the message as text and says which command each button runs', async () => {
    await scene.paused('events', 2);
    const run = await cli(['--config', config, 'status'], { env: env() });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('pushizo');
    expect(run.stdout).toContain('events');
    expect(run.stdout).not.toMatch(/^\s*[{[]/);
    expect(run.stdout).toContain('To press a button, run:');
    // As it was started (a clone has no `queue-ops` on PATH), with the config it was given.
    const again = `node bin/queue-ops.js --config ${config}`;
    expect(run.stdout).toContain(`[1] ${again} status`);
    expect(run.stdout).not.toMatch(/\] queue-ops /);
  });

  it('takes --json after the words too', async () => {
    const run = await cli(['--config', config, 'help', '--json'], { env: env() });
    expect(run.code).toBe(0);
    expect(onlyJson(run)).toMatchObject({
      ok: true,
      data: {
        verbs: EVERY_VERB,
      },
    });
  });

  it('hands every other word after the verb to the command, a flag too', async () => {
    // a flag after the verb reaches the command (dlq, which names the limits it takes), not the
    // CLI's option parser
    const flagged = onlyJson(
      await cli(['--config', config, '--json', 'dlq', 'pushizo/webhooks', '--all'], { env: env() }),
    );
    expect(flagged).toMatchObject({
      ok: false,
      error: {
        code: 'BadArgument',
        message: '`--all` is not a valid limit. Valid: a whole number from 1 to 100.',
      },
    });
    const monitor = onlyJson(await cli(['--config', config, '--json', 'monitor', '--once'], { env: env() }));
    // `--once` reaches the monitor (one tick), not the CLI's option parser.
    expect(monitor).toMatchObject({ ok: true });
  });

  it('an unknown verb is a usage error: one line naming the valid verbs, exit 2', async () => {
    const run = await cli(['--config', config, 'purgeall'], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stdout.trim().split('\n')).toEqual([
      `⚠ \`purgeall\` is not a /queue command. Valid commands: ${EVERY_VERB.map((verb) => `\`${verb}\``).join(', ')}.`,
    ]);
    const json = onlyJson(await cli(['--config', config, '--json', 'stauts'], { env: env() }));
    expect(json).toMatchObject({ ok: false, data: null, error: { code: 'UnknownVerb' } });
    expect((json.error as { message: string }).message).toContain('Did you mean `status`?');
  });

  it('an unknown system or queue means the command failed: exit 1, naming what is valid', async () => {
    await scene.queue('webhooks').add('x', {});
    const system = await cli(['--config', config, '--json', 'status', 'pushzio'], { env: env() });
    expect(system.code).toBe(1);
    expect(onlyJson(system)).toMatchObject({
      ok: false,
      error: {
        code: 'UnknownSystem',
        message: 'There is no system called `pushzio`. Did you mean `pushizo`? Systems: `pushizo`.',
      },
    });
    const queue = await cli(['--config', config, 'dlq', 'pushizo/webhook'], { env: env() });
    expect(queue.code).toBe(1);
    expect(queue.stdout).toContain(
      '`pushizo` has no queue called `webhook`. Did you mean `pushizo/webhooks`?',
    );
  });

  it('a dlq limit out of range is a usage error naming the range, exit 2', async () => {
    const run = await cli(['--config', config, '--json', 'dlq', 'pushizo/webhooks', '500'], { env: env() });
    expect(run.code).toBe(2);
    expect(onlyJson(run)).toMatchObject({
      ok: false,
      error: {
        code: 'BadArgument',
        message: '`500` is not a valid limit. Valid: a whole number from 1 to 100.',
      },
    });
  });

  it('dlq --json has the documented shape', async () => {
    await scene.everyState('dispatch-ios');
    const run = await cli(['--config', config, '--json', 'dlq', 'pushizo/dispatch-ios', '1'], { env: env() });
    expect(run.code).toBe(0);
    const data = onlyJson(run).data as Record<string, unknown>;
    expect(keysOf(data)).toEqual(['context', 'jobs', 'queue', 'system', 'topErrors', 'total']);
    expect(data).toMatchObject({ system: 'pushizo', queue: 'dispatch-ios', total: 3, context: null });
    expect(data.jobs).toEqual([
      {
        id: expect.any(String),
        name: 'render',
        error: 'RenderError: template <b>missing</b>',
        attempts: 1,
        failedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    ]);
  });

  it('an unknown option is a usage error, and with --json still one JSON object', async () => {
    const run = await cli(['--config', config, '--jsno', 'status'], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Unknown option --jsno.');
    const json = await cli(['--json', '--config'], { env: env() });
    expect(json.code).toBe(2);
    expect(onlyJson(json)).toMatchObject({ ok: false, error: { code: 'UsageError' } });
  });

  it('prints its usage for --help, exit 0', async () => {
    const run = await cli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: queue-ops [--config FILE] [--user USER_ID] [--json]');
  });

  describe('an invalid config', () => {
    let server: Server;
    let connections = 0;
    let port: number;

    beforeAll(async () => {
      server = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
      port = (server.address() as { port: number }).port;
    });

    afterAll(async () => {
      await new Promise((closed) => server.close(closed));
    });

    it('is refused before anything connects, every problem named by path on stderr, exit 2', async () => {
      const bad = scene.writeConfig(
        `systems:
  - { name: pushizo, type: bullmq, redis: "redis://127.0.0.1:${port}" }
  - { name: zeus, type: celery, redis: "http://zeus:6379", resultBakend: "redis://x" }
  - { name: pushizo, type: bullmq, redis: \${NOT_SET_ANYWHERE} }
`,
        'bad.yml',
      );
      const run = await cli(['--config', bad, 'status']);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.split('\n')).toEqual([
        `queue-ops: the config in ${bad} is not valid:`,
        '  systems[1].redis: expected a redis://, rediss:// or sentinel:// URL',
        '  systems[1].resultBakend: unknown key',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's literal ${VAR}
        '  systems[2].redis: ${NOT_SET_ANYWHERE} is not set in the environment',
        '  systems[2].name: duplicate system name "pushizo" (also systems[0])',
        '',
      ]);
      expect(connections).toBe(0);
      const json = await cli(['--config', bad, '--json', 'status']);
      expect(json.code).toBe(2);
      expect(onlyJson(json)).toMatchObject({
        ok: false,
        data: null,
        error: {
          code: 'ConfigInvalid',
          problems: expect.arrayContaining(['systems[1].resultBakend: unknown key']),
        },
      });
    });

    it('refuses a Redis URL the client cannot read before anything connects, naming systems[i].redis, never the password', async () => {
      // A generated password with a space and a `#`: the schema's `redis://` pattern matches, but
      // the client cannot read the URL ("unexpected failure: Invalid URL" on every command).
      const bad = scene.writeConfig(
        `systems:
  - { name: pushizo, type: bullmq, redis: "redis://127.0.0.1:${port}" }
  - { name: zeus, type: celery, redis: "redis://:\${ZEUS_REDIS_PASSWORD}@127.0.0.1:${port}/0" }
`,
        'unreadable.yml',
      );
      const run = await cli(['--config', bad, 'status'], {
        env: { ...env(), ZEUS_REDIS_PASSWORD: 'hunter 2#x' },
      });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.split('\n')).toEqual([
        `queue-ops: the config in ${bad} is not valid:`,
        '  systems[1].redis: not a URL the Redis client can read: percent-encode # / ? @ % and spaces in the user and password (# as %23, / as %2F, ? as %3F, @ as %40, % as %25, space as %20)',
        '',
      ]);
      expect(run.stderr).not.toContain('hunter');
      expect(connections).toBe(0);
    });
  });

  it('finds the config through QUEUE_OPS_CONFIG, else ./queue-ops.yml', async () => {
    const viaEnv = await cli(['--json', 'help'], { env: { ...env(), QUEUE_OPS_CONFIG: config } });
    expect(viaEnv.code).toBe(0);
    const viaCwd = await cli(['--json', 'help'], { env: env(), cwd: scene.dir });
    expect(viaCwd.code).toBe(0);
    const missing = await cli(['help'], { env: env(), cwd: join(scene.dir, '..') });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('queue-ops.yml: ENOENT');
  });

  describe('with one system on a closed port', () => {
    let two: string;

    beforeEach(async () => {
      await scene.paused('events', 1);
      two = scene.writeConfig(
        configYaml({
          systems: [
            bullmqSystem('pushizo', envRef('PUSHIZO_REDIS_URL'), scene.prefix),
            { name: 'zeus', type: 'celery', redis: `redis://127.0.0.1:${closedPort}/0` },
          ],
        }),
        'two.yml',
      );
    });

    it('reports that system down while the other reports', async () => {
      const some = await cli(['--config', two, '--json', 'status'], { env: env() });
      expect(some.code).toBe(0);
      const data = onlyJson(some).data as { systems: { name: string; ok: boolean; error?: string }[] };
      expect(data.systems.map((s) => [s.name, s.ok])).toEqual([
        ['pushizo', true],
        ['zeus', false],
      ]);
      expect(data.systems[1]!.error).toContain('not answering');
    });

    it('exits 1 by itself when all it was asked about is down', async () => {
      // The process ends by itself with the answer (one kept alive by a reconnect loop would be
      // killed by execFile's timeout, exit code -1).
      const down = await cli(['--config', two, '--json', 'status', 'zeus'], { env: env() });
      expect(down.code).toBe(1);
      expect(onlyJson(down)).toMatchObject({ ok: false, error: { code: 'RedisUnavailable' } });
    });

    it('answers for the system on the closed port within 5 s: no timer has to run out', async () => {
      // The same command line in this process, with the clock stopped (only timers due now run):
      // the refused connection is the answer, with no timer run out for it (a connect timeout, a
      // reconnect backoff, a grace period before exit). That is the "within 5 s", whatever the
      // machine's speed.
      const out: string[] = [];
      const code = await withClockStopped(() =>
        runCli({
          argv: ['--config', two, '--json', 'status', 'zeus'],
          env: env(),
          cwd: process.cwd(),
          stdout: (text) => out.push(text),
          stderr: () => {},
        }),
      );
      expect(code).toBe(1);
      expect(JSON.parse(out.join(''))).toMatchObject({ ok: false, error: { code: 'RedisUnavailable' } });
    });
  });

  it('acts as --user when given, else as cli:<os user>', async () => {
    const as = await cli(['--config', config, '--user', 'U0ALICE', 'help'], {
      env: { ...env(), LOG_LEVEL: 'info' },
    });
    expect(as.stderr).toContain('"actor":"U0ALICE"');
    const os = await cli(['--config', config, 'help'], { env: { ...env(), LOG_LEVEL: 'info' } });
    expect(os.stderr).toContain(`"actor":"cli:${userInfo().username}"`);
    // Logs stay on stderr: stdout is only the answer.
    expect(os.stdout).not.toContain('"level"');
  });

  describe('with a password-protected Redis', () => {
    const user = `qo_${randomBytes(4).toString('hex')}`;
    const password = `pw-${randomBytes(12).toString('hex')}`;
    let admin: Redis;

    beforeAll(async () => {
      admin = new Redis(redisUrl);
      await admin.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all');
    });

    afterAll(async () => {
      await admin.call('ACL', 'DELUSER', user);
      admin.disconnect();
    });

    it('never prints the password: not in answers, errors or trace logs', async () => {
      await scene.everyState('dispatch-ios');
      const { port } = new URL(redisUrl);
      const secretConfig = scene.writeConfig(
        configYaml({
          systems: [
            bullmqSystem('pushizo', envRef('GOOD'), scene.prefix),
            bullmqSystem('wrongpass', envRef('WRONG'), scene.prefix),
            { name: 'closed', type: 'celery', redis: envRef('CLOSED'), resultBackend: envRef('CLOSED') },
          ],
        }),
        'secret.yml',
      );
      const secretEnv = {
        GOOD: `redis://${user}:${password}@127.0.0.1:${port}/0`,
        WRONG: `redis://${user}:${password}x@127.0.0.1:${port}/0`,
        CLOSED: `redis://:${password}@127.0.0.1:${closedPort}/0`,
        LOG_LEVEL: 'trace',
      };
      const runs = [
        await cli(['--config', secretConfig, '--json', 'status'], { env: secretEnv }),
        await cli(['--config', secretConfig, 'status'], { env: secretEnv }),
        await cli(['--config', secretConfig, 'workers'], { env: secretEnv }),
        await cli(['--config', secretConfig, 'dlq', 'pushizo/dispatch-ios'], { env: secretEnv }),
        await cli(['--config', secretConfig, 'dlq', 'wrongpass/dispatch-ios'], { env: secretEnv }),
        await cli(['--config', secretConfig, 'dlq', 'closed/celery'], { env: secretEnv }),
      ];
      const first = onlyJson(runs[0]!);
      const systems = (first.data as { systems: { name: string; ok: boolean }[] }).systems;
      // The good system really authenticated with the password, the others really failed.
      expect(systems.map((s) => [s.name, s.ok])).toEqual([
        ['pushizo', true],
        ['wrongpass', false],
        ['closed', false],
      ]);
      expect(runs[1]!.stderr).toContain('"level":');
      for (const run of runs) {
        expect(run.stdout).not.toContain(password);
        expect(run.stderr).not.toContain(password);
        expect(run.stdout + run.stderr).not.toContain(encodeURIComponent(password));
      }
    });
  });
});
