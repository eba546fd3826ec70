import type { CommandContext, Request } from '../pipeline/types.js';

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
