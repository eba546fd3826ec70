import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite.js';
import { runCli as runCliIn } from '../../src/transports/cli/run.js';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { type CliRun, jsonOf, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { sampleAlert } from '../store/escalation-contract.js';

/** The command line in this process (the same runCli the binary calls): a real store, real Redis. */
async function runCli(argv: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCliIn({
    argv,
    env: {},
    cwd: process.cwd(),
    osUser: 'tester',
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

describe('queue-ops timeline: the audit trail and the alert history of a span, in order', () => {
  const redisUrl = testRedisUrl();
  const prefix = randomName('tl');
  const queueName = 'dispatch-ios';
  let temp: ReturnType<typeof tempDir>;
  let config: string;
  let queue: Queue;
  const db = () => join(temp.dir, 'queue-ops.db');
  const as = (user: string, ...words: string[]) => runCli(['--config', config, '--user', user, ...words]);

  beforeAll(async () => {
    temp = tempDir('timeline');
    queue = new Queue(queueName, { connection: connectionFor(redisUrl), prefix });
    await queue.add('deliver.apns', { token: 'SECRET-PAYLOAD' });
    config = writeConfigFile(temp.dir, {
      store: `sqlite:${db()}`,
      roles: { viewer: ['*'], operator: ['U0ALICE', 'U0BOB'] },
      policies: { pause: { role: 'operator', approvals: 1 } },
      approvals: { cliSameOsUser: 'allow' },
      systems: [
        bullmqSystem('pushizo', redisUrl, prefix, { queues: [queueName] }),
        bullmqSystem('zeus', redisUrl, `${prefix}z`),
      ],
    });
    // An alert that fired a minute ago and resolved 30 s ago (the monitor's own store writes).
    const store = createSqliteStore(db());
    await store.migrate();
    const fired = await store.escalation.insertAlert(
      sampleAlert({
        key: 'backlog|pushizo/dispatch-ios',
        openedAt: new Date(Date.now() - 50_000).toISOString(),
        updatedAt: new Date(Date.now() - 50_000).toISOString(),
      }),
      [],
    );
    const at = new Date(Date.now() - 30_000).toISOString();
    await store.escalation.writeAlert({ ...fired!, status: 'resolved', resolvedAt: at, updatedAt: at }, []);
    await store.escalation.insertAlert(
      sampleAlert({
        key: 'backlog|zeus/x',
        system: 'zeus',
        subject: 'zeus/x',
        queue: 'x',
        rule: 'zeusrule',
        openedAt: new Date(Date.now() - 40_000).toISOString(),
        updatedAt: new Date(Date.now() - 40_000).toISOString(),
      }),
      [],
    );
    await store.close();

    expect((await as('U0ALICE', 'status', 'pushizo')).code).toBe(0);
    expect((await as('U0ALICE', 'dlq', `pushizo/${queueName}`)).code).toBe(0);
    const requested = jsonOf(await as('U0ALICE', '--json', 'pause', `pushizo/${queueName}`));
    const id = (requested.data as { request: { id: string } }).request.id;
    const approved = await as('U0BOB', 'approve', id);
    expect(approved.code, approved.stderr).toBe(0);
    expect(await queue.isPaused()).toBe(true);
  });

  afterAll(async () => {
    await queue?.close();
    await deletePrefix(redisUrl, prefix);
    temp?.remove();
  });

  describe('the last ten minutes as Markdown', () => {
    let run: CliRun;
    beforeAll(async () => {
      run = await as('U0CAROL', 'timeline', '--since', '10m');
    });

    it('prints a Markdown table in order: alert fired, looks, request, approval, the action and its outcome, alert resolved', () => {
      expect(run.code, run.stderr).toBe(0);
      const out = run.stdout;
      expect(out).toMatch(/^# Incident timeline /);
      expect(out).toContain('| Time (UTC) | Who | What |');
      const order = [
        'alert backlog fired on pushizo/dispatch-ios (CRITICAL, threshold 100)',
        'alert backlog resolved on pushizo/dispatch-ios',
        '| U0ALICE | looked at status pushizo |',
        `| U0ALICE | looked at dlq pushizo/${queueName} |`,
        `| U0ALICE | requested pause pushizo/${queueName} (r-`,
        `| U0BOB | approved pause pushizo/${queueName} (r-`,
        `| U0BOB | pause pushizo/${queueName} done: `,
      ];
      for (const line of order) expect(out).toContain(line);
      const positions = order.slice(2).map((line) => out.indexOf(line));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(out.indexOf(order[0]!)).toBeLessThan(out.indexOf(order[1]!));
      expect(out).not.toContain('SECRET-PAYLOAD');
    });

    it('gives the chain verdict', () => {
      expect(run.stdout).toMatch(
        /Audit chain verified: \d+ entries unbroken, including this span's #1–#\d+\./,
      );
    });
  });

  describe('the last ten minutes of one system as --json', () => {
    let data: {
      since: string;
      until: string;
      system: string;
      events: { kind: string; subject?: string }[];
      verification: { ok: boolean };
    };
    let ok: boolean;
    beforeAll(async () => {
      const out = jsonOf(await as('U0CAROL', '--json', 'timeline', '--since', '10m', 'zeus'));
      ok = out.ok;
      data = out.data as typeof data;
    });

    it('carries { since, until, events, verification }', () => {
      expect(ok).toBe(true);
      expect(Date.parse(data.until) - Date.parse(data.since)).toBe(600_000);
      expect(data.verification.ok).toBe(true);
    });

    it('a system filter keeps only its events', () => {
      expect(data.system).toBe('zeus');
      expect(data.events.map((e) => e.kind)).toEqual(['alert.fired']);
      expect(data.events[0]?.subject).toBe('zeus/x');
    });
  });

  it('a span with nothing in it says so', async () => {
    const empty = await as(
      'U0CAROL',
      'timeline',
      '--since',
      '2024-01-01T00:00:00Z',
      '--until',
      '2024-01-01T01:00:00Z',
    );
    expect(empty.stdout).toContain('Nothing was recorded in this span');
  });

  it('bad input is one line naming what is valid', async () => {
    const bad = await as('U0CAROL', 'timeline', '--since', 'yesterday');
    expect(bad.code).not.toBe(0);
    expect(`${bad.stdout}${bad.stderr}`).toContain('--since yesterday is not a time');
    expect(`${bad.stdout}${bad.stderr}`).toContain('2h');
    expect(`${bad.stdout}${bad.stderr}`).not.toMatch(/at .*\.ts:\d+/);
    const unknown = await as('U0CAROL', 'timeline', 'nosuch');
    expect(`${unknown.stdout}${unknown.stderr}`).toContain('nosuch');
  });

  it('says so when an entry in the span was edited: the chain is broken within it', async () => {
    const raw = new Database(db());
    raw.prepare("UPDATE audit_log SET outcome = 'forged' WHERE seq = 2").run();
    raw.close();
    const run = await as('U0CAROL', 'timeline', '--since', '10m');
    expect(run.stdout).toContain('Audit chain BROKEN at #2');
  });
});
