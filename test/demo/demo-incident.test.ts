import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoPlan } from '../../src/demo/plan.js';
import { runDemo } from './run-demo.js';

/** The answer to the n-th (from 0) scripted `command`: from its `> command` echo to the next echo. */
function answer(output: string, command: string, occurrence = 0): string {
  let start = -1;
  for (let i = 0; i <= occurrence; i++) {
    start = output.indexOf(`> ${command}\n`, start + 1);
    if (start === -1) return '';
  }
  const rest = output.slice(start + command.length + 3);
  const next = rest.indexOf('\n> ');
  return next === -1 ? rest : rest.slice(0, next);
}

describe('npm run demo -- --script: a whole incident', () => {
  it('status, dlq, a purge approved by the second admin and its undo, scale and restart of the Compose group and of the real Celery pool, alerts, trend, timeline and audit verify, all in the demo’s temp dir', async () => {
    const ios = demoPlan('small').pushizo.queues.find((q) => q.name === 'dispatch-ios')!;
    const failed = ios.failures.reduce((n, f) => n + f.count, 0);
    const script = [
      'status pushizo',
      'dlq pushizo/dispatch-ios',
      ':user U0BOB',
      'purge pushizo/dispatch-ios failed',
      ':user U0CAROL',
      '1', // Approve: the purge runs
      '1', // Undo this purge: a request of its own, by U0CAROL
      ':user U0BOB',
      '1', // Approve the undo
      'dlq pushizo/dispatch-ios',
      ':user U0ALICE',
      'scale pushizo/dispatch 3',
      ':user U0BOB',
      '1',
      'workers pushizo',
      ':user U0ALICE',
      'scale zeus/pool 3',
      ':user U0CAROL',
      '1',
      ':user U0ALICE',
      'restart zeus/pool',
      ':user U0BOB',
      '1',
      ':user U0ALICE',
      'restart pushizo/dispatch',
      ':user U0CAROL',
      '1',
      'alerts',
      'trend pushizo/dispatch-ios',
      'timeline',
      'audit verify',
    ];
    const { code, stdout, stderr } = await runDemo([
      '--scale',
      'small',
      ...script.flatMap((line) => ['--script', line]),
    ]);
    expect(stderr).not.toMatch(/\n\s+at /);
    // The banner: who can approve what, both worker groups, the monitor, where the chart goes.
    expect(stdout).toContain('People:  U0ALICE operator · U0BOB admin · U0CAROL admin.');
    expect(stdout).toMatch(/pause, scale and restart: U0ALICE asks, U0BOB or U0CAROL approves/);
    expect(stdout).toMatch(/purge and undo: one admin asks \(U0BOB\), the other \(U0CAROL\) approves/);
    expect(stdout).toMatch(/pushizo\/dispatch is a Compose service \(worker-dispatch\): a stand-in docker/);
    expect(stdout).toContain('zeus/pool is the pool of the real Celery worker zeus-worker-1@demo');
    expect(stdout).toMatch(/Monitor: runs every 5 s inside the demo, over 3 h of back-filled samples/);
    const dir = /Files: +everything the demo writes is under (\S+), removed on exit\./.exec(stdout)?.[1];
    expect(dir).toBeDefined();
    expect(stdout).toContain(`Charts:  trend pushizo/dispatch-ios writes its chart to ${dir}/charts/`);

    expect(answer(stdout, 'status pushizo')).toContain('dispatch-ios');
    expect(answer(stdout, 'dlq pushizo/dispatch-ios')).toContain('APNs 429 TooManyRequests');

    const asked = answer(stdout, 'purge pushizo/dispatch-ios failed');
    expect(asked).toContain('Waiting for approval');
    expect(asked).toContain('Requested by U0BOB');
    const purgeId = /`(r-[a-z0-9]+)`/.exec(asked)?.[1];
    const purged = answer(stdout, '1', 0);
    expect(purged).toContain('Done');
    expect(purged).toContain(
      `Purged ${failed} of ${failed} archived jobs. Archive: ${dir}/archive/${purgeId}.`,
    );
    expect(purged).toContain('Approved by U0CAROL');
    expect(purged).toMatch(/\[1\] Undo this purge/);

    const undoAsked = answer(stdout, '1', 1);
    expect(undoAsked).toContain(`undo ${purgeId}: restore ${failed} jobs of pushizo/dispatch-ios`);
    expect(undoAsked).toContain('Requested by U0CAROL');
    const undone = answer(stdout, '1', 2);
    expect(undone).toContain(`Restored ${failed} jobs of purge ${purgeId}.`);
    expect(undone).toContain('Approved by U0BOB');
    expect(answer(stdout, 'dlq pushizo/dispatch-ios', 1)).toContain('APNs 429 TooManyRequests');

    // Compose: the stand-in docker was asked to scale, and answers ps with what it was told.
    expect(answer(stdout, 'scale pushizo/dispatch 3')).toContain(
      'scale pushizo/dispatch (Compose): worker-dispatch 1 → 3 running containers.',
    );
    expect(answer(stdout, '1', 3)).toMatch(/Done[\s\S]*Approved by U0BOB/);
    expect(answer(stdout, 'workers pushizo')).toMatch(/dispatch[\s\S]*worker-dispatch[^\n]*3/);

    // Celery: the demo's real worker grows its pool.
    expect(answer(stdout, 'scale zeus/pool 3')).toContain('zeus-worker-1@demo 2 → 3 processes');
    expect(answer(stdout, '1', 4)).toContain(
      'zeus-worker-1@demo 2 → 3 processes (answered “pool will grow”)',
    );

    // Restarts: the real Celery worker gets pool_restart and answers again; Compose goes through the stand-in.
    expect(stdout).toContain(
      'restart zeus/pool sends pool_restart to zeus-worker-1@demo (it runs with worker_pool_restarts=True)',
    );
    expect(answer(stdout, 'restart zeus/pool')).toContain(
      'restart zeus/pool (Celery pool): pool_restart of zeus-worker-1@demo (their pool processes are replaced). Then waits up to 20 s for them to answer again.',
    );
    expect(answer(stdout, '1', 5)).toMatch(
      /zeus-worker-1@demo: pool_restart \(answered “reload started”\)\. All back within \d+ s \(1 of 1\): zeus-worker-1@demo\./,
    );
    expect(answer(stdout, 'restart pushizo/dispatch')).toContain(
      `restart pushizo/dispatch (Compose): docker compose -p pushizo -f ${dir}/docker-compose.yml restart worker-dispatch (3 running containers).`,
    );
    expect(answer(stdout, '1', 6)).toMatch(
      /docker compose restart worker-dispatch: 3 → 3 running containers/,
    );

    // Monitoring from the start: alerts, the sparkline and the chart file, the alert in the timeline.
    expect(answer(stdout, 'alerts')).toMatch(/CRITICAL alarm-latency on zeus\/celery:alarm_processing/);
    const trend = answer(stdout, 'trend pushizo/dispatch-ios');
    expect(trend).toMatch(/^waiting +[▁▂▃▄▅▆▇█]{40} /m);
    expect(trend).toMatch(/\b(5\d|6\d) samples from/);
    expect(trend).toContain(`Chart written to ${dir}/charts/trend-pushizo-dispatch-ios-1h.png`);
    const timeline = answer(stdout, 'timeline');
    expect(timeline).toMatch(/\| monitor \| alert alarm-latency fired on zeus\/celery:alarm_processing/);
    expect(timeline).toContain(`| U0CAROL | approved purge pushizo/dispatch-ios (${purgeId})`);
    expect(timeline).toMatch(/\| U0BOB \| undo pushizo\/dispatch-ios done: restored \d+/);
    expect(timeline).toContain('scale pushizo/dispatch done: scaled to 3 (worker-dispatch 1 → 3)');
    expect(timeline).toContain('scale zeus/pool done: scaled to 3 (zeus-worker-1@demo 2 → 3)');
    expect(timeline).toContain('restart zeus/pool done: restarted, 1 of 1 back');
    expect(answer(stdout, 'audit verify')).toMatch(/Audit chain verified: \d+ entries, unbroken/);
    expect(code).toBe(0);

    // Everything it wrote (archive, chart, store, stand-in docker) went with its temp dir.
    expect(existsSync(dir!)).toBe(false);
    expect(existsSync(join(process.cwd(), 'data', 'archive', purgeId!))).toBe(false);
  }, 180_000);
});
