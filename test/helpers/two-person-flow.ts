import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFor, deletePrefix } from './bullmq-jobs.js';
import { AUDIT_CONTENT_COLUMNS, type CliRun, jsonOf, requestOf, runCli, tempDir } from './cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from './config-file.js';
import { testRedisUrl } from './test-redis.js';

type Row = Record<string, unknown>;

/** Each step spawns the CLI several times (about a second each, more on a busy machine). */
const STEP_MS = 120_000;

/** The bot's store as a test sees it: what goes in `store:`, and raw SQL behind the bot's back. */
export interface StoreUnderTest {
  /** The `store:` value of the config. */
  spec: string;
  /** Raw SQL on the same tables, `?` placeholders; bypasses the store (to tamper with it). */
  sql(query: string, params?: unknown[]): Promise<Row[]>;
  destroy(): Promise<void>;
}

/**
 * Two people take a pause (and a resume) of a real BullMQ queue through request → approval →
 * execution, each step a separate run of the real command line with `--user`; then the audit
 * trail in `store` verifies, exports, and reports each kind of tampering.
 */
export function describeTwoPersonFlow(
  label: string,
  makeStore: (dir: string) => Promise<StoreUnderTest>,
): void {
  describe(`two people pause and resume a BullMQ queue from the command line (${label})`, () => {
    const redisUrl = testRedisUrl();
    const prefix = `qa${randomBytes(5).toString('hex')}`;
    const queueName = 'dispatch-ios';
    const target = `pushizo/${queueName}`;
    let tmp: ReturnType<typeof tempDir>;
    let store: StoreUnderTest;
    let config: string;
    let queue: Queue;
    /** A time between the pause and the resume, for `audit export --since`. */
    let betweenPauseAndResume: string;

    const as = (user: string, ...words: string[]) =>
      runCli(['--config', config, '--user', user, '--json', ...words]);
    const verify = () => runCli(['--config', config, '--json', 'audit', 'verify']);
    const statusOf = async () => {
      const out = jsonOf(await as('U0DAVE', 'status', target));
      const systems = (out.data as { systems: { queues: { name: string; isPaused: boolean }[] }[] }).systems;
      return systems[0]!.queues.find((q) => q.name === queueName)!;
    };
    const expectBroken = (run: CliRun, seq: number, reason: RegExp) => {
      expect(run.code, run.stderr).toBe(1);
      const out = jsonOf(run);
      expect(out.ok).toBe(false);
      expect(out.error?.code).toBe('AuditChainBroken');
      expect(out.data).toMatchObject({ ok: false, firstBad: { seq } });
      expect((out.data as { firstBad: { reason: string } }).firstBad.reason).toMatch(reason);
      expect(out.message.text).toContain(`#${seq}`);
    };

    beforeAll(async () => {
      tmp = tempDir(label.replace(/\W+/g, '-'));
      store = await makeStore(tmp.dir);
      queue = new Queue(queueName, { connection: connectionFor(redisUrl), prefix });
      await queue.addBulk([1, 2, 3].map((n) => ({ name: 'deliver.apns', data: { n } })));
      config = writeConfigFile(tmp.dir, {
        store: store.spec,
        roles: TEST_ROLES,
        policies: {
          pause: { role: 'operator', approvals: 1 },
          resume: { role: 'operator', approvals: 1 },
        },
        // Both people are played from this one shell (one OS user): allowed here on purpose.
        approvals: { cliSameOsUser: 'allow' },
        systems: [bullmqSystem('pushizo', redisUrl, prefix, { queues: [queueName] })],
      });
    });

    afterAll(async () => {
      await queue?.close();
      await deletePrefix(redisUrl, prefix);
      await store?.destroy();
      tmp?.remove();
    });

    it(
      'a pause asked by one operator waits, refuses its requester and a viewer, and runs when a second operator approves',
      async () => {
        const asked = await as('U0ALICE', 'pause', target);
        expect(asked.code, asked.stderr).toBe(0);
        const request = requestOf(asked);
        const askedAt = Date.now();
        expect(request).toMatchObject({
          id: expect.stringMatching(/^r-[a-z0-9]{8}$/),
          action: 'pause',
          target,
          status: 'pending',
          requestedBy: 'U0ALICE',
          expiresAt: expect.any(String),
          preview: expect.stringContaining(`pause ${target}: 3 waiting jobs`),
        });
        const expiresIn = Date.parse(request.expiresAt) - askedAt;
        expect(expiresIn).toBeGreaterThan(14 * 60_000);
        expect(expiresIn).toBeLessThanOrEqual(15 * 60_000);
        expect(await queue.isPaused()).toBe(false);

        const pending = jsonOf(await as('U0DAVE', 'pending'));
        expect((pending.data as { requests: { id: string }[] }).requests.map((r) => r.id)).toEqual([
          request.id,
        ]);

        const own = await as('U0ALICE', 'approve', request.id);
        expect(own.code).toBe(1);
        expect(jsonOf(own).error?.code).toBe('SelfApproval');

        const viewer = await as('U0DAVE', 'approve', request.id);
        expect(viewer.code).toBe(1);
        expect(jsonOf(viewer).error?.code).toBe('Forbidden');
        expect(jsonOf(viewer).error?.message).toContain('operator');
        expect(await queue.isPaused()).toBe(false);

        const approved = await as('U0CAROL', 'approve', request.id);
        expect(approved.code, approved.stderr).toBe(0);
        const done = requestOf(approved);
        expect(done).toMatchObject({
          id: request.id,
          action: 'pause',
          target,
          status: 'done',
          requestedBy: 'U0ALICE',
          approvals: ['U0CAROL'],
          result: { queue: queueName, isPaused: true },
        });
        expect(await queue.isPaused()).toBe(true);
        expect((await statusOf()).isPaused).toBe(true);

        // a second click on the same request is a no-op, not a second pause
        const again = await as('U0BOB', 'approve', request.id);
        expect(again.code).toBe(1);
        expect(jsonOf(again).error?.code).toBe('RequestNotPending');
      },
      STEP_MS,
    );

    it(
      'a resume goes through the same two people, and afterwards nothing is pending and the audit chain verifies',
      async () => {
        betweenPauseAndResume = new Date().toISOString();
        const asked = await as('U0CAROL', 'resume', target);
        expect(asked.code, asked.stderr).toBe(0);
        const request = requestOf(asked);
        expect(request).toMatchObject({ action: 'resume', status: 'pending', requestedBy: 'U0CAROL' });
        expect(await queue.isPaused()).toBe(true);

        const approved = await as('U0ALICE', 'approve', request.id);
        expect(approved.code, approved.stderr).toBe(0);
        expect(requestOf(approved)).toMatchObject({
          status: 'done',
          approvals: ['U0ALICE'],
          result: { queue: queueName, isPaused: false },
        });
        expect(await queue.isPaused()).toBe(false);
        expect((await statusOf()).isPaused).toBe(false);

        const pending = await as('U0ALICE', 'pending');
        expect(pending.code).toBe(0);
        expect((jsonOf(pending).data as { requests: unknown[] }).requests).toEqual([]);

        const verified = await verify();
        expect(verified.code, verified.stdout).toBe(0);
        expect(jsonOf(verified).data).toMatchObject({ ok: true, count: expect.any(Number) });
      },
      STEP_MS,
    );

    it(
      'audit export --since prints one JSON entry per line from that time on, in chain order',
      async () => {
        const run = await runCli(['--config', config, 'audit', 'export', '--since', betweenPauseAndResume]);
        expect(run.code, run.stderr).toBe(0);
        const lines = run.stdout.split('\n').filter((line) => line !== '');
        const entries = lines.map((line) => JSON.parse(line) as Row);
        expect(entries.length).toBeGreaterThan(3);
        expect(entries.every((e) => String(e.at) >= betweenPauseAndResume)).toBe(true);
        const seqs = entries.map((e) => Number(e.seq));
        expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
        const actions = entries.map((e) => `${e.actorId} ${e.action} ${e.outcome}`);
        expect(actions).toContain('U0CAROL request.created requested');
        expect(actions).toContain('U0ALICE request.approved approved');
        expect(actions).toContain('U0ALICE action.resume done');
        expect(actions.some((a) => a.includes('action.pause'))).toBe(false);

        const all = await runCli(['--config', config, 'audit', 'export']);
        const everything = all.stdout.split('\n').filter((line) => line !== '');
        const kinds = everything
          .map((line) => JSON.parse(line) as Row)
          .map((e) => `${e.actorId} ${e.action}`);
        expect(kinds).toContain('U0ALICE request.created');
        expect(kinds).toContain('U0CAROL action.pause');
        expect(kinds.filter((k) => k.endsWith('request.approve'))).toEqual([
          'U0ALICE request.approve',
          'U0DAVE request.approve',
        ]);
        // `--user` is a claim, not a login: every command entry keeps the OS user who typed it.
        const commandEntries = everything
          .map((line) => JSON.parse(line) as Row)
          .filter((e) => String(e.action).startsWith('command.'));
        expect(commandEntries.length).toBeGreaterThan(0);
        for (const entry of commandEntries) {
          expect((entry.params as { osUser?: string }).osUser).toBe(userInfo().username);
        }
      },
      STEP_MS,
    );

    it(
      'an audit row edited in the database makes audit verify exit 1 naming that entry, and verifies again once undone',
      async () => {
        const [row] = await store.sql(
          'SELECT seq, outcome FROM audit_log WHERE action = ? ORDER BY seq LIMIT 1',
          ['action.pause'],
        );
        const seq = Number(row!.seq);
        await store.sql('UPDATE audit_log SET outcome = ? WHERE seq = ?', ['failed', seq]);
        expectBroken(await verify(), seq, /edited/);
        await store.sql('UPDATE audit_log SET outcome = ? WHERE seq = ?', [row!.outcome, seq]);
        expect((await verify()).code).toBe(0);
      },
      STEP_MS,
    );

    it(
      'an audit row deleted from the middle makes audit verify exit 1 at the entry after the gap, naming the missing one',
      async () => {
        const [row] = await store.sql('SELECT * FROM audit_log WHERE seq = ?', [3]);
        await store.sql('DELETE FROM audit_log WHERE seq = ?', [3]);
        expectBroken(await verify(), 4, /#3 is missing/);
        const columns = ['seq', ...AUDIT_CONTENT_COLUMNS];
        await store.sql(
          `INSERT INTO audit_log (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
          columns.map((c) => row![c]),
        );
        expect((await verify()).code).toBe(0);
      },
      STEP_MS,
    );

    it(
      'two audit rows swapped in the database make audit verify exit 1 at the first of them',
      async () => {
        const rows = await store.sql('SELECT * FROM audit_log WHERE seq IN (?, ?) ORDER BY seq', [2, 3]);
        const [two, three] = rows as [Row, Row];
        const assign = AUDIT_CONTENT_COLUMNS.map((c) => `${c} = ?`).join(', ');
        const put = (row: Row, seq: number) =>
          store.sql(`UPDATE audit_log SET ${assign} WHERE seq = ?`, [
            ...AUDIT_CONTENT_COLUMNS.map((c) => row[c]),
            seq,
          ]);
        await put(three, 2);
        await put(two, 3);
        expectBroken(await verify(), 2, /link|start the chain/);
        await put(two, 2);
        await put(three, 3);
        expect((await verify()).code).toBe(0);
      },
      STEP_MS,
    );
  });
}
