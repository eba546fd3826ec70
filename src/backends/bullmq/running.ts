import type { Redis } from 'ioredis';
import type { RunningWork } from '../queue-backend.js';

/** Active jobs read per queue; `stuck` is about a handful, and the cost must be known up front. */
export const RUNNING_PER_QUEUE = 1000;

/**
 * Active jobs of the given queues: two pipelined round trips (the active lists, then per job its
 * name, start, worker name and the lock's time to live). A job whose lock key is gone while it is
 * still in `active` has no live worker renewing it: BullMQ's stalled checker will move it back
 * (or fail it) the next time any worker runs one, so it is reported as `lockExpired`.
 */
export async function readRunning(
  client: Redis,
  prefix: string,
  queues: readonly string[],
  limit = RUNNING_PER_QUEUE,
): Promise<RunningWork[]> {
  if (queues.length === 0) return [];
  const lists = client.pipeline();
  for (const queue of queues) lists.lrange(`${prefix}:${queue}:active`, 0, limit - 1);
  const listed = (await lists.exec()) ?? [];
  const jobs: { queue: string; id: string }[] = [];
  listed.forEach(([error, ids], i) => {
    if (error) throw error;
    for (const id of ids as string[]) jobs.push({ queue: queues[i]!, id });
  });
  if (jobs.length === 0) return [];
  const details = client.pipeline();
  for (const { queue, id } of jobs) {
    const key = `${prefix}:${queue}:${id}`;
    // Never `data` or `opts`: only what identifies the job and says how long it has run.
    details.hmget(key, 'name', 'processedOn', 'pb');
    details.pttl(`${key}:lock`);
  }
  const replies = (await details.exec()) ?? [];
  const out: RunningWork[] = [];
  jobs.forEach(({ queue, id }, i) => {
    const [hashError, fields] = replies[2 * i]!;
    const [ttlError, ttl] = replies[2 * i + 1]!;
    if (hashError) throw hashError;
    if (ttlError) throw ttlError;
    const [name, processedOn, processedBy] = fields as (string | null)[];
    const work: RunningWork = { id, name: name ?? '', queue };
    if (processedBy) work.worker = processedBy;
    const started = Number(processedOn);
    if (processedOn !== null && Number.isFinite(started)) work.startedAt = started;
    // PTTL -2: no such key. The lock is set with PX, so it only ever vanishes by expiring or
    // by the job leaving `active` between our two reads.
    work.lockExpired = Number(ttl) === -2;
    out.push(work);
  });
  return out;
}
