/**
 * What the demo puts in each queue, shaped like the two seed runbooks: Pushizo's BullMQ queues
 * (prefix `hs`) with a campaign backlog in `audience`/`dispatch-*`, provider rate limits showing as
 * delayed jobs, and Zeus's Celery queues with an alarm backlog. Tests read the same plan to know
 * which numbers the demo must show.
 */

export type DemoScale = 'full' | 'small';

/** A kind of failure a real worker produces by throwing. */
export interface FailurePlan {
  /** BullMQ job name or Celery task name. */
  task: string;
  error: string;
  count: number;
  /** BullMQ: attempts before the job lands in the failed set; Celery: retries + 1. */
  attempts: number;
}

/** A worker that stays up during the console session and works through its queue slowly. */
export interface LiveWorkerPlan {
  name: string;
  concurrency: number;
  jobMs: number;
}

export interface BullmqQueuePlan {
  name: string;
  /** Name of the backlog jobs. */
  jobName: string;
  waiting: number;
  /** Spread of the backlog's creation times: the oldest waiting job is this old. */
  oldestMinutes: number;
  delayed: number;
  /** What the delay stands for, e.g. a provider's rate limit. */
  delayMinutes: [number, number];
  prioritized: number;
  failures: FailurePlan[];
  paused: boolean;
  liveWorker?: LiveWorkerPlan;
}

export interface CeleryQueuePlan {
  name: string;
  task: string;
  /** Messages per kombu priority step (0, 3, 6, 9). */
  byPriority: [number, number, number, number];
  failures: FailurePlan[];
  /** Whether the demo's live Celery worker keeps consuming this queue. */
  consumed: boolean;
}

export interface DemoPlan {
  scale: DemoScale;
  pushizo: { name: 'pushizo'; prefix: 'hs'; queues: BullmqQueuePlan[] };
  zeus: { name: 'zeus'; queues: CeleryQueuePlan[]; worker: LiveWorkerPlan };
}

const fail = (task: string, error: string, count: number, attempts = 1): FailurePlan => ({
  task,
  error,
  count,
  attempts,
});

const bull = (
  name: string,
  jobName: string,
  waiting: number,
  rest: Partial<Omit<BullmqQueuePlan, 'name' | 'jobName' | 'waiting'>> = {},
): BullmqQueuePlan => ({
  name,
  jobName,
  waiting,
  oldestMinutes: rest.oldestMinutes ?? 10,
  delayed: rest.delayed ?? 0,
  delayMinutes: rest.delayMinutes ?? [1, 15],
  prioritized: rest.prioritized ?? 0,
  failures: rest.failures ?? [],
  paused: rest.paused ?? false,
  liveWorker: rest.liveWorker,
});

const APNS_429 = 'APNs 429 TooManyRequests';
const FCM_UNAVAILABLE = 'FCM UNAVAILABLE: provider timed out';
const RENDER_ERROR = 'RenderError: template variable missing: first_name';
const WEBHOOK_TIMEOUT = 'webhook POST https://customer.example/hook timed out after 10000ms';

