import * as bullmq6 from 'bullmq';
import * as bullmq5 from 'bullmq5';
import { connectionFor, waitFor } from './bullmq-jobs.js';

// Apart from bullmq-jobs.ts: loading both majors costs each test file about half a second, and
// most files that need a queue name or a connection need neither.

/**
 * Both majors through one type. The 5.x classes have the same shape for everything these tests
 * use (Queue.add/getJobCounts/pause/resume/getWorkers, Worker, FlowProducer); the cast only spares
 * the generic noise.
 */
export type BullmqLib = typeof bullmq6;
export const LIBS: { major: 5 | 6; lib: BullmqLib; version: string }[] = [
  { major: 6, lib: bullmq6, version: 'bullmq:6.' },
  { major: 5, lib: bullmq5 as unknown as BullmqLib, version: 'bullmq:5.' },
];

/**
 * A queue and a worker that takes nothing by itself (`autorun: false`): the test takes each job
 * with `getNextJob` and finishes it by hand, so every timestamp is one it chose. Both are closed
 * by `closers` (the test's list, run at its end).
 */
export function queueTakenByHand(
  name: string,
  where: { url: string; prefix: string; lib?: BullmqLib },
  closers: (() => Promise<unknown>)[],
  workerOptions: Record<string, unknown> = {},
) {
  const lib = where.lib ?? bullmq6;
  const queue = new lib.Queue(name, { connection: connectionFor(where.url), prefix: where.prefix });
  const worker = new lib.Worker(name, null, {
    connection: connectionFor(where.url),
    prefix: where.prefix,
    autorun: false,
    ...workerOptions,
  });
  closers.push(
    () => queue.close(),
    () => worker.close(),
  );
  return { queue, worker };
}

/**
 * Adds one job per error to `queue` and lets a real worker of `lib` fail each with its error;
 * resolves once all of them are failed. The worker is closed before it returns.
 */
export async function failEachWith(
  lib: BullmqLib,
  queue: InstanceType<BullmqLib['Queue']>,
  where: { url: string; prefix: string },
  errors: string[],
): Promise<void> {
  const before = (await queue.getJobCounts('failed')).failed ?? 0;
  await queue.addBulk(
    errors.map((error, n) => ({ name: 'send', data: { n, error }, opts: { attempts: 1 } })),
  );
  const worker = new lib.Worker(
    queue.name,
    async (job) => {
      throw new Error(job.data.error);
    },
    { connection: connectionFor(where.url), prefix: where.prefix, concurrency: 50 },
  );
  try {
    await waitFor(
      `${errors.length} failures`,
      async () => (await queue.getJobCounts('failed')).failed === before + errors.length,
      60_000,
    );
  } finally {
    await worker.close();
  }
}
