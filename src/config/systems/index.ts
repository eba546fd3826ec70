import * as z from 'zod/mini';
import type { ConfigParts } from '../parts.js';
import type { ConfigProblems } from '../problems.js';
import { bullmqSystemChecks, bullmqSystemShape } from './bullmq.js';
import { celerySystemChecks, celerySystemShape } from './celery.js';
import { buildSystemParts, type SystemKindChecks, withQueueContext } from './common.js';

/**
 * One `systems[]` entry, of any kind: each kind's shape is in its own file (`bullmq.ts`,
 * `celery.ts`); a new kind is its file and one line here and in `SYSTEM_KIND_CHECKS`.
 */
export function buildSystemSchema(p: ConfigProblems, parts: ConfigParts) {
  const systemParts = buildSystemParts(p, parts);
  // `queues` is read into names, patterns and context here, once, for every consumer.
  return z.discriminatedUnion(
    'type',
    [
      z.pipe(bullmqSystemShape(systemParts), z.transform(withQueueContext)),
      z.pipe(celerySystemShape(systemParts), z.transform(withQueueContext)),
    ],
    {
      error: (issue) => (issue.code === 'invalid_union' ? p.systemType : (issue.message ?? p.invalidSystem)),
    },
  );
}

type SystemEntry = z.output<ReturnType<typeof buildSystemSchema>>;

/** Each kind's own checks, by its `type`. */
const SYSTEM_KIND_CHECKS: {
  [K in SystemEntry['type']]: SystemKindChecks<Extract<SystemEntry, { type: K }>>;
} = {
  bullmq: bullmqSystemChecks,
  celery: celerySystemChecks,
};

/** A non-numeric path segment in any part of a `sentinel://` URL names the master. */
function sentinelMasterInUrl(url: string): boolean {
  return url.split(';').some((part) => /^sentinel:\/\/[^/]*\/(.*\/)?[^/\d][^/]*$/i.test(part.trim()));
}

/**
 * What the `systems` of a parsed config are refused for beyond each entry's shape, in order, each
 * path from the config's root: Sentinel without a master's name, the kind's own checks, Sentinel
 * without hosts, a name used twice, a worker group the kind cannot drive.
 */
export function systemIssues(
  systems: readonly SystemEntry[],
  p: ConfigProblems,
): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  const seen = new Map<string, number>();
  systems.forEach((s, index) => {
    const kind = SYSTEM_KIND_CHECKS[s.type] as SystemKindChecks<SystemEntry>;
    const sentinelUrl = /^sentinel:\/\//i.test(s.redis);
    if ((sentinelUrl || s.sentinel) && !s.sentinel?.name && !(sentinelUrl && sentinelMasterInUrl(s.redis))) {
      issues.push({ path: ['systems', index, 'sentinel', 'name'], message: p.sentinelName });
    }
    for (const issue of kind.issues(s, p))
      issues.push({ path: ['systems', index, ...issue.path], message: issue.message });
    if (s.sentinel && !sentinelUrl && !s.sentinel.sentinels) {
      issues.push({ path: ['systems', index, 'sentinel', 'sentinels'], message: p.sentinels });
    }
    const first = seen.get(s.name);
    if (first !== undefined) {
      issues.push({
        path: ['systems', index, 'name'],
        message: p.duplicateSystem(s.name, `systems[${first}]`),
      });
    } else {
      seen.set(s.name, index);
    }
    // A Celery pool is resized over pidbox, which only the workers of some kinds answer.
    for (const [group, spec] of Object.entries(s.workers ?? {})) {
      if (spec.type === 'celery-pool' && !kind.acceptsPoolGroups) {
        issues.push({ path: ['systems', index, 'workers', group, 'type'], message: p.celeryPoolOnBullmq });
      }
    }
  });
  return issues;
}