const FULL: DemoPlan = {
  scale: 'full',
  pushizo: {
    name: 'pushizo',
    prefix: 'hs',
    queues: [
      bull('scheduler', 'campaign.schedule', 3, {
        delayed: 14,
        delayMinutes: [20, 240],
        liveWorker: { name: 'worker-scheduler', concurrency: 1, jobMs: 4000 },
      }),
      bull('audience', 'audience.expand', 22_000, {
        oldestMinutes: 35,
        liveWorker: { name: 'worker-audience', concurrency: 2, jobMs: 3000 },
      }),
      bull('dispatch-ios', 'deliver.apns', 48_000, {
        oldestMinutes: 42,
        delayed: 1_800,
        delayMinutes: [1, 12],
        prioritized: 250,
        failures: [fail('deliver.apns', APNS_429, 140, 3), fail('deliver.apns', RENDER_ERROR, 12)],
      }),
      bull('dispatch-android', 'deliver.fcm', 9_500, {
        oldestMinutes: 18,
        delayed: 300,
        failures: [fail('deliver.fcm', FCM_UNAVAILABLE, 60, 3)],
        liveWorker: { name: 'worker-dispatch', concurrency: 1, jobMs: 2000 },
      }),
      bull('dispatch-hms', 'deliver.hms', 420, {
        failures: [fail('deliver.hms', 'HMS 80000000: provider timed out', 8, 3)],
      }),
      bull('dispatch-web', 'deliver.webpush', 2_100, {
        failures: [fail('deliver.webpush', 'WebPush 410 Gone: subscription expired', 25)],
      }),
      bull('dispatch-email', 'deliver.email', 5_300, {
        delayed: 600,
        delayMinutes: [5, 30],
        failures: [fail('deliver.email', RENDER_ERROR, 30)],
      }),
      bull('dispatch-sms', 'deliver.sms', 700, {
        failures: [fail('deliver.sms', 'Twilio 21610: recipient unsubscribed', 5)],
      }),
      bull('events', 'event.ingest', 6_000, {
        oldestMinutes: 4,
        liveWorker: { name: 'worker-system', concurrency: 4, jobMs: 1500 },
      }),
      bull('webhooks', 'webhook.deliver', 900, {
        oldestMinutes: 25,
        failures: [fail('webhook.deliver', WEBHOOK_TIMEOUT, 75, 5)],
      }),
      bull('journeys', 'journey.step', 150, { delayed: 3_200, delayMinutes: [60, 1440] }),
      bull('maintenance', 'retention.rollup', 4, { oldestMinutes: 90, paused: true }),
    ],
  },
  zeus: {
    name: 'zeus',
    worker: { name: 'zeus-worker-1@demo', concurrency: 2, jobMs: 2500 },
    queues: [
      {
        name: 'celery',
        task: 'app.tasks.housekeeping.cleanup_sessions',
        byPriority: [120, 0, 0, 0],
        failures: [],
        consumed: false,
      },
      {
        name: 'celery:default',
        task: 'app.tasks.reports.generate_daily',
        byPriority: [2_400, 0, 0, 0],
        failures: [
          fail('app.tasks.reports.generate_daily', 'OperationalError: could not connect to server', 6),
        ],
        consumed: false,
      },
      {
        name: 'celery:alarm_processing',
        task: 'app.tasks.alarm.check_alarms',
        byPriority: [7_000, 1_200, 300, 40],
        failures: [fail('app.tasks.alarm.check_alarms', 'ConnectionError: MQTT broker unreachable', 40, 2)],
        consumed: false,
      },
      {
        name: 'celery:notification_sending',
        task: 'app.tasks.notification.send_push',
        byPriority: [3_100, 0, 0, 0],
        failures: [fail('app.tasks.notification.send_push', `TimeoutError: ${FCM_UNAVAILABLE}`, 18)],
        consumed: true,
      },
      {
        name: 'celery:ota_processing',
        task: 'app.tasks.ota.push_firmware',
        byPriority: [640, 0, 0, 0],
        failures: [
          fail(
            'app.tasks.ota.push_firmware',
            'TimeoutError: device did not acknowledge chunk 14/32 in 30s',
            9,
          ),
        ],
        consumed: false,
      },
      {
        name: 'celery:measurement_processing',
        task: 'app.tasks.measurement.ingest_batch',
        byPriority: [31_000, 0, 0, 0],
        failures: [],
        consumed: false,
      },
    ],
  },
};

const shrink = (n: number, by: number) => (n === 0 ? 0 : Math.max(1, Math.ceil(n / by)));

/** The demo's contents at a scale; `small` keeps every shape (each non-empty state stays non-empty). */
export function demoPlan(scale: DemoScale = 'full'): DemoPlan {
  if (scale === 'full') return structuredClone(FULL);
  const plan = structuredClone(FULL);
  plan.scale = 'small';
  for (const q of plan.pushizo.queues) {
    q.waiting = shrink(q.waiting, 100);
    q.delayed = shrink(q.delayed, 100);
    q.prioritized = shrink(q.prioritized, 50);
    for (const f of q.failures) f.count = shrink(f.count, 10);
  }
  for (const q of plan.zeus.queues) {
    q.byPriority = q.byPriority.map((n) => shrink(n, 100)) as CeleryQueuePlan['byPriority'];
    for (const f of q.failures) f.count = shrink(f.count, 10);
  }
  return plan;
}

/** Jobs and messages a plan creates, for the "seeded N in S s" line. */
export function plannedTotal(plan: DemoPlan): number {
  let total = 0;
  for (const q of plan.pushizo.queues) {
    total += q.waiting + q.delayed + q.prioritized + q.failures.reduce((n, f) => n + f.count, 0);
  }
  for (const q of plan.zeus.queues) {
    total += q.byPriority.reduce((a, b) => a + b, 0) + q.failures.reduce((n, f) => n + f.count, 0);
  }
  return total;
}
