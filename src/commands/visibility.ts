import type { CommandContext, Request } from '../pipeline/types.js';

/**
 * Who sees a read-only answer in Slack. Shared answers (the state of the queues, the open alerts)
 * are posted in the channel, so everyone in the incident looks at the same picture; answers only
 * the asker needs (help, their approvals, the audit trail, the timeline, which may hold entries
 * from other channels) are ephemeral. `help` says which is which from these lists.
 */
export const SHARED_ANSWERS = ['status', 'dlq', 'workers', 'stuck', 'alerts', 'trend', 'why'] as const;
export const OWN_ANSWERS = ['help', 'pending', 'audit', 'timeline'] as const;

/** What one person may see of requests and audit entries made elsewhere. */
export type Visibility = { all: true } | { all: false; channel: string };

/**
 * In Slack, a viewer sees only what was asked in the channel they are typing in, or from the
 * command line: a request or entry from a private channel must not reach people outside it.
 * Admins see everything, and so does the command line (whoever runs it can read the store).
 */
export async function visibilityFor(ctx: CommandContext, request: Request): Promise<Visibility> {
  if (request.via !== 'slack') return { all: true };
  if (ctx.roles && (await ctx.roles.has(request.actor.id, 'admin'))) return { all: true };
  return { all: false, channel: request.channel ?? '' };
}

/** Whether something asked through `via` in `channel` is visible under `visibility`. */
export function isVisible(visibility: Visibility, item: { via: string; channel?: string }): boolean {
  return visibility.all || item.via !== 'slack' || item.channel === visibility.channel;
}
