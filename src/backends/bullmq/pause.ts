import type { Redis } from 'ioredis';
import { loadBullmq5, loadBullmq6 } from '../../lib/lazy.js';

/** Which BullMQ layout a queue uses, and so which major of the library may change it. */
export type BullmqMajor = 5 | 6;

/**
 * Reads the `version` field of a queue's meta hash (`bullmq:6.7.0`, `bullmq:5.81.5`). Queues
 * written by BullMQ < 6 keep waiting jobs in a `paused` list while paused, 6.x keeps them in
 * `wait`; pausing with the wrong major would leave jobs where the other major's workers never
 * look. No version (a queue created with `skipMetasUpdate`, or not yet) means the current major.
 */
export function majorOfVersion(version: string | null | undefined): BullmqMajor {
  const match = /^([\w-]+):(\d+)\./.exec(version ?? '');
  if (!match) return 6;
  const [, lib, majorText] = match;
  const major = Number(majorText);
  // BullMQ Pro 7.x is built on BullMQ 5.x.
  if (lib === 'bullmq-pro') return major <= 7 ? 5 : 6;
  return major <= 5 ? 5 : 6;
}

interface MinimalQueue {
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Pauses or resumes through BullMQ's own `Queue.pause()/resume()` of the matching major, on a
 * connection the caller owns. `skipMetasUpdate` keeps the Queue from rewriting the meta hash
 * (it would otherwise stamp its own version over the queue's).
 */
export async function setPausedWithBullmq(
  connection: Redis,
  prefix: string,
  queue: string,
  major: BullmqMajor,
  paused: boolean,
): Promise<void> {
  const opts = { connection, prefix, skipMetasUpdate: true, skipVersionCheck: true };
  const instance: MinimalQueue =
    major === 5 ? new (await loadBullmq5()).Queue(queue, opts) : new (await loadBullmq6()).Queue(queue, opts);
  instance.on('error', () => {});
  try {
    if (paused) await instance.pause();
    else await instance.resume();
  } finally {
    await instance.close();
  }
}
