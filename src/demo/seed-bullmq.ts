import { type ConnectionOptions, type JobsOptions, Queue, Worker } from 'bullmq';
import type { BullmqQueuePlan, DemoPlan } from './plan.js';

/** ioredis options for BullMQ from a redis:// URL (BullMQ takes options, not a URL). */
export function bullmqConnection(url: string): ConnectionOptions {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    db: Number(parsed.pathname.slice(1) || 0),
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

/** What a provider's SDK would throw; the demo's failing worker throws these. */
class ProviderError extends Error {}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = (min: number, max: number) => min + Math.random() * (max - min);

/** addBulk is a MULTI of one Lua call per job; 2,000 per round trip keeps memory flat and Redis responsive. */
const CHUNK = 2000;

async function addInChunks(
  queue: Queue,
  count: number,
  make: (i: number) => { name: string; data: Record<string, unknown>; opts?: JobsOptions },
): Promise<void> {
  for (let start = 0; start < count; start += CHUNK) {
    const end = Math.min(count, start + CHUNK);
    const jobs = [];
    for (let i = start; i < end; i++) jobs.push(make(i));
    await queue.addBulk(jobs);
  }
}

/**
 * Produces real failures: the jobs go in first, on an otherwise empty queue, and a real Worker
 * throws for each (retrying up to `attempts`), so failedReason, attemptsMade, finishedOn and the
 * failed set are exactly what BullMQ writes.
 */
async function produceFailures(connection: ConnectionOptions, prefix: string, plan: BullmqQueuePlan) {
  const total = plan.failures.reduce((n, f) => n + f.count, 0);
  if (total === 0) return;
  const queue = new Queue(plan.name, { connection, prefix });
  try {
    let n = 0;
    const jobs = plan.failures.flatMap((failure, kind) =>
      Array.from({ length: failure.count }, () => ({
        name: failure.task,
        data: { deliveryId: `dlv_${(++n).toString(36)}`, kind },
        opts: { attempts: failure.attempts, removeOnFail: { count: 5000 } },
      })),
    );
    await queue.addBulk(jobs);
    const worker = new Worker(
      plan.name,
      async (job) => {
        const failure = plan.failures[job.data.kind as number];
        throw new ProviderError(failure?.error ?? 'unknown failure');
      },
      { connection, prefix, concurrency: 50, name: 'seed-failing-run', autorun: true },
    );
    worker.on('error', () => {});
    const deadline = Date.now() + 30_000;
    while ((await queue.getFailedCount()) < total) {
      if (Date.now() > deadline) throw new Error(`${plan.name}: failures were not produced within 30s`);
      await sleep(25);
    }
    await worker.close();
  } finally {
    await queue.close();
  }
}

async function fillBacklog(connection: ConnectionOptions, prefix: string, plan: BullmqQueuePlan) {
  const queue = new Queue(plan.name, { connection, prefix });
  try {
    const now = Date.now();
    const span = plan.oldestMinutes * 60_000;
    // Oldest first, so the job at the consuming end of `wait` is the oldest one, as in production.
    await addInChunks(queue, plan.waiting, (i) => ({
      name: plan.jobName,
      data: { deliveryId: `dlv_w${i.toString(36)}` },
      opts: { timestamp: Math.round(now - span + (span * i) / Math.max(1, plan.waiting)) },
    }));
    await addInChunks(queue, plan.prioritized, (i) => ({
      name: plan.jobName,
      data: { deliveryId: `dlv_p${i.toString(36)}`, transactional: true },
      opts: { priority: 1 + (i % 3) },
    }));
    const [lo, hi] = plan.delayMinutes;
    await addInChunks(queue, plan.delayed, (i) => ({
      name: plan.jobName,
      data: { deliveryId: `dlv_d${i.toString(36)}` },
      opts: { delay: Math.round(pick(lo, hi) * 60_000) },
    }));
    if (plan.paused) await queue.pause();
  } finally {
    await queue.close();
  }
}

/** The workers that stay up during the demo; slow on purpose, so the backlog persists. */
function startLiveWorker(
  connection: ConnectionOptions,
  prefix: string,
  plan: BullmqQueuePlan,
): Worker | null {
  const live = plan.liveWorker;
  if (!live) return null;
  const worker = new Worker(
    plan.name,
    async () => {
      await sleep(live.jobMs);
      return { delivered: true };
    },
    {
      connection,
      prefix,
      concurrency: live.concurrency,
      name: live.name,
      removeOnComplete: { count: 1000 },
    },
  );
  // A Redis that goes away at shutdown must not crash the demo.
  worker.on('error', () => {});
  return worker;
}

export interface SeededBullmq {
  workers: string[];
  stop(): Promise<void>;
}

/** Fills the pushizo system with real BullMQ calls and starts its live workers. */
export async function seedBullmq(url: string, plan: DemoPlan['pushizo']): Promise<SeededBullmq> {
  const connection = bullmqConnection(url);
  await Promise.all(plan.queues.map((q) => produceFailures(connection, plan.prefix, q)));
  await Promise.all(plan.queues.map((q) => fillBacklog(connection, plan.prefix, q)));
  const workers = plan.queues
    .map((q) => startLiveWorker(connection, plan.prefix, q))
    .filter((w): w is Worker => w !== null);
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  return {
    workers: plan.queues.flatMap((q) => (q.liveWorker ? [`${q.name}: ${q.liveWorker.name}`] : [])),
    async stop() {
      // force: jobs in flight go back through the stall check; the demo's data is thrown away anyway
      await Promise.all(workers.map((w) => w.close(true).catch(() => {})));
    },
  };
}
