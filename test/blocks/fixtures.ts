import type {
  DlqSample,
  FailedJob,
  QueueCounts,
  SystemStatus,
  WorkerInfo,
} from '../../src/backends/queue-backend.js';
import type { StatusSystem } from '../../src/blocks/status.js';

/** The Pushizo runbook's BullMQ queues (prefix `hs`). */
export const PUSHIZO_QUEUES = [
  'scheduler',
  'audience',
  'dispatch-ios',
  'dispatch-android',
  'dispatch-hms',
  'dispatch-web',
  'dispatch-email',
  'dispatch-sms',
  'events',
  'webhooks',
  'journeys',
  'maintenance',
];

/** The Zeus runbook's Celery queues. */
export const ZEUS_QUEUES = [
  'celery',
  'celery:default',
  'celery:alarm_processing',
  'celery:notification_sending',
  'celery:ota_processing',
  'celery:measurement_processing',
];

export const NOW = new Date('2026-03-01T10:04:12Z');

export function queue(name: string, over: Partial<QueueCounts> = {}): QueueCounts {
  return {
    name,
    waiting: 0,
    active: 0,
    delayed: 0,
    prioritized: 0,
    failed: 0,
    completed: 0,
    waitingChildren: 0,
    isPaused: false,
    oldestWaitingSeconds: null,
    ...over,
  };
}

/** `n` queue names shaped like Pushizo's: the runbook's twelve, then per-tenant dispatch queues. */
export function pushizoNames(n: number): string[] {
  const names = PUSHIZO_QUEUES.slice(0, n);
  for (let i = names.length; i < n; i++) names.push(`dispatch-tenant-${String(i).padStart(3, '0')}`);
  return names;
}

/** A deterministic spread of healthy, backed-up, failing and paused queues. */
export function pushizoQueues(n: number): QueueCounts[] {
  return pushizoNames(n).map((name, i) => {
    if (name === 'dispatch-ios') {
      return queue(name, {
        waiting: 48_211,
        active: 4,
        failed: 312,
        delayed: 120,
        oldestWaitingSeconds: 11_520,
      });
    }
    if (name === 'audience')
      return queue(name, { waiting: 1_204_332, active: 2, oldestWaitingSeconds: 3_600 });
    if (name === 'webhooks')
      return queue(name, { waiting: 12, failed: 7, active: 1, oldestWaitingSeconds: 14 });
    if (name === 'maintenance') return queue(name, { waiting: 3, isPaused: true, oldestWaitingSeconds: 900 });
    return queue(name, {
      waiting: (i * 37) % 400,
      active: i % 3,
      prioritized: i % 11 === 0 ? 5 : 0,
      failed: i % 3 === 0 ? i : 0,
      oldestWaitingSeconds: (i * 37) % 400 > 0 ? (i * 13) % 200 : null,
    });
  });
}

export function pushizoWorkers(queues: string[]): WorkerInfo[] {
  // dispatch-hms has nobody consuming it: the status must say so.
  return queues
    .filter((q) => q !== 'dispatch-hms')
    .map((q, i) => ({ name: `worker-${q}-${i}`, queues: [q], idleSeconds: i % 5 }));
}

export function pushizoStatus(n: number): SystemStatus {
  const queues = pushizoQueues(n);
  return {
    name: 'pushizo',
    type: 'bullmq',
    redis: { usedMemoryBytes: 1_288_490_189, maxMemoryBytes: 4 * 1024 ** 3, maxMemoryPolicy: 'noeviction' },
    queues,
    workers: pushizoWorkers(queues.map((q) => q.name)),
    warnings: [],
  };
}

export function zeusStatus(): SystemStatus {
  return {
    name: 'zeus',
    type: 'celery',
    redis: { usedMemoryBytes: 851_443_712, maxMemoryBytes: 0, maxMemoryPolicy: 'allkeys-lru' },
    queues: [
      queue('celery', { waiting: 4 }),
      queue('celery:default', { waiting: 0 }),
      queue('celery:alarm_processing', {
        waiting: 18_402,
        active: 8,
        failed: 41,
        oldestWaitingSeconds: null,
      }),
      queue('celery:notification_sending', { waiting: 2, active: 1 }),
      queue('celery:ota_processing', { waiting: 0, failed: 3 }),
      queue('celery:measurement_processing', { waiting: 77 }),
    ],
    workers: [
      {
        name: 'celery@zeus-worker-1',
        queues: ['celery', 'celery:default', 'celery:alarm_processing', 'celery:measurement_processing'],
        active: 2,
        activeTasks: [
          { id: 'a1', name: 'zeus.alarms.process_alarm', startedAt: NOW.getTime() - 754_000 },
          { id: 'a2', name: 'zeus.measurements.ingest', startedAt: NOW.getTime() - 12_000 },
        ],
        details: { pool: 'prefork', concurrency: 8 },
      },
      {
        name: 'celery@zeus-worker-2',
        queues: ['celery:notification_sending'],
        active: 0,
        activeTasks: [],
      },
    ],
    unacked: 9,
    warnings: [{ code: 'EvictionPolicy', params: { policy: 'allkeys-lru' } }],
  };
}

/** Several systems whose queue count adds up to `total` (0, 1, 12, 300…), plus one that is down. */
export function systemsWithQueues(total: number): StatusSystem[] {
  const zeus = zeusStatus();
  const zeusCount = Math.min(zeus.queues.length, Math.floor(total / 2));
  zeus.queues = zeus.queues.slice(0, zeusCount);
  const pushizo = pushizoStatus(total - zeusCount);
  return [
    { name: 'pushizo', type: 'bullmq', ok: true, status: pushizo },
    { name: 'zeus', type: 'celery', ok: true, status: zeus },
    {
      name: 'billing',
      type: 'bullmq',
      ok: false,
      error: 'Redis for `billing` is not answering (connect ETIMEDOUT)',
    },
  ];
}

export function failedJobs(n: number, errorLength = 80, celery = false): FailedJob[] {
  return Array.from({ length: n }, (_, i) => {
    const base = celery
      ? `ConnectionError: Error 111 connecting to db-${i}:5432. Connection refused.`
      : `ProviderError: APNs answered 429 TooManyProviderTokenUpdates for device batch ${i}`;
    return {
      id: celery ? `7f3c2a10-5b1e-4c8e-9a${String(i).padStart(2, '0')}-0c1d2e3f4a5b` : String(183_442 - i),
      name: celery ? 'zeus.notifications.send_notification' : 'send-push',
      error: base.padEnd(errorLength, ' x'),
      attempts: (i % 3) + 1,
      failedAt: NOW.getTime() - i * 61_000,
    };
  });
}

export function dlqSample(queueName: string, jobs: FailedJob[], total = jobs.length): DlqSample {
  return {
    queue: queueName,
    total,
    jobs,
    topErrors: [
      { error: jobs[0]?.error ?? 'ProviderError: APNs 429', count: 212 },
      { error: 'TimeoutError: provider did not answer within 10000 ms', count: 64 },
    ],
    groupedOver: 500,
  };
}

/** Every string in the JSON except the ids and values Slack never renders. */
export function renderedStrings(node: unknown, key = ''): string[] {
  if (typeof node === 'string')
    return key === 'value' || key === 'action_id' || key === 'block_id' ? [] : [node];
  if (Array.isArray(node)) return node.flatMap((n) => renderedStrings(n, key));
  if (node && typeof node === 'object') {
    return Object.entries(node).flatMap(([k, v]) => renderedStrings(v, k));
  }
  return [];
}
