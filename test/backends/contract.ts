import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { QueueBackend } from '../../src/backends/queue-backend.js';
import { OpsError } from '../../src/errors.js';
import { withTimersFrozen } from '../helpers/frozen-timers.js';

/** What a queue in a contract scenario holds, created through the system's own client. */
export interface SeedQueue {
  name: string;
  /** Jobs that are ready and not yet picked up. */
  waiting: number;
  /** Jobs that failed, oldest first; each error is the message the task raised. */
  failures: { taskName: string; error: string }[];
}

/**
 * A backend under test, over a real Redis. `seed` must create jobs the way the real system does
 * (BullMQ's Queue/Worker, a real Celery producer and worker), never by writing Redis keys by hand.
 */
export interface BackendFixture {
  backend: QueueBackend;
  seed(queues: SeedQueue[]): Promise<void>;
  /** A backend for the same system whose Redis refuses connections (a closed port). */
  unreachableBackend(): QueueBackend;
  cleanup(): Promise<void>;
}

/**
 * The behaviour every QueueBackend must have. Each backend's test file calls this once:
 * `describeQueueBackend('celery', makeCeleryFixture)`.
 */
export function describeQueueBackend(label: string, makeFixture: () => Promise<BackendFixture>) {
  describe(`${label} backend contract`, () => {
    const scenario: SeedQueue[] = [
      { name: 'alpha', waiting: 5, failures: [] },
      {
        name: 'beta',
        waiting: 2,
        failures: [
          { taskName: 'send', error: 'ConnectionError: provider timed out' },
          { taskName: 'send', error: 'ConnectionError: provider timed out' },
          { taskName: 'render', error: 'RenderError: <b>bad</b> & @channel' },
        ],
      },
    ];
    let fx: BackendFixture;

    beforeEach(async () => {
      fx = await makeFixture();
    });

    afterEach(async () => {
      await fx.cleanup();
    });

    it('discovers the queues it was given jobs for', async () => {
      await fx.seed(scenario);
      const queues = await fx.backend.listQueues();
      expect(queues).toEqual(expect.arrayContaining(['alpha', 'beta']));
    });

    it('reports waiting and failed counts per queue, and Redis memory, in one status call', async () => {
      await fx.seed(scenario);
      const status = await fx.backend.status();
      const byName = new Map(status.queues.map((q) => [q.name, q]));
      expect(byName.get('alpha')).toMatchObject({ waiting: 5, failed: 0, isPaused: false });
      expect(byName.get('beta')).toMatchObject({ waiting: 2, failed: 3 });
      expect(status.redis.usedMemoryBytes).toBeGreaterThan(0);
      expect(typeof status.redis.maxMemoryPolicy).toBe('string');
      const alpha = byName.get('alpha');
      expect(alpha?.oldestWaitingSeconds === null || (alpha?.oldestWaitingSeconds ?? -1) >= 0).toBe(true);
    });

    it('limits status to the queues asked for', async () => {
      await fx.seed(scenario);
      const status = await fx.backend.status(['beta']);
      expect(status.queues.map((q) => q.name)).toEqual(['beta']);
    });

    it('samples dead letters newest first, within the limit, without job data', async () => {
      await fx.seed(scenario);
      const sample = await fx.backend.dlq('beta', 2);
      expect(sample.total).toBe(3);
      expect(sample.jobs).toHaveLength(2);
      expect(sample.jobs[0]?.error).toContain('RenderError');
      expect(sample.jobs[0]?.name).toContain('render');
      const times = sample.jobs.map((j) => j.failedAt ?? 0);
      expect(times[0]).toBeGreaterThanOrEqual(times[1] ?? 0);
      for (const job of sample.jobs) {
        expect(Object.keys(job).sort()).toEqual(['attempts', 'error', 'failedAt', 'id', 'name']);
        expect(job.error).not.toContain('\n');
      }
    });

    it('samples the newest dead letters alone, as the full sample lists them, when asked for no groups', async () => {
      await fx.seed(scenario);
      const full = await fx.backend.dlq('beta', 2);
      const newest = await fx.backend.dlq('beta', 2, { newestOnly: true });
      expect(newest.total).toBe(3);
      expect(newest.jobs).toEqual(full.jobs);
      expect(newest.groupedOver).toBeLessThanOrEqual(2);
    });

    it('where it lists the next jobs: at most the limit, ids and names only, each once', async () => {
      expect(typeof fx.unreachableBackend().nextJobs).toBe(typeof fx.backend.nextJobs);
      if (!fx.backend.nextJobs) return;
      await fx.seed(scenario);
      const next = await fx.backend.nextJobs('alpha', 3);
      expect(next).toHaveLength(3);
      for (const job of next) expect(Object.keys(job).sort()).toEqual(['id', 'name']);
      expect(new Set(next.map((j) => j.id)).size).toBe(3);
      expect(await fx.backend.nextJobs('beta', 10)).toHaveLength(2);
    });

    it('answers an empty sample for a queue with no failures', async () => {
      await fx.seed(scenario);
      const sample = await fx.backend.dlq('alpha', 10);
      expect(sample).toMatchObject({ total: 0, jobs: [] });
    });

    it('where it can retry: previews without changing anything, refuses what is not a failed job, retries the newest up to the limit', async () => {
      const { backend } = fx;
      // An ability is declared by its method: a backend without `retry` has no preview either.
      if (!backend.retry) {
        expect(backend.previewRetry).toBeUndefined();
        return;
      }
      await fx.seed(scenario);
      const newest = (await backend.dlq('beta', 2)).jobs.map((job) => job.id);
      const waitingBefore = (await backend.status(['beta'])).queues[0]!;
      const preview = await backend.previewRetry!('beta', { all: true, limit: 2 });
      expect(preview).toMatchObject({ queue: 'beta', count: 2, failed: 3 });
      expect(preview.topErrors.map((e) => e.error).sort()).toEqual([
        'ConnectionError: provider timed out',
        'RenderError: <b>bad</b> & @channel',
      ]);
      expect((await backend.dlq('beta', 10)).total).toBe(3);
      await expect(backend.previewRetry!('alpha', { all: true, limit: 10 })).rejects.toMatchObject({
        code: 'NothingToRetry',
      });
      await expect(backend.retry!('beta', { jobId: 'no-such-job' })).rejects.toMatchObject({
        code: 'UnknownJob',
      });

      const progress: [number, number][] = [];
      const outcome = await backend.retry!('beta', { all: true, limit: 2 }, (done, total) =>
        progress.push([done, total]),
      );
      expect(outcome.retried).toBe(2);
      expect(outcome.skipped).toBe(0);
      expect(Object.keys(outcome.ids).sort()).toEqual([...newest].sort());
      expect(progress.at(-1)).toEqual([2, 2]);
      expect((await backend.dlq('beta', 10)).total).toBe(1);
      const after = (await backend.status(['beta'])).queues[0]!;
      expect(after.waiting + after.prioritized).toBe(waitingBefore.waiting + waitingBefore.prioritized + 2);
    });

    describe('with a second backend whose Redis refuses connections', () => {
      let down: QueueBackend;

      beforeEach(() => {
        down = fx.unreachableBackend();
      });

      afterEach(async () => {
        await down.close();
      });

      it('reports a Redis that does not answer as RedisUnavailable within 5 seconds', async () => {
        // Its Redis refuses the connection: that is the answer, with no timer run out for it (a
        // connect or command timeout, a reconnect backoff), whatever the machine's speed.
        const error = await withTimersFrozen(() => down.status()).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpsError);
        expect((error as OpsError).code).toBe('RedisUnavailable');
        expect(String((error as OpsError).params.reason ?? '')).not.toMatch(/secret-password/);
      });

      it('where it reads Redis’ signals for why: memory against its limit, uptime, refusals, its own round trip; RedisUnavailable when down', async () => {
        expect(typeof down.redisSignals).toBe(typeof fx.backend.redisSignals);
        if (!fx.backend.redisSignals || !down.redisSignals) return;
        const signals = await fx.backend.redisSignals();
        expect(signals.usedBytes).toBeGreaterThan(0);
        expect(signals).toMatchObject({ policy: expect.any(String), loading: false });
        expect(signals.uptimeSeconds).toBeGreaterThanOrEqual(0);
        expect(typeof signals.oomRejections).toBe('number');
        expect(signals.connectionsReceived).toBeGreaterThan(0);
        expect(signals.roundTripMs).toBeGreaterThanOrEqual(0);
        const error = await down.redisSignals().catch((e: unknown) => e);
        expect((error as OpsError).code).toBe('RedisUnavailable');
      });

      it('where it lists running work: nothing while nothing runs, RedisUnavailable when Redis is down', async () => {
        expect(typeof down.running).toBe(typeof fx.backend.running);
        if (!fx.backend.running || !down.running) return;
        expect(await fx.backend.running()).toEqual([]);
        const error = await down.running().catch((e: unknown) => e);
        expect((error as OpsError).code).toBe('RedisUnavailable');
      });
    });
  });
}
