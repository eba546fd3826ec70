import { PLAIN_SYSTEM_FACTS } from '../../../src/backends/facts.js';
import type { QueueBackend } from '../../../src/backends/queue-backend.js';
import { ErrorCode, OpsError } from '../../../src/errors.js';

/** One queue of the stub system: jobs ready to run, and failures oldest first. */
interface StubQueue {
  waiting: { id: string; name: string; addedAt: number }[];
  failed: { id: string; name: string; error: string; failedAt: number }[];
}

/**
 * What a stub system holds, in memory: its producer side. Tests fill it the way a real system's
 * client would add jobs and record failures.
 */
export interface StubSystem {
  queues: Map<string, StubQueue>;
  add(queue: string, name: string): void;
  fail(queue: string, name: string, error: string): void;
}

export function createStubSystem(now: () => number = Date.now): StubSystem {
  const queues = new Map<string, StubQueue>();
  let ids = 0;
  const queue = (name: string) => {
    let q = queues.get(name);
    if (!q) {
      q = { waiting: [], failed: [] };
      queues.set(name, q);
    }
    return q;
  };
  return {
    queues,
    add(name, job) {
      queue(name).waiting.push({ id: String(++ids), name: job, addedAt: now() });
    },
    fail(name, job, error) {
      queue(name).failed.push({ id: String(++ids), name: job, error, failedAt: now() + ids });
    },
  };
}

/**
 * A third queue system, as small as the contract allows: the required reads and nothing else.
 * It declares no optional ability (no `retry`, `purger`, `pause`, `job`…), so every command that
 * needs one must say, in one line, that this system cannot, and nothing may take a branch meant
 * for BullMQ or Celery.
 */
export function createStubBackend(
  name: string,
  system: StubSystem,
  options: { down?: boolean; now?: () => number } = {},
): QueueBackend {
  const now = options.now ?? Date.now;
  const reachable = () => {
    if (options.down)
      throw new OpsError(ErrorCode.RedisUnavailable, { system: name, reason: 'connection refused' });
  };
  const names = () => [...system.queues.keys()].sort();
  const backend: QueueBackend = {
    name,
    // A kind no config builds: what it is like, it declares itself, and it is like neither of the others.
    type: 'stub',
    facts: PLAIN_SYSTEM_FACTS,
    async listQueues() {
      reachable();
      return names();
    },
    async status(queues) {
      reachable();
      return {
        name,
        type: backend.type,
        redis: { usedMemoryBytes: 1024, maxMemoryBytes: 0, maxMemoryPolicy: 'noeviction' },
        workers: [],
        warnings: [],
        queues: (queues ?? names()).map((queue) => {
          const q = system.queues.get(queue) ?? { waiting: [], failed: [] };
          const head = q.waiting[0];
          return {
            name: queue,
            waiting: q.waiting.length,
            active: 0,
            delayed: 0,
            prioritized: 0,
            failed: q.failed.length,
            completed: 0,
            waitingChildren: 0,
            isPaused: false,
            oldestWaitingSeconds: head ? Math.max(0, Math.floor((now() - head.addedAt) / 1000)) : null,
          };
        }),
      };
    },
    async dlq(queue, limit, dlqOptions) {
      reachable();
      const failed = [...(system.queues.get(queue)?.failed ?? [])].reverse();
      const grouped = dlqOptions?.newestOnly ? [] : failed;
      const groups = new Map<string, number>();
      for (const job of grouped) groups.set(job.error, (groups.get(job.error) ?? 0) + 1);
      return {
        queue,
        total: failed.length,
        jobs: failed.slice(0, limit).map((job) => ({
          id: job.id,
          name: job.name,
          error: job.error,
          attempts: 1,
          failedAt: job.failedAt,
        })),
        topErrors: [...groups].map(([error, count]) => ({ error, count })).sort((a, b) => b.count - a.count),
        groupedOver: grouped.length,
      };
    },
    async workers() {
      reachable();
      return [];
    },
    async close() {},
  };
  return backend;
}
