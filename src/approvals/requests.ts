import { ErrorCode, OpsError } from '../errors.js';
import type { ActionRequest } from '../store/store.js';
import { RequestStatus } from '../store/store.js';
import type { ApprovalsContext } from './context.js';
import type { Caller } from './execution.js';
import { isExpired } from './state.js';

/**
 * The request `id` as `actor` may see it, or UnknownRequest: a request from another channel, or
 * one the Home tab's viewer may not answer, does not exist for them.
 */
export async function loadForActor(
  ctx: Pick<ApprovalsContext, 'store' | 'authority' | 'policy'>,
  id: string,
  actor: Caller,
): Promise<ActionRequest> {
  const request = await ctx.store.getRequest(id);
  // A request from another channel is reported as unknown: a forged button must learn nothing.
  // The Home tab has no channel: there, only someone who holds the role that may approve the
  // request (or its requester) learns that it exists.
  const fromHome = actor.via === 'slack' && actor.surface === 'home';
  const hidden = fromHome
    ? request !== undefined &&
      request.requestedBy !== actor.id &&
      !(await ctx.authority.has(actor.id, ctx.policy.policyFor(request.action).role))
    : actor.via === 'slack' && Boolean(request?.channel) && actor.channel !== request?.channel;
  if (!request || hidden) {
    throw new OpsError(ErrorCode.UnknownRequest, {
      id,
      channel: actor.via === 'slack' ? 'yes' : undefined,
    });
  }
  // The Home tab crosses channels: what was asked in a private channel is answered there only
  // by its members (the requester, who asked in it, may still withdraw).
  if (fromHome && request.via === 'slack' && request.channel && request.requestedBy !== actor.id) {
    const membership = ctx.authority.channelMembership
      ? // Asked now, not from the tab's cache: someone removed from the channel since their tab
        // was drawn must not answer its requests for the minutes the cache would still vouch.
        await ctx.authority.channelMembership(actor.id, request.channel, { fresh: true })
      : { unknown: 'no Slack client' };
    if (membership !== 'public' && membership !== 'member') {
      throw new OpsError(ErrorCode.NotChannelMember, {
        id,
        reason: membership === 'not-member' ? 'not-member' : membership.unknown,
      });
    }
  }
  return request;
}

/** A pending request past its ttl, expired now (with its audit entry); any other request as it is. */
export async function expireIfDue(
  ctx: Pick<ApprovalsContext, 'store' | 'now' | 'execution' | 'entryOf' | 'notify'>,
  request: ActionRequest,
  actor: Caller,
): Promise<ActionRequest> {
  if (request.status !== RequestStatus.Pending || !isExpired(request.expiresAt, ctx.now())) return request;
  const expired = await ctx.execution.moveAudited(
    request,
    'expire',
    {},
    { expiredAt: ctx.now().toISOString() },
    ctx.entryOf(actor, request, 'request.expired', 'expired'),
  );
  if (expired) {
    await ctx.notify(expired);
    return expired;
  }
  return (await ctx.store.getRequest(request.id)) ?? request;
}

/** Pending requests that have not expired, oldest first. */
export async function pendingRequests(
  ctx: Pick<ApprovalsContext, 'store' | 'now'>,
): Promise<ActionRequest[]> {
  const rows = await ctx.store.listRequests({ statuses: [RequestStatus.Pending] });
  return rows
    .filter((r) => !isExpired(r.expiresAt, ctx.now()))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}
