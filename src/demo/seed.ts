import { join } from 'node:path';
import { type DemoPlan, type DemoScale, demoPlan, plannedTotal } from './plan.js';
import { seedBullmq } from './seed-bullmq.js';
import { celeryAvailable, SYSTEM_PYTHON, seedCelery } from './seed-celery.js';

export type { DemoPlan, DemoScale } from './plan.js';
export { demoPlan } from './plan.js';

export interface SeedOptions {
  /** A redis:// URL that selects the demo's own database. */
  redisUrl: string;
  scale?: DemoScale;
  /** Where the Celery worker's log goes. */
  workDir: string;
  python?: string;
  /** Write Celery's wire format directly even when python3-celery is installed. */
  simulateCelery?: boolean;
}

/** The demo's queues, filled, with their live workers running until `stop()`. */
export interface SeededDemo {
  plan: DemoPlan;
  celeryMode: 'real' | 'simulated';
  /** Jobs and messages created. */
  total: number;
  seconds: number;
  /** `queue: worker` for BullMQ, Celery node names. */
  workers: string[];
  stop(): Promise<void>;
}

/** Whether the Celery half will be a real Celery worker (python3-celery importable). */
export function willUseRealCelery(options: Pick<SeedOptions, 'python' | 'simulateCelery'> = {}): boolean {
  return !options.simulateCelery && celeryAvailable(options.python ?? SYSTEM_PYTHON);
}

/**
 * Fills a BullMQ system `pushizo` and a Celery system `zeus` shaped like the seed runbooks, both
 * at once. Failures come from real workers that throw; the backlog from BullMQ's addBulk and
 * Celery's wire format in pipelined LPUSHes.
 */
export async function seedDemo(options: SeedOptions): Promise<SeededDemo> {
  const plan = demoPlan(options.scale ?? 'full');
  const started = Date.now();
  const python = options.python ?? SYSTEM_PYTHON;
  const realCelery = willUseRealCelery(options);
  const [bullmq, celery] = await Promise.allSettled([
    seedBullmq(options.redisUrl, plan.pushizo),
    seedCelery(options.redisUrl, plan.zeus, {
      logFile: join(options.workDir, 'celery-worker.log'),
      python,
      forceSimulated: !realCelery,
    }),
  ]);
  if (bullmq.status === 'rejected' || celery.status === 'rejected') {
    if (bullmq.status === 'fulfilled') await bullmq.value.stop();
    if (celery.status === 'fulfilled') await celery.value.stop();
    throw bullmq.status === 'rejected' ? bullmq.reason : (celery as PromiseRejectedResult).reason;
  }
  const seconds = (Date.now() - started) / 1000;
  return {
    plan,
    celeryMode: celery.value.mode,
    total: plannedTotal(plan),
    seconds,
    workers: [...bullmq.value.workers, ...celery.value.workers],
    async stop() {
      await Promise.all([bullmq.value.stop(), celery.value.stop()]);
    },
  };
}
