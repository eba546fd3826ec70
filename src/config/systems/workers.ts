import * as z from 'zod/mini';
import { intIn, nonEmpty } from '../parts.js';
import type { ConfigProblems } from '../problems.js';

/** `workers:` of a system (group name → how its capacity is changed), worded by `p`. */
export function buildWorkerGroups(p: ConfigProblems) {
  /** A count of replicas, containers or pool processes. */
  const replicas = intIn(0, 1000);

  /** A Kubernetes object name (RFC 1123 label/subdomain, as `kubectl` accepts). */
  const kubeName = z.string().check(
    z.regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
      error: p.kubernetesName,
    }),
  );

  /**
   * What `restart` checks afterwards, on every kind of group: the worker names that belong to it
   * (`*` matches any run of characters; `[]`: none answer, as for celery beat) and how long it
   * waits for them (and for a Kubernetes rollout) before answering who is back and who is not.
   */
  const restartCheck = {
    workerNames: z.optional(z.array(nonEmpty())),
    restartTimeoutSeconds: z._default(intIn(5, 600), 60),
    /**
     * The queues the group's workers consume: `why` offers `restart`/`scale` of this group for a
     * cause on them (a system of one group needs none).
     */
    queues: z.optional(z.array(nonEmpty()).check(z.minLength(1))),
  };

  const kubernetesGroup = z.strictObject({
    type: z.literal('kubernetes'),
    namespace: kubeName,
    deployment: kubeName,
    min: replicas,
    max: replicas,
    ...restartCheck,
  });

  const composeGroup = z.strictObject({
    type: z.literal('compose'),
    project: nonEmpty(),
    file: nonEmpty(),
    /** `--env-file` of the project, given to every `docker compose` run (scale and restart). */
    envFile: z.optional(nonEmpty()),
    service: nonEmpty(),
    min: replicas,
    max: replicas,
    ...restartCheck,
  });

  const celeryPoolGroup = z.strictObject({
    type: z.literal('celery-pool'),
    min: replicas.check(z.minimum(1)),
    max: replicas.check(z.minimum(1)),
    /**
     * How `restart` restarts the pool's workers: `pool_restart` (workers started with
     * `worker_pool_restarts=True`; a worker without it is shut down instead) or `shutdown` of
     * every worker, for its supervisor to start again.
     */
    restart: z._default(z.enum(['pool_restart', 'shutdown']), 'pool_restart'),
    ...restartCheck,
  });

  const workerGroup = z
    .discriminatedUnion('type', [kubernetesGroup, composeGroup, celeryPoolGroup], {
      error: (issue) =>
        issue.code === 'invalid_union' ? p.workerGroupType : (issue.message ?? p.invalidWorkerGroup),
    })
    .check(z.refine((group) => group.min <= group.max, { error: p.minAboveMax, path: ['max'] }));

  return z.record(
    z.string().check(
      z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
        error: p.groupName,
      }),
    ),
    workerGroup,
  );
}
