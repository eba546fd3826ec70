import * as z from 'zod/mini';
import { nonEmpty } from '../parts.js';
import type { ConfigProblems } from '../problems.js';
import type { SystemKindChecks, SystemParts } from './common.js';

/** A `systems[]` entry of `type: bullmq`: BullMQ queues under one key prefix. */
export function bullmqSystemShape(parts: SystemParts) {
  return z.strictObject({
    name: parts.systemName,
    type: z.literal('bullmq'),
    ...parts.redisShape,
    /**
     * Redis Cluster: `redis` and `nodes` are startup nodes. BullMQ needs a `{hash-tag}` prefix
     * there, so every key of every queue lives in one slot.
     */
    cluster: z.optional(z.boolean()),
    nodes: z.optional(z.array(parts.redisUrl).check(z.minLength(1))),
    prefix: z._default(nonEmpty(), 'bull'),
    queues: parts.queueEntries,
    workers: z.optional(parts.workerGroups),
    slack: parts.systemSlack,
  });
}

/** What a BullMQ system's config is refused for beyond its shape (see `SystemKindChecks`). */
export const bullmqSystemChecks: SystemKindChecks<{ cluster?: boolean | undefined; prefix: string }> = {
  issues(system, p: ConfigProblems) {
    if (system.cluster && !/^\{[^}]+\}$/.test(system.prefix))
      return [{ path: ['prefix'], message: p.clusterPrefix(system.prefix) }];
    return [];
  },
  // BullMQ's workers answer no pidbox: a `celery-pool` group could neither resize nor restart them.
  acceptsPoolGroups: false,
};
