import type { Redis } from 'ioredis';
import { ErrorCode, OpsError } from '../../errors.js';
import { loadBullmq5, loadBullmq6 } from '../../lib/lazy.js';
import type { FailOutcome, JobLockInfo } from '../queue-backend.js';
import type { BullmqMajor } from './pause.js';

interface MinimalJob {
  name: string;
  processedOn?: number;
  getState(): Promise<string>;
  moveToFailed(error: Error, token: string, fetchNext?: boolean): Promise<unknown>;
}

interface Library {
  queue: { close(): Promise<void>; on(event: 'error', listener: (error: Error) => void): unknown };
  fromId(id: string): Promise<MinimalJob | undefined>;
  unrecoverable(message: string): Error;
}

/** BullMQ's own Queue, Job and UnrecoverableError of the major the queue was written by. */
async function library(
  connection: Redis,
  prefix: string,
  queue: string,
  major: BullmqMajor,
): Promise<Library> {
  const opts = { connection, prefix, skipMetasUpdate: true, skipVersionCheck: true };
  if (major === 5) {
    const lib = await loadBullmq5();
    const instance = new lib.Queue(queue, opts);
    return {
      queue: instance,
      fromId: (id) => lib.Job.fromId(instance, id),
      unrecoverable: (message) => new lib.UnrecoverableError(message),
    };
  }
  const lib = await loadBullmq6();
  const instance = new lib.Queue(queue, opts);
  return {
    queue: instance,
    fromId: (id) => lib.Job.fromId(instance, id),
    unrecoverable: (message) => new lib.UnrecoverableError(message),
  };
}

async function lockOf(connection: Redis, prefix: string, queue: string, id: string) {
  const key = `${prefix}:${queue}:${id}:lock`;
  const [[, token], [, ttl]] = (await connection.multi().get(key).pttl(key).exec()) as [
    [Error | null, string | null],
    [Error | null, number],
  ];
  return { token, ttlMs: token === null || ttl < 0 ? null : ttl };
}

async function describe(
  connection: Redis,
  prefix: string,
  queue: string,
  id: string,
  job: MinimalJob | undefined,
): Promise<JobLockInfo> {
  if (!job) return { queue, id, name: '', state: 'unknown', lockTtlMs: null };
  const [state, lock, processedBy] = await Promise.all([
    job.getState(),
    lockOf(connection, prefix, queue, id),
    connection.hget(`${prefix}:${queue}:${id}`, 'pb'),
  ]);
  const info: JobLockInfo = { queue, id, name: job.name, state, lockTtlMs: lock.ttlMs };
  if (processedBy) info.worker = processedBy;
  if (job.processedOn) info.startedAt = job.processedOn;
  return info;
}

/** A job's state and lock, read through BullMQ's own `Job` (for the preview of `fail`). */
export async function jobLockWithBullmq(
  connection: Redis,
  prefix: string,
  queue: string,
  id: string,
  major: BullmqMajor,
): Promise<JobLockInfo> {
  const lib = await library(connection, prefix, queue, major);
  lib.queue.on('error', () => {});
  try {
    return await describe(connection, prefix, queue, id, await lib.fromId(id));
  } finally {
    await lib.queue.close();
  }
}

/**
 * Moves an active job to failed with BullMQ's own `Job.moveToFailed` (its `moveToFinished`
 * script), as a worker would when the processor throws. The error is an `UnrecoverableError`, so
 * remaining attempts do not turn the failure into a retry. With the lock's current token when a
 * worker still holds it (the script then removes that lock: the worker's own completion is
 * refused later), with BullMQ's "no lock" token `0` when the lock has expired.
 */
export async function failWithBullmq(
  connection: Redis,
  prefix: string,
  queue: string,
  id: string,
  major: BullmqMajor,
  reason: string,
  system: string,
): Promise<FailOutcome> {
  const lib = await library(connection, prefix, queue, major);
  lib.queue.on('error', () => {});
  try {
    const job = await lib.fromId(id);
    const before = await describe(connection, prefix, queue, id, job);
    if (!job || before.state === 'unknown') throw new OpsError(ErrorCode.UnknownJob, { system, queue, id });
    if (before.state !== 'active')
      throw new OpsError(ErrorCode.JobNotActive, { system, queue, id, state: before.state });
    const lock = await lockOf(connection, prefix, queue, id);
    try {
      await job.moveToFailed(lib.unrecoverable(reason), lock.token ?? '0', false);
    } catch (error) {
      // The script refuses when the job left `active` or its lock changed hands in between.
      const state = await job.getState();
      if (state !== 'active') throw new OpsError(ErrorCode.JobNotActive, { system, queue, id, state });
      throw error;
    }
    const after = await describe(connection, prefix, queue, id, job);
    return { ...after, before: before.state, reason, lockWasHeld: lock.token !== null };
  } finally {
    await lib.queue.close();
  }
}
