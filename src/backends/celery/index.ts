import type { CelerySystemConfig } from '../../config/schema.js';
import type { QueueBackend } from '../queue-backend.js';
import { createCeleryActions } from './actions.js';
import { type CeleryBackendOptions, createCeleryContext } from './context.js';
import { CELERY_FACTS } from './facts.js';
import { createCeleryReads } from './reads.js';
import { createCeleryStatus } from './status.js';

export type { CeleryBackendOptions } from './context.js';
export { createPidboxClient, type PidboxClient } from './pidbox.js';
export { memoryHighWarning } from './status.js';

/**
 * The `QueueBackend` for Celery on Redis (kombu's transport, Celery 5). Reads go straight to the
 * broker's keys; workers are asked through Celery's own remote control (pidbox); failures come
 * from an in-memory index of the result backend.
 *
 * Choices worth knowing (Celery has no field for them, so these are estimates or conventions):
 * - `oldestWaitingSeconds`: messages carry no enqueue time. The backend reports only what the
 *   broker says (the time since a past `headers.eta`, else `null`) and the delivery tag at the
 *   head (`headId`, `LINDEX -1` of the first non-empty priority list); how long that tag has been
 *   at the head is the monitor's stored sighting, which `status` reads (`oldestWaitingFrom`).
 * - `waiting` is Σ LLEN over the priority lists; `prioritized`, `delayed`, `completed` and
 *   `waitingChildren` are 0 (ETA tasks sit in the workers and in `unacked`, see `unacked`).
 * - `active` is the number of running tasks whose delivery routing key is the queue, from the
 *   workers' `active` inspection; 0 when inspection failed (a `WorkerInspectFailed` warning).
 * - `isPaused`: Celery has no pause flag, so `pause` records one of its own in the broker, in the
 *   hash `pausedKey` (`{globalKeyprefix}queue-ops:paused`), and `resume` removes it; a queue is
 *   paused while its field exists. A queue that no worker consumes but nobody paused is not paused
 *   (status flags it "no workers" when messages wait). When a paused queue is consumed again (a
 *   worker restarted with its `-Q`), it still reads as paused, with a `PausedButConsumed` warning.
 * - `failed` counts FAILURE results whose `queue` field names the queue; the field only exists with
 *   `result_extended=True`. Failures without it are counted nowhere (not guessed into `celery`).
 * - `resume` addresses the workers the pause record names (those that consumed the queue when it
 *   was paused), whichever replica or CLI paused it. Without a record, or when none of those
 *   workers answers any more, it addresses every worker, which then all consume the queue.
 */
export function createCeleryBackend(
  system: CelerySystemConfig,
  options: CeleryBackendOptions = {},
): QueueBackend &
  Required<
    Pick<
      QueueBackend,
      | 'pause'
      | 'resume'
      | 'running'
      | 'pool'
      | 'resizePool'
      | 'revoke'
      | 'previewRetry'
      | 'retry'
      | 'purger'
      | 'liveWorkers'
      | 'poolRestartsEnabled'
      | 'restartWorkers'
    >
  > {
  // One context (connections, layout, queue names, failure index), read by the reads, written by the actions.
  const ctx = createCeleryContext(system, options);
  return {
    name: system.name,
    type: 'celery',
    facts: CELERY_FACTS,
    status: createCeleryStatus(ctx),
    ...createCeleryReads(ctx),
    ...createCeleryActions(ctx),
    close: ctx.close,
  };
}
