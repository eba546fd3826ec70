import * as z from 'zod/mini';
import { type ConfigParts, nonEmpty } from '../parts.js';
import type { ConfigProblems } from '../problems.js';
import { normalizeQueues, type QueueEntry } from '../queue-context.js';
import { buildWorkerGroups } from './workers.js';

/**
 * What every kind of system's config has (its name, its Redis, its queues, its worker groups, its
 * Slack settings), worded by `p`: the kinds' own files (`bullmq.ts`, `celery.ts`) spread these into
 * their shapes and add their own keys.
 */
export function buildSystemParts(p: ConfigProblems, parts: ConfigParts) {
  /** Files for `rediss://`: a private CA, and a client certificate when Redis asks for one. */
  const redisTls = z.strictObject({
    ca: z.optional(nonEmpty()),
    cert: z.optional(nonEmpty()),
    key: z.optional(nonEmpty()),
    /** The host name the server's certificate must carry, when it differs from the URL's. */
    servername: z.optional(nonEmpty()),
  });

  const hostPort = z.string().check(z.regex(/^[^\s:]+:\d{1,5}$/, { error: p.hostPort }));

  /** How a system's Redis is reached beyond its URL: TLS files, Sentinel. */
  const redisShape = {
    redis: parts.watchedRedisUrl,
    tls: z.optional(redisTls),
    /**
     * Sentinel, as ioredis names it: `sentinels` (`host:port` each) and the master's `name`
     * (Celery's `master_name`). Either this, a `sentinel://` URL, or both (the hosts add up).
     */
    sentinel: z.optional(
      z.strictObject({
        sentinels: z.optional(z.array(hostPort).check(z.minLength(1))),
        name: z.optional(nonEmpty()),
      }),
    ),
  };

  /** A system's own Slack settings: where its alerts go (the incident channel when not set). */
  const systemSlack = z.optional(z.strictObject({ alertChannel: z.optional(parts.slackChannelId()) }));

  /** A queue name as it appears in `system/queue`: no slash, no whitespace. */
  const queueName = z.string().check(z.regex(/^[^\s/]+$/, { error: p.queueName }));

  /**
   * One `queues` entry: a name (or a `*` pattern), or the same with who owns it and what to do
   * about it. Read into names, patterns and context once, at load (`normalizeQueues`).
   */
  const queueEntry = z.union(
    [
      queueName,
      z.strictObject({
        name: queueName,
        /** A Slack user group (S…) or user (U…/W…). */
        owner: z.optional(
          z.string({ error: p.owner }).check(z.regex(/^[USW][A-Z0-9]+$/, { error: p.owner })),
        ),
        runbook: z.optional(parts.httpsUrl),
        dashboard: z.optional(parts.httpsUrl),
        notes: z.optional(z.string().check(z.minLength(1), z.maxLength(1000))),
      }),
    ],
    { error: (issue) => (issue.code === 'invalid_union' ? p.queueEntry : undefined) },
  );
  const queueEntries = z.optional(z.array(queueEntry).check(z.minLength(1)));

  const systemName = z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, { error: p.name }));

  return {
    systemName,
    redisShape,
    redisUrl: parts.redisUrl,
    watchedRedisUrl: parts.watchedRedisUrl,
    queueEntries,
    workerGroups: buildWorkerGroups(p),
    systemSlack,
  };
}

export type SystemParts = ReturnType<typeof buildSystemParts>;

/** A system with its `queues` normalized: names and patterns for the backends, context for the views. */
export const withQueueContext = <S extends { queues?: (string | QueueEntry)[] | undefined }>(system: S) => {
  const { queues, ...rest } = system;
  return { ...rest, ...normalizeQueues(queues) };
};

/** One problem of a `systems[]` entry, its path inside the entry. */
export interface SystemIssue {
  path: string[];
  message: string;
}

/**
 * What each kind of system adds to the checks every entry gets (`systemIssues` in index.ts):
 * problems of its own keys, and whether its `workers:` may hold a `celery-pool` group.
 */
export interface SystemKindChecks<S> {
  issues(system: S, p: ConfigProblems): SystemIssue[];
  acceptsPoolGroups: boolean;
}
