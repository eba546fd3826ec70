import type { Redis } from 'ioredis';
import { OpsError } from '../../errors.js';
import { isPartial, type PurgeSelection } from '../job-filter.js';
import { runScript } from '../lua.js';
import { withUnavailable } from '../purger-errors.js';
import {
  type FailOutcome,
  type JobLockInfo,
  limitRefusal,
  type PauseOutcome,
  type QueueLimitChange,
  type QueueLimits,
  type QueuePurger,
} from '../queue-backend.js';
import { ensureConnected } from '../redis-client.js';
import { isPlainReply } from '../redis-errors.js';
import type { BullmqContext } from './context.js';
import { failWithBullmq, jobLockWithBullmq } from './fail.js';
import { metaWrite, SET_LIMIT_IF, setLimitIfArgs } from './limits.js';
import { type BullmqMajor, majorOfVersion, setPausedWithBullmq } from './pause.js';
import { readLimits } from './reads.js';
import { createBullmqRetry } from './retry.js';

/** The purger (and the archive's line format it writes), loaded when a purge or an undo runs. */
const loadPurger = () => import('./purge.js');

/** A purge of the jobs a filter selects, on top of it. */
const loadPurgeSelection = () => import('./purge-selection.js');

/**
 * The BullMQ backend's actions: pause and resume (BullMQ's own classes of the queue's major),
 * retry, failing a stuck job, limits, and purge. Each names its queue before anything runs.
 */
export function createBullmqActions(ctx: BullmqContext) {
  const { system, now, prefix, connect, client, queueNames, unavailable, withRedis, exec, single } = ctx;

  const retries = createBullmqRetry({
    system: system.name,
    prefix,
    client,
    exec,
    withRedis,
    resolveQueue: async (queue) => {
      await queueNames.resolve([queue]);
    },
    now,
  });

  async function pause(queue: string): Promise<PauseOutcome> {
    return await setPaused(queue, true);
  }

  async function resume(queue: string): Promise<PauseOutcome> {
    return await setPaused(queue, false);
  }

  async function setPaused(queue: string, paused: boolean): Promise<PauseOutcome> {
    const version = await withRedis(async () => {
      await queueNames.resolve([queue]);
      return await single((r) => r.hget(`${prefix}:${queue}:meta`, 'version'));
    });
    // BullMQ defines its scripts on the connection it is given: a separate, short-lived one keeps
    // 5.x and 6.x scripts (same names, different bodies) apart and off the read client.
    const admin = connect({ connectionName: `queue-ops:${system.name}:admin` });
    try {
      await ensureConnected(admin);
      await setPausedWithBullmq(admin, prefix, queue, majorOfVersion(version), paused);
      const isPaused = (await admin.hexists(`${prefix}:${queue}:meta`, 'paused')) === 1;
      return { queue, isPaused };
    } catch (error) {
      if (error instanceof OpsError) throw error;
      if (isPlainReply(error)) throw error;
      throw unavailable(error);
    } finally {
      admin.disconnect();
    }
  }

  return {
    pause,
    resume,
    previewRetry: retries.previewRetry,
    retry: retries.retry,
    ...createJobActions(ctx),
    purger,
  };

  async function purger(queue: string, selection?: PurgeSelection): Promise<QueuePurger> {
    const [{ createBullmqPurger }, selecting] = await Promise.all([
      loadPurger(),
      isPartial(selection) ? loadPurgeSelection() : undefined,
    ]);
    await withRedis(() => queueNames.resolve([queue]));
    // Its own connection: a purge pipelines thousands of calls, which must not queue behind (or
    // ahead of) the status reads, and its calls may take longer than the read deadline.
    const connection = connect({
      connectionName: `queue-ops:${system.name}:purge`,
      commandTimeoutMs: 30_000,
    });
    try {
      await ensureConnected(connection);
    } catch (error) {
      connection.disconnect();
      throw unavailable(error);
    }
    const whole = createBullmqPurger({ client: connection, prefix, queue, now });
    const purger = selecting
      ? selecting.withSelection(whole, { client: connection, prefix, queue, selection: selection!, now })
      : whole;
    return withUnavailable(purger, unavailable);
  }
}

/** Failing a stuck job and changing a queue's limits. */
function createJobActions(ctx: BullmqContext) {
  const { system, prefix, connect, queueNames, unavailable, withRedis, single } = ctx;

  async function jobLock(queue: string, id: string): Promise<JobLockInfo> {
    return await withAdmin(queue, (admin, major) => jobLockWithBullmq(admin, prefix, queue, id, major));
  }

  async function failJob(queue: string, id: string, reason: string): Promise<FailOutcome> {
    return await withAdmin(queue, (admin, major) =>
      failWithBullmq(admin, prefix, queue, id, major, reason, system.name),
    );
  }

  async function setQueueLimit(
    queue: string,
    change: QueueLimitChange,
    options: { onlyIf?: QueueLimitChange['value'] } = {},
  ): Promise<{ before: QueueLimits; after: QueueLimits; written?: boolean }> {
    return await withRedis(async () => {
      await queueNames.resolve([queue]);
      const before = await readLimits(ctx, queue);
      // Taking a limit off is always allowed; setting one the queue's workers would ignore is not.
      const refused = change.value === null ? undefined : limitRefusal(system.name, before, change.kind);
      if (refused) throw refused;
      const meta = `${prefix}:${queue}:meta`;
      if ('onlyIf' in options) {
        // Checked and written in one step: a read here and a write later could undo a change
        // another process made in between (a newer limit set while this one ran out).
        const args = setLimitIfArgs(change, options.onlyIf ?? null);
        const written = (await single((r) => runScript(r, SET_LIMIT_IF, [meta], args))) === 1;
        return { before, after: await readLimits(ctx, queue), written };
      }
      const write = metaWrite(change);
      await single((r) => (write.set ? r.hset(meta, write.set) : r.hdel(meta, ...write.remove!)));
      return { before, after: await readLimits(ctx, queue), written: true };
    });
  }

  /**
   * Runs `work` with BullMQ's own classes of the queue's major on a short-lived connection of its
   * own (see setPaused), mapping connection failures to `RedisUnavailable`.
   */
  async function withAdmin<T>(
    queue: string,
    work: (admin: Redis, major: BullmqMajor) => Promise<T>,
  ): Promise<T> {
    const version = await withRedis(async () => {
      await queueNames.resolve([queue]);
      return await single((r) => r.hget(`${prefix}:${queue}:meta`, 'version'));
    });
    // The system's whole endpoint, as every connection: TLS files, Sentinel, Cluster.
    const admin = connect({ connectionName: `queue-ops:${system.name}:admin` });
    try {
      await ensureConnected(admin);
      return await work(admin, majorOfVersion(version));
    } catch (error) {
      if (error instanceof OpsError) throw error;
      if (isPlainReply(error)) throw error;
      throw unavailable(error);
    } finally {
      admin.disconnect();
    }
  }

  return { jobLock, failJob, setQueueLimit };
}
