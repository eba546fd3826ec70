import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { QueueCounts, SystemStatus, WorkerInfo } from '../../src/backends/queue-backend.js';
import { dlqMessage } from '../../src/blocks/dlq.js';
import { type StatusSystem, statusMessage } from '../../src/blocks/status.js';
import { validateMessage } from '../../src/blocks/validate.js';
import { workersMessage } from '../../src/blocks/workers.js';
import { NOW, renderedStrings } from './fixtures.js';

const name = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.string({ minLength: 1, maxLength: 400 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }),
  fc.constantFrom('<!channel>', '<@U123>', '<http://x|y>', '&&&', '```', 'celery:alarm_processing'),
);
const count = fc.oneof(fc.constant(0), fc.nat({ max: 50 }), fc.nat({ max: 2_000_000_000 }));
const queueArb: fc.Arbitrary<QueueCounts> = fc.record({
  name,
  waiting: count,
  active: count,
  delayed: count,
  prioritized: count,
  failed: count,
  completed: count,
  waitingChildren: count,
  isPaused: fc.boolean(),
  oldestWaitingSeconds: fc.option(fc.nat({ max: 10_000_000 }), { nil: null }),
});
const workerArb: fc.Arbitrary<WorkerInfo> = fc.record(
  {
    name,
    queues: fc.array(name, { maxLength: 12 }),
    active: fc.nat({ max: 64 }),
    activeTasks: fc.array(
      fc.record({ id: name, name, startedAt: fc.integer({ min: 0, max: NOW.getTime() }) }),
      {
        maxLength: 4,
      },
    ),
    idleSeconds: fc.nat({ max: 100_000 }),
  },
  { requiredKeys: ['name'] },
);
const systemArb: fc.Arbitrary<StatusSystem> = fc.oneof(
  fc.record({
    name,
    type: fc.constantFrom('bullmq' as const, 'celery' as const),
    ok: fc.constant(true as const),
    status: fc.record({
      name,
      type: fc.constantFrom('bullmq' as const, 'celery' as const),
      redis: fc.record({
        usedMemoryBytes: fc.nat({ max: 2 ** 40 }),
        maxMemoryBytes: fc.nat({ max: 2 ** 40 }),
        maxMemoryPolicy: name,
      }),
      queues: fc.array(queueArb, { maxLength: 400 }),
      workers: fc.array(workerArb, { maxLength: 30 }),
      warnings: fc.array(
        fc.record({
          code: fc.constantFrom(
            'EvictionPolicy' as const,
            'MemoryHigh' as const,
            'WorkerInspectFailed' as const,
          ),
          params: fc.dictionary(fc.constantFrom('policy', 'percent', 'reason'), fc.oneof(name, fc.nat())),
        }),
        { maxLength: 3 },
      ),
    }) as fc.Arbitrary<SystemStatus>,
  }),
  fc.record({
    name,
    type: fc.constantFrom('bullmq' as const, 'celery' as const),
    ok: fc.constant(false as const),
    error: fc.string({ maxLength: 5000 }),
  }),
);

const safe = (strings: string[]) => strings.every((s) => !s.includes('<') && !/&(?!amp;|lt;|gt;)/.test(s));

describe('every builder, for any input', () => {
  it('produces a status message inside Slack limits with nothing unescaped', () => {
    fc.assert(
      fc.property(fc.array(systemArb, { maxLength: 8 }), name, (systems, scope) => {
        const m = statusMessage({ scope, generatedAt: NOW, systems }, 'en');
        expect(validateMessage(m)).toEqual([]);
        expect(safe([...renderedStrings(m.blocks), m.text])).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('produces a DLQ message inside Slack limits for up to 100 jobs of any shape', () => {
    const job = fc.record({
      id: name,
      name,
      error: fc.string({ maxLength: 3000 }),
      attempts: fc.nat({ max: 1000 }),
      failedAt: fc.option(fc.integer({ min: 0, max: NOW.getTime() + 1e9 }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(job, { maxLength: 100 }), name, name, (jobs, system, queueName) => {
        const m = dlqMessage(
          {
            system,
            type: 'bullmq',
            sample: {
              queue: queueName,
              total: jobs.length * 7,
              jobs,
              topErrors: jobs.slice(0, 5).map((j) => ({ error: j.error, count: 2 })),
              groupedOver: 500,
            },
            limit: 100,
            generatedAt: NOW,
          },
          'en',
        );
        expect(validateMessage(m)).toEqual([]);
        expect(safe([...renderedStrings(m.blocks), m.text])).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('produces a workers message inside Slack limits', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(name, fc.array(workerArb, { maxLength: 200 })), { maxLength: 6 }),
        (systems) => {
          const m = workersMessage(
            {
              generatedAt: NOW,
              systems: systems.map(([n, workers]) => ({
                name: n,
                type: 'celery' as const,
                ok: true as const,
                workers,
              })),
            },
            'en',
          );
          expect(validateMessage(m)).toEqual([]);
          expect(safe([...renderedStrings(m.blocks), m.text])).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });
});
