import * as z from 'zod/mini';
import { type ConfigParts, intIn } from './parts.js';
import type { ConfigProblems } from './problems.js';

/** Who may do what: `roles:`, `policies:` and `cli:` of the config, worded by `p`. */
export function buildAccessSchemas(p: ConfigProblems, parts: ConfigParts) {
  const { principal } = parts;

  /** A Slack user id, as `cli.users` binds OS accounts to them (no groups, no `*`). */
  const slackUserId = z.string({ error: p.slackUserId }).check(
    z.regex(/^[UW][A-Z0-9]+$/, {
      error: p.slackUserId,
    }),
  );

  /** An OS account name as the command line reads it (`userInfo().username`): no whitespace. */
  const osAccount = z.string().check(z.regex(/^[^\s:]+$/, { error: p.osAccount }));

  const role = z.enum(['viewer', 'operator', 'admin']);

  const policy = z.strictObject({
    role: role,
    approvals: z._default(intIn(0, 5), 0),
  });
  /**
   * `retry`'s policy: `approvals` for one job, `bulkApprovals` (at least `approvals`) for a retry
   * of more than one (`retry … all`): re-queueing a whole dead-letter list waits for a second person
   * by default.
   */
  const retryPolicy = z.strictObject({
    role: role,
    approvals: z._default(intIn(0, 5), 0),
    bulkApprovals: z._default(intIn(0, 5), 1),
  });

  const roles = z.prefault(
    z.strictObject({
      viewer: z._default(z.array(principal), ['*']),
      operator: z._default(z.array(principal), []),
      admin: z._default(z.array(principal), []),
    }),
    {},
  );
  const policies = z.prefault(
    z.strictObject({
      pause: z._default(policy, { role: 'operator', approvals: 0 }),
      resume: z._default(policy, { role: 'operator', approvals: 0 }),
      retry: z._default(retryPolicy, { role: 'operator', approvals: 0, bulkApprovals: 1 }),
      scale: z._default(policy, { role: 'operator', approvals: 1 }),
      /** Restarting a worker group: as strict as scale unless configured. */
      restart: z._default(policy, { role: 'operator', approvals: 1 }),
      purge: z._default(policy, { role: 'admin', approvals: 1 }),
      revoke: z._default(policy, { role: 'operator', approvals: 0 }),
      fail: z._default(policy, { role: 'operator', approvals: 0 }),
      /** Restoring a purge from its archive: as strict as purge unless configured. */
      undo: z._default(policy, { role: 'admin', approvals: 1 }),
      /** Giving Celery results a TTL: Redis then deletes them, so as strict as purge. */
      'expire-results': z._default(policy, { role: 'admin', approvals: 1 }),
      /** A Celery task's or a BullMQ queue's rate limit: slows every worker, so two people. */
      'rate-limit': z._default(policy, { role: 'operator', approvals: 1 }),
      /** A BullMQ queue's global concurrency. */
      concurrency: z._default(policy, { role: 'operator', approvals: 1 }),
    }),
    {},
  );
  /**
   * The command line: `users` binds OS accounts to the Slack user ids they are. Only a bound
   * `--user` counts against a Slack identity (approving a request asked in Slack, or being
   * approved from Slack); a bound account may not claim an id it is not bound to.
   */
  const cli = z.prefault(
    z.strictObject({
      users: z._default(
        z.record(osAccount, z.array(slackUserId).check(z.minLength(1, { error: p.slackUserId })), {
          error: (issue) => (issue.code === 'invalid_key' ? p.osAccount : undefined),
        }),
        {},
      ),
    }),
    {},
  );
  return { roles, policies, cli };
}
