import * as z from 'zod/mini';
import { intIn, nonEmpty } from '../parts.js';
import type { SystemKindChecks, SystemParts } from './common.js';

/** A `systems[]` entry of `type: celery`: a Celery app's Redis broker (and result backend). */
export function celerySystemShape(parts: SystemParts) {
  return z.strictObject({
    name: parts.systemName,
    type: z.literal('celery'),
    ...parts.redisShape,
    resultBackend: z.optional(parts.watchedRedisUrl),
    queues: parts.queueEntries,
    globalKeyprefix: z._default(z.string(), ''),
    /** kombu's `priority_steps` transport option. */
    prioritySteps: z._default(z.array(intIn(0, 255)).check(z.minLength(1)), [0, 3, 6, 9]),
    /** kombu's `sep` transport option. */
    separator: z._default(nonEmpty(), '\x06\x16'),
    /** kombu's `fanout_prefix`: true → `/<db>.`, false → none, a string → itself. */
    fanoutPrefix: z._default(z.union([z.boolean(), z.string()]), true),
    /** How long worker inspection waits for pidbox replies. */
    inspectTimeoutMs: z._default(intIn(50, 10_000), 1000),
    workers: z.optional(parts.workerGroups),
    slack: parts.systemSlack,
  });
}

/** What a Celery system's config is refused for beyond its shape (see `SystemKindChecks`). */
export const celerySystemChecks: SystemKindChecks<unknown> = {
  issues: () => [],
  // Its workers answer pidbox, which is how a `celery-pool` group resizes and restarts them.
  acceptsPoolGroups: true,
};
