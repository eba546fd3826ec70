import { describe, expect, it } from 'vitest';
import { queueFlags } from '../../src/blocks/status.js';
import { queue } from './fixtures.js';

const consumer = (queues?: string[]) => ({ name: 'w1', queues });

describe('queueFlags', () => {
  it('flags nothing on a quiet queue with a worker', () => {
    expect(
      queueFlags(queue('scheduler', { waiting: 3, oldestWaitingSeconds: 2 }), [consumer(['scheduler'])]),
    ).toEqual([]);
  });

  it('calls 1000 waiting plus prioritized jobs a backlog, and 999 not', () => {
    const w = [consumer()];
    expect(queueFlags(queue('audience', { waiting: 600, prioritized: 400 }), w)).toEqual(['backlog']);
    expect(queueFlags(queue('audience', { waiting: 600, prioritized: 399 }), w)).toEqual([]);
  });

  it('calls a job waiting 300 seconds a backlog even when few jobs wait', () => {
    expect(queueFlags(queue('webhooks', { waiting: 1, oldestWaitingSeconds: 300 }), [consumer()])).toEqual([
      'backlog',
    ]);
    expect(queueFlags(queue('webhooks', { waiting: 1, oldestWaitingSeconds: 299 }), [consumer()])).toEqual(
      [],
    );
  });

  it('lets the caller override both backlog thresholds', () => {
    const q = queue('events', { waiting: 50, oldestWaitingSeconds: 40 });
    expect(queueFlags(q, [consumer()], { backlogJobs: 50 })).toEqual(['backlog']);
    expect(queueFlags(q, [consumer()], { backlogAgeSeconds: 30 })).toEqual(['backlog']);
    expect(queueFlags(q, [consumer()], { backlogJobs: 51, backlogAgeSeconds: 41 })).toEqual([]);
  });

  it('flags failures when any job failed', () => {
    expect(queueFlags(queue('dispatch-ios', { failed: 1 }), [])).toEqual(['failures']);
  });

  it('flags a paused queue as paused and not as lacking workers', () => {
    expect(queueFlags(queue('maintenance', { waiting: 3, isPaused: true }), [])).toEqual(['paused']);
  });

  it('flags no workers when jobs wait and no worker lists the queue', () => {
    const workers = [consumer(['dispatch-ios']), consumer(['celery:default'])];
    expect(queueFlags(queue('dispatch-hms', { waiting: 2 }), workers)).toEqual(['noWorkers']);
    expect(queueFlags(queue('dispatch-hms', { prioritized: 1 }), workers)).toEqual(['noWorkers']);
    expect(queueFlags(queue('dispatch-ios', { waiting: 2 }), workers)).toEqual([]);
  });

  it('does not flag no workers when nothing waits', () => {
    expect(queueFlags(queue('dispatch-hms', { delayed: 40 }), [])).toEqual([]);
  });

  it('takes a worker without queue information to consume every queue', () => {
    expect(queueFlags(queue('celery:ota_processing', { waiting: 5 }), [consumer(undefined)])).toEqual([]);
  });

  it('lists several flags most severe first', () => {
    expect(queueFlags(queue('dispatch-ios', { waiting: 48_211, failed: 312 }), [])).toEqual([
      'noWorkers',
      'backlog',
      'failures',
    ]);
  });
});
