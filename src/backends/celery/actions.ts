import { ErrorCode, OpsError } from '../../errors.js';
import { isPartial, type PurgeSelection } from '../job-filter.js';
import { withUnavailable } from '../purger-errors.js';
import type {
  ExpireResultsOutcome,
  ExpireResultsPreview,
  ExpireResultsProgress,
  QueuePurger,
} from '../queue-backend.js';
import { ensureConnected } from '../redis-client.js';
import type { CeleryContext } from './context.js';
import { createCeleryControl } from './control.js';
import { countResultsWithoutTtl, expireResultsWithoutTtl } from './expire-results.js';
import { priorityKeys, unackedKey } from './keys.js';
import { createCeleryPause } from './pause.js';
import { createCeleryRetry } from './retry.js';

/** The purger (and the archive's line format it writes), loaded when a purge or an undo runs. */
const loadPurger = () => import('./purge.js');

/**
 * The Celery backend's actions: pause and resume, retry, the workers' remote control, purge and
 * `expire-results`. Each names its queue before anything runs.
 */
export function createCeleryActions(ctx: CeleryContext) {
  const {
    system,
    now,
    connectTimeoutMs,
    layout,
    connections,
    separateResults,
    client,
    resultClient,
    pidbox,
  } = ctx;
  const { queueNames, pauseMarks, unavailable, failures } = ctx;

  /** `expire-results`' preview, on the result backend: the keys without a TTL, counted exactly. */
  async function previewExpireResults(budget?: { maxMillis?: number }): Promise<ExpireResultsPreview> {
    try {
      await ensureConnected(resultClient, connectTimeoutMs);
      return await countResultsWithoutTtl(resultClient, budget);
    } catch (error) {
      throw unavailable(error);
    }
  }

  async function expireResults(
    ttlSeconds: number,
    progress?: ExpireResultsProgress,
  ): Promise<ExpireResultsOutcome> {
    try {
      await ensureConnected(resultClient, connectTimeoutMs);
      return await expireResultsWithoutTtl(resultClient, ttlSeconds, progress);
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** Refuses a queue this system does not have (pause and retry name it before anything runs). */
  const resolveQueue = async (queue: string) => {
    await queueNames.resolve([queue]);
  };

  const pausing = createCeleryPause({
    system,
    client,
    pidbox,
    pauseMarks,
    resolveQueue,
    unavailable,
    connectTimeoutMs,
    now,
  });

  const retries = createCeleryRetry({
    system: system.name,
    layout,
    client,
    resultClient,
    failures,
    resolveQueue,
    unavailable,
    connectTimeoutMs,
  });

  const control = createCeleryControl({
    pidbox,
    listQueues: (fresh?: boolean) => queueNames.list(fresh),
    timeoutMs: system.inspectTimeoutMs,
    unavailable,
  });

  return {
    previewRetry: retries.previewRetry,
    retry: retries.retry,
    previewExpireResults,
    expireResults,
    running: control.running,
    pool: control.pool,
    resizePool: control.resizePool,
    revoke: control.revoke,
    liveWorkers: control.liveWorkers,
    poolRestartsEnabled: control.poolRestartsEnabled,
    restartWorkers: control.restartWorkers,
    taskRateLimits: control.taskRateLimits,
    setTaskRateLimit: control.setTaskRateLimit,
    pause: pausing.pause,
    resume: pausing.resume,
    async purger(queue: string, selection?: PurgeSelection): Promise<QueuePurger> {
      // A purge here takes whole states: a selection must never purge more than it names.
      if (isPartial(selection))
        throw new OpsError(ErrorCode.NotSupported, {
          system: system.name,
          type: 'celery',
          what: 'purgePart',
        });
      await queueNames.resolve([queue]);
      const { createCeleryPurger } = await loadPurger();
      // Connections of its own: thousands of pipelined calls must not queue behind status reads.
      const connect = async (open: typeof connections.broker) => {
        const connection = open({ connectionName: 'queue-ops:purge', commandTimeoutMs: 30_000 });
        try {
          await ensureConnected(connection, connectTimeoutMs);
        } catch (error) {
          connection.disconnect();
          throw unavailable(error);
        }
        return connection;
      };
      const broker = await connect(connections.broker);
      const results = separateResults ? await connect(connections.results) : broker;
      const purger = createCeleryPurger({
        broker,
        results,
        queue,
        lists: priorityKeys(layout, queue),
        unacked: unackedKey(layout),
        failureIds: async () => {
          const index = failures();
          try {
            await index.ready();
          } catch (error) {
            throw unavailable(error);
          }
          return index.newest(queue, Number.MAX_SAFE_INTEGER).map((f) => f.id);
        },
        onResultsChanged: (purged, restored) => {
          ctx.openedFailures()?.forget(purged);
          if (restored)
            void ctx
              .openedFailures()
              ?.rescan()
              .catch(() => undefined);
        },
        now,
      });
      return withUnavailable(purger, unavailable);
    },
  };
}
