import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoPlan } from '../../src/demo/plan.js';
import { withDb } from '../../src/demo/redis.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { runDemo } from './run-demo.js';

/** The database of the shared test Redis that only these tests use. */
const DEMO_DB = 11;

/** The table row of one queue in the rendered status. */
function row(output: string, queue: string): string[] {
  const line = output.split('\n').find((l) => l.startsWith(`${queue} `));
  return line ? line.trim().split(/\s+/) : [];
}

/** The answer to one scripted command: from its `> cmd` echo to the next echo. */
function answer(output: string, command: string): string {
  const start = output.indexOf(`> ${command}\n`);
  if (start === -1) return '';
  const rest = output.slice(start + command.length + 3);
  const next = rest.indexOf('\n> ');
  return next === -1 ? rest : rest.slice(0, next);
}

/** The sample `status` in README: the text block after "What `/queue status` answers". */
function readmeStatusSample(): string {
  const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
  const from = readme.indexOf('```text\n', readme.indexOf('What `/queue status` answers'));
  return readme.slice(from + 8, readme.indexOf('```', from + 8));
}

describe('npm run demo, non-interactive', () => {
  const plan = demoPlan('small');
  const ios = plan.pushizo.queues.find((q) => q.name === 'dispatch-ios')!;
  let admin: Redis;

  beforeAll(async () => {
    admin = new Redis(withDb(testRedisUrl(), DEMO_DB));
    await admin.flushdb();
  });
  afterAll(async () => {
    admin.disconnect();
  });

  it('on a shared Redis, seeds its own database with a real Celery worker, answers each scripted command and leaves the database empty', async () => {
    const { code, stdout, stderr } = await runDemo(
      [
        '--scale',
        'small',
        '--db',
        String(DEMO_DB),
        '--script',
        'status',
        '--script',
        '/queue dlq pushizo/dispatch-ios',
        '--script',
        'dlq zeus/celery:alarm_processing',
      ],
      { env: { REDIS_URL: testRedisUrl() } },
    );
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout).toContain(`database ${DEMO_DB}`);
    expect(stdout).toContain('a real Celery worker');

    const status = answer(stdout, 'status');
    // queue, waiting (prioritized included), active, delayed, of which prio, failed: no worker
    // consumes dispatch-ios, so these hold still
    expect(row(status, 'dispatch-ios').slice(0, 6)).toEqual([
      'dispatch-ios',
      String(ios.waiting + ios.prioritized),
      '0',
      String(ios.delayed),
      String(ios.prioritized),
      String(ios.failures.reduce((n, f) => n + f.count, 0)),
    ]);
    expect(row(status, 'dispatch-ios').join(' ')).toContain('no workers');
    expect(row(status, 'maintenance').join(' ')).toContain('paused');

    // README's sample is what `npm run demo` (the full seed) prints: the same columns as this
    // answer, and the full plan's numbers where no worker moves them.
    const sample = readmeStatusSample();
    const headers = (text: string) => text.split('\n').filter((l) => l.startsWith('queue '));
    expect(headers(sample)).toEqual(headers(status));
    const full = demoPlan('full').pushizo.queues.find((q) => q.name === 'dispatch-ios')!;
    expect(row(sample, 'dispatch-ios').slice(0, 6)).toEqual(
      [
        'dispatch-ios',
        full.waiting + full.prioritized,
        0,
        full.delayed,
        full.prioritized,
        full.failures.reduce((n, f) => n + f.count, 0),
      ].map((v) => (typeof v === 'number' ? v.toLocaleString('en-US') : v)),
    );

    const dlq = answer(stdout, '/queue dlq pushizo/dispatch-ios');
    expect(dlq).toContain('APNs 429 TooManyRequests');
    expect(dlq).toContain('RenderError: template variable missing');
    expect(dlq).toContain('3 attempts');

    const celery = answer(stdout, 'dlq zeus/celery:alarm_processing');
    expect(celery).toContain('ConnectionError: MQTT broker unreachable');
    expect(celery).toContain('app.tasks.alarm.check_alarms');
    expect(code).toBe(0);

    expect(await admin.dbsize()).toBe(0);
  }, 120_000);

  it('without REDIS_URL starts its own redis-server, and with Celery simulated says so and still shows depth over the priority lists and the failures', async () => {
    const alarms = plan.zeus.queues.find((q) => q.name === 'celery:alarm_processing')!;
    const { code, stdout } = await runDemo([
      '--scale',
      'small',
      '--simulate-celery',
      '--script',
      'status zeus',
      '--script',
      'dlq zeus/celery:alarm_processing',
      '--script',
      'dlq nope/x',
    ]);
    expect(stdout).toContain('private redis-server');
    expect(stdout).toContain('SIMULATED');
    expect(row(answer(stdout, 'status zeus'), 'celery:alarm_processing')[1]).toBe(
      String(alarms.byPriority.reduce((a, b) => a + b, 0)),
    );
    expect(answer(stdout, 'dlq zeus/celery:alarm_processing')).toContain(
      'ConnectionError: MQTT broker unreachable',
    );
    const bad = answer(stdout, 'dlq nope/x').trim();
    expect(bad.split('\n')).toHaveLength(1);
    expect(bad).toContain('nope');
    expect(code).toBe(1);
  }, 120_000);

  it('with neither a reachable REDIS_URL nor redis-server on the PATH, exits 1 with one line that names the redis-server package and no password', async () => {
    const { code, stdout, stderr } = await runDemo(['--scale', 'small'], {
      inheritEnv: false,
      env: { PATH: '/nonexistent', HOME: process.env.HOME, REDIS_URL: 'redis://:hunter22@127.0.0.1:1/0' },
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('redis-server package');
    expect(stderr).toContain('ECONNREFUSED');
    expect(stderr).not.toContain('hunter22');
  }, 60_000);

  it('refuses a bad option in one line with exit code 2', async () => {
    // Both at once: each is a fresh process that exits before it starts anything.
    const [{ code, stdout, stderr }, tr] = await Promise.all([
      runDemo(['--scale', 'huge']),
      runDemo(['--locale', 'tr', '--bogus']),
    ]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('--scale');
    // With --locale tr on the line, in Turkish, and an unknown option named as such.
    expect(tr.code).toBe(2);
    expect(tr.stderr.trim()).toBe('queue-ops demo: bilinmeyen seçenek --bogus (bkz. --help)');
  }, 60_000);
});
