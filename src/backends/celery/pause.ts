import type { Redis } from 'ioredis';
import type { CelerySystemConfig } from '../../config/schema.js';
import { ErrorCode, OpsError } from '../../errors.js';
import type { PauseOutcome } from '../queue-backend.js';
import { ensureConnected } from '../redis-client.js';
import type { BroadcastResult, PidboxClient } from './pidbox.js';

export interface CeleryPauseDeps {
  system: CelerySystemConfig;
  client: Redis;
  pidbox: PidboxClient;
  /** The hash of pause records (`pausedKey`): one field per paused queue. */
  pauseMarks: string;
  /** Refuses an unknown queue, naming the valid ones. */
  resolveQueue(queue: string): Promise<void>;
  unavailable(error: unknown): OpsError;
  connectTimeoutMs: number;
  now: () => number;
}

/** The queue names of an `active_queues` reply (empty for anything else). */
function queueNamesOf(reply: unknown): unknown[] {
  return Array.isArray(reply) ? (reply as { name?: unknown }[]).map((q) => q?.name) : [];
}

/**
 * Pause and resume of a Celery queue: Celery has no paused state, so a pause is
 * `cancel_consumer` to the workers (as `celery control cancel_consumer` does) plus a record of
 * who consumed it, and resume is `add_consumer` to exactly those workers.
 */
export function createCeleryPause(deps: CeleryPauseDeps): {
  pause(queue: string): Promise<PauseOutcome>;
  resume(queue: string): Promise<PauseOutcome>;
} {
  async function consumerCommand(
    method: 'cancel_consumer' | 'add_consumer',
    queue: string,
    destination?: readonly string[],
  ): Promise<string[]> {
    let result: BroadcastResult;
    try {
      result = await deps.pidbox.broadcast(
        method,
        { queue },
        { timeoutMs: deps.system.inspectTimeoutMs, destination },
      );
    } catch (error) {
      throw deps.unavailable(error);
    }
    const answered = result.replies
      .filter(({ reply }) => !!reply && typeof reply === 'object' && 'ok' in (reply as object))
      .map(({ worker }) => worker)
      .sort();
    if (answered.length === 0) {
      throw new OpsError(ErrorCode.NoWorkersAnswered, {
        system: deps.system.name,
        queue,
        action: method === 'cancel_consumer' ? 'pause' : 'resume',
        timeoutMs: deps.system.inspectTimeoutMs,
      });
    }
    return answered;
  }

  /** Workers consuming `queue` now, or undefined when inspection failed or nobody answered. */
  async function consumersOf(queue: string): Promise<string[] | undefined> {
    const result = await deps.pidbox
      .broadcast('active_queues', {}, { timeoutMs: deps.system.inspectTimeoutMs })
      .catch(() => undefined);
    if (!result || result.replies.length === 0) return undefined;
    return result.replies
      .filter(({ reply }) => queueNamesOf(reply).includes(queue))
      .map(({ worker }) => worker)
      .sort();
  }

  async function dropMark(queue: string): Promise<void> {
    try {
      await deps.client.hdel(deps.pauseMarks, queue);
    } catch (error) {
      throw deps.unavailable(error);
    }
  }

  /**
   * A worker answers cancel/add_consumer before it acts (`call_soon`); wait, within the inspect
   * timeout, until `active_queues` shows the change, so the outcome says what is true now.
   */
  async function settle(queue: string, workers: readonly string[], consuming: boolean): Promise<boolean> {
    const deadline = Date.now() + deps.system.inspectTimeoutMs;
    for (;;) {
      const result = await deps.pidbox
        .broadcast('active_queues', {}, { timeoutMs: deps.system.inspectTimeoutMs, destination: workers })
        .catch(() => undefined);
      const settled = (result?.replies ?? []).every(
        ({ reply }) => queueNamesOf(reply).includes(queue) === consuming,
      );
      if (settled || Date.now() >= deadline) return settled;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  return {
    async pause(queue) {
      await deps.resolveQueue(queue);
      // Every worker answers cancel_consumer, consumer or not; resume must only restart the
      // consumers, or every worker would take the queue afterwards.
      const consumers = await consumersOf(queue);
      const answered = await consumerCommand('cancel_consumer', queue);
      const mark: PauseMark = { at: new Date(deps.now()).toISOString(), workers: consumers ?? answered };
      try {
        await deps.client.hset(deps.pauseMarks, queue, JSON.stringify(mark));
      } catch (error) {
        throw deps.unavailable(error);
      }
      const settled = await settle(queue, answered, false);
      return { queue, isPaused: settled, workersAnswered: answered };
    },
    async resume(queue) {
      await deps.resolveQueue(queue);
      let raw: string | null;
      try {
        await ensureConnected(deps.client, deps.connectTimeoutMs);
        raw = await deps.client.hget(deps.pauseMarks, queue);
      } catch (error) {
        throw deps.unavailable(error);
      }
      const mark = raw === null ? undefined : parsePauseMark(raw);
      if (mark?.workers.length === 0) {
        // Nobody consumed it when it was paused: resuming restores exactly that.
        await dropMark(queue);
        return { queue, isPaused: false, workersAnswered: [] };
      }
      let answered: string[];
      try {
        answered = await consumerCommand('add_consumer', queue, mark?.workers);
      } catch (error) {
        // The paused workers are gone (scaled down, renamed): fall back to every live worker,
        // as without a record, rather than leave a pause no one can lift.
        if (!mark || !(error instanceof OpsError) || error.code !== ErrorCode.NoWorkersAnswered) throw error;
        answered = await consumerCommand('add_consumer', queue);
      }
      await dropMark(queue);
      const settled = await settle(queue, answered, true);
      return { queue, isPaused: !settled, workersAnswered: answered };
    },
  };
}

/** One field of the pause record (`pausedKey`): when, and which workers stopped consuming. */
interface PauseMark {
  at: string;
  workers: string[];
}

/**
 * A pause record as written by `pause`. Anything else in the field (edited by hand, an older
 * format) still means paused, with the workers unknown.
 */
function parsePauseMark(raw: string): PauseMark | undefined {
  try {
    const value = JSON.parse(raw) as { at?: unknown; workers?: unknown };
    if (!Array.isArray(value?.workers)) return undefined;
    return {
      at: String(value.at ?? ''),
      workers: value.workers.filter((w): w is string => typeof w === 'string'),
    };
  } catch {
    return undefined;
  }
}
