import { jobsVanished } from './causes/jobs-vanished.js';
import { noCapacity } from './causes/no-capacity.js';
import { noWorkers } from './causes/no-workers.js';
import { paused } from './causes/paused.js';
import { redisMemory } from './causes/redis-memory.js';
import { redisNetwork } from './causes/redis-network.js';
import { retryLoop } from './causes/retry-loop.js';
import { slowDependency } from './causes/slow-dependency.js';
import { stuckTasks } from './causes/stuck-tasks.js';
import { taskBurst } from './causes/task-burst.js';
import type { CauseId, Check, Diagnosis, Evidence, Finding, Outcome } from './types.js';

/** Every cause's check, in the order `checked[]` lists them. */
export const CAUSES: readonly { id: CauseId; check: (e: Evidence) => Outcome }[] = [
  { id: 'paused', check: paused },
  { id: 'no-workers', check: noWorkers },
  { id: 'stuck-tasks', check: stuckTasks },
  { id: 'redis-memory', check: redisMemory },
  { id: 'jobs-vanished', check: jobsVanished },
  { id: 'task-burst', check: taskBurst },
  { id: 'retry-loop', check: retryLoop },
  { id: 'slow-dependency', check: slowDependency },
  { id: 'no-capacity', check: noCapacity },
  { id: 'redis-network', check: redisNetwork },
];

/**
 * Causes that are a consequence of another when that one is strong for all of their queues: a
 * backlog behind a burst, stuck tasks or a slow dependency is short of capacity only because of
 * them; a burst into a queue nobody consumes is first a queue nobody consumes.
 */
const EXPLAINED_BY: Partial<Record<CauseId, readonly CauseId[]>> = {
  'no-capacity': ['task-burst', 'stuck-tasks', 'slow-dependency', 'retry-loop', 'no-workers', 'paused'],
  'task-burst': ['no-workers', 'paused'],
  'stuck-tasks': ['slow-dependency'],
};

function demote(findings: Finding[]): Finding[] {
  return findings.map((f) => {
    const by = EXPLAINED_BY[f.id];
    if (f.confidence !== 'strong' || !by || f.queues.length === 0) return f;
    const covered = f.queues.every((q) =>
      findings.some((o) => o.confidence === 'strong' && by.includes(o.id) && o.queues.includes(q)),
    );
    return covered ? { ...f, confidence: 'possible' } : f;
  });
}

/**
 * The verdict from the evidence, pure (the `why` verb and the monitor both call it): `cause` when a
 * cause is strong, `unclear` when there are only possible ones or a check could not run,
 * `healthy` when every check found nothing. Causes strongest first, then by how much they explain.
 */
export function diagnose(evidence: Evidence): Diagnosis {
  const findings: Finding[] = [];
  const checked: Check[] = [];
  for (const { id, check } of CAUSES) {
    const outcome = check(evidence);
    if (outcome.result === 'found') findings.push({ id, ...outcome.finding });
    checked.push({
      id,
      result: outcome.result,
      ...(outcome.result !== 'found' && outcome.reason ? { reason: outcome.reason } : {}),
    });
  }
  const causes = demote(findings).sort(
    (a, b) => Number(b.confidence === 'strong') - Number(a.confidence === 'strong') || b.weight - a.weight,
  );
  const verdict = causes.some((c) => c.confidence === 'strong')
    ? 'cause'
    : causes.length > 0 || checked.some((c) => c.result === 'unknown')
      ? 'unclear'
      : 'healthy';
  return { verdict, causes, checked };
}
