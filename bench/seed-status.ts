import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

/** Share of each queue's jobs per state, roughly an incident: a big backlog, some delay, some failure. */
export const MIX = { wait: 0.7, delayed: 0.1, prioritized: 0.05, failed: 0.05, completed: 0.1 } as const;

/**
 * One real job per queue through BullMQ (so `meta`, the id counter and the oldest waiting job's
 * hash are BullMQ's own), then the bulk as bare ids pushed onto the same keys with the same
 * scores BullMQ uses. Status and getJobCounts read only LLEN/ZCARD/HEXISTS and the hash of the
 * job at the head of `wait`, so the other 999,000 job hashes would cost memory and seeding time
 * without changing a single command either side runs. addBulk would take minutes for 1M jobs.
 */
export async function seedBullmq(
  url: string,
  admin: Redis,
  queues: number,
  { total, prefix }: { total: number; prefix: string },
): Promise<void> {
  await admin.flushdb();
  const perQueue = Math.floor(total / queues);
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const now = Date.now();
  for (let q = 0; q < queues; q++) {
    const queue = new Queue(`q${String(q).padStart(4, '0')}`, { connection, prefix });
    await queue.add('oldest', { n: 0 }, { timestamp: now - 30 * 60_000 });
    await queue.close();
  }
  await connection.quit();

  const BATCH = 1000;
  let pipeline = admin.pipeline();
  let pending = 0;
  const flush = async (force = false) => {
    if (pending >= 50 || (force && pending > 0)) {
      await pipeline.exec();
      pipeline = admin.pipeline();
      pending = 0;
    }
  };
  for (let q = 0; q < queues; q++) {
    const base = `${prefix}:q${String(q).padStart(4, '0')}:`;
    const counts = {
      wait: Math.round(perQueue * MIX.wait) - 1,
      delayed: Math.round(perQueue * MIX.delayed),
      prioritized: Math.round(perQueue * MIX.prioritized),
      failed: Math.round(perQueue * MIX.failed),
      completed: Math.round(perQueue * MIX.completed),
    };
    let id = 0;
    for (let start = 0; start < counts.wait; start += BATCH) {
      const ids = [];
      for (let i = start; i < Math.min(counts.wait, start + BATCH); i++) ids.push(`b${id++}`);
      pipeline.lpush(`${base}wait`, ...ids);
      pending++;
      await flush();
    }
    for (const state of ['delayed', 'prioritized', 'failed', 'completed'] as const) {
      for (let start = 0; start < counts[state]; start += BATCH) {
        const args: (string | number)[] = [];
        for (let i = start; i < Math.min(counts[state], start + BATCH); i++) {
          // the scores BullMQ writes: due time * 4096 + seq, priority * 2^32 + counter, finishedOn
          const score =
            state === 'delayed'
              ? (now + 60_000 + i) * 4096 + (i % 4096)
              : state === 'prioritized'
                ? (1 + (i % 3)) * 2 ** 32 + i
                : now - i;
          args.push(score, `b${id++}`);
        }
        pipeline.zadd(`${base}${state}`, ...args);
        pending++;
        await flush();
      }
    }
  }
  await flush(true);
}
