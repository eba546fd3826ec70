import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds the suite's longest files took on 2 cores (2026-12-03), most of it waiting: real 30 s
 * outages, leases running out, workers and rollouts timing out.
 */
const EXPECTED_SECONDS: Record<string, number> = {
  'test/store/postgres-store.test.ts': 37,
  'test/faults/alert-post-kill.test.ts': 33,
  'test/scalers/restart-kube-compose.test.ts': 28,
  'test/faults/postgres-outage.test.ts': 31,
  'test/faults/postgres-partition.test.ts': 30,
  'test/demo/demo-run.test.ts': 26,
  'test/faults/approval-kill.test.ts': 30,
  'test/faults/redis-purge-celery.test.ts': 26,
  'test/faults/redis-purge-bullmq.test.ts': 25,
  'test/backends/redis-shapes.test.ts': 24,
  'test/backends/celery.test.ts': 24,
  'test/escalation/replicas.test.ts': 23,
  'test/scalers/restart-celery.test.ts': 21,
  'test/faults/redis-snapshot.test.ts': 9,
  'test/i18n/new-locale.test.ts': 20,
  'test/faults/redis-retry.test.ts': 18,
  'test/hostile/secrets.test.ts': 16,
  'test/backends/celery-contract.test.ts': 16,
  'test/scalers/celery.test.ts': 15,
  'test/transports/slack/refused-token.test.ts': 15,
  'test/purge/filtered-purge.test.ts': 14,
  'test/demo/demo-incident.test.ts': 14,
  'test/cli/lazy-loading.test.ts': 13,
  'test/store/verify-while-writing.test.ts': 13,
  'test/purge/kill-restart.test.ts': 12,
  'test/replicas/two-replicas.test.ts': 11,
  'test/backends/reconnect.test.ts': 11,
  'test/faults/redis-status.test.ts': 11,
  'test/cli/cli.test.ts': 11,
  'test/faults/alert-outbox-faults.test.ts': 9,
  'test/escalation/persistence-and-crash-loop.test.ts': 8,
  'test/commands/celery-pause.test.ts': 8,
  'test/purge/celery-purge.test.ts': 8,
  'test/faults/purge-kill-bot.test.ts': 8,
  'test/escalation/monitor-once.test.ts': 8,
  'test/purge/bullmq-purge.test.ts': 7,
  'test/faults/redis-undo.test.ts': 7,
  'test/escalation/alerts-trust.test.ts': 7,
  'test/approvals/postgres-flow.test.ts': 6,
  'test/backends/bullmq/retry-script.test.ts': 6,
  'test/approvals/service.test.ts': 6,
  'test/faults/bullmq-retry-deadline.test.ts': 5,
  'test/commands/bookkeeping.test.ts': 5,
  'test/metrics/socket-mode.test.ts': 5,
  'test/scalers/bullmq.test.ts': 5,
};

/**
 * Longest files first, so that three workers never start a 30-second file last and leave the
 * other two idle meanwhile. Vitest's own order does that only once it has timed a run: on a
 * clean clone (CI) it starts the largest files first, and these long ones are small. A file's
 * last timing from the cache, where there is one, comes before the table above.
 */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const root = this.ctx.config.root;
    const seconds = (spec: TestSpecification) => {
      const path = relative(root, spec.moduleId);
      const timed = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`);
      return timed ? timed.duration / 1000 : (EXPECTED_SECONDS[path] ?? 0);
    };
    return ordered
      .map((spec, at) => ({ spec, at, seconds: seconds(spec) }))
      .sort((a, b) => b.seconds - a.seconds || a.at - b.at)
      .map(({ spec }) => spec);
  }
}
