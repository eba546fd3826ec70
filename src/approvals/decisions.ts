import { formatUtc } from '../blocks/format.js';
import type { ActionName } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { currentLocale } from '../i18n/index.js';
import type { ActionRequest, Approval } from '../store/store.js';
import { RequestStatus } from '../store/store.js';
import { type ApprovalsContext, auditStep, systemCaller } from './context.js';
import type { Caller } from './execution.js';
import { partiesOf } from './identity.js';
import { expireIfDue, loadForActor } from './requests.js';
import { isExpired } from './state.js';

export interface SubmitInput {
  actor: Caller;
  action: ActionName;
  target: string;
  params: Record<string, unknown>;
  /** One line computed now, shown to approvers. */
  preview: string;
  /** The request's id when the preview already names it (a purge's archive path); else a new one. */
  id?: string;
  /** More approvals than the policy's `approvals` for this request (a bulk retry); never fewer. */
  requiredApprovals?: number;
}

/**
 * The same action asked twice (a double click, two people in one channel, `undo` typed again,
 * two replicas at the same instant) would wait as two requests, and both could be approved and
 * run. The store's unique index keeps the first; a twin whose ttl ran out is expired here (as a
 * sweep would) and the new one takes its place.
 */
async function createOnce(ctx: ApprovalsContext, request: ActionRequest): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await ctx.store.createRequest(request);
    if (outcome.created) return;
    const twin = outcome.pending;
    if (attempt < 3 && isExpired(twin.expiresAt, ctx.now())) {
      await expireIfDue(ctx, twin, systemCaller(twin));
      continue;
    }
    throw new OpsError(ErrorCode.DuplicateRequest, {
      id: twin.id,
      action: request.action,
      target: request.target,
    });
  }
}

/**
 * Creates a request. With `approvals: 0` in the policy it runs at once and the returned request is
 * already done or failed.
 */
export async function submitRequest(ctx: ApprovalsContext, input: SubmitInput): Promise<ActionRequest> {
  const policy = ctx.policy.policyFor(input.action);
  const required = Math.max(policy.approvals, input.requiredApprovals ?? 0);
  const createdAt = ctx.now();
  const request: ActionRequest = {
    id: input.id ?? ctx.newId(),
    action: input.action,
    target: input.target,
    params: input.params,
    status: required > 0 ? RequestStatus.Pending : RequestStatus.Approved,
    requestedBy: input.actor.id,
    requestedByName: input.actor.name,
    via: input.actor.via,
    channel: input.actor.channel,
    ...(input.actor.via === 'cli' && input.actor.osUser !== undefined
      ? { requestedByOsUser: input.actor.osUser, requestedOnHost: input.actor.host }
      : {}),
    requiredApprovals: required,
    approvals: [],
    preview: input.preview,
    createdAt: createdAt.toISOString(),
    expiresAt: new Date(createdAt.getTime() + ctx.config.approvals.ttlMinutes * 60_000).toISOString(),
    updatedAt: createdAt.toISOString(),
  };
  await createOnce(ctx, request);
  await auditStep(ctx, input.actor, request, 'request.created', required > 0 ? 'requested' : 'approved');
  if (required > 0) {
    // A new request is waiting for someone: their App Home tabs show it without a reopen.
    await ctx.notify(request);
    return request;
  }
  return await ctx.execution.execute(request, input.actor);
}

/** Refuses `actor`'s approval of `request` (with its audit entry) unless they may give it now. */
async function checkApprover(ctx: ApprovalsContext, id: string, request: ActionRequest, actor: Caller) {
  const { policy } = ctx;
  if (request.status === RequestStatus.Expired) {
    await auditStep(ctx, actor, request, 'request.approve', 'rejected', 'expired');
    throw new OpsError(ErrorCode.RequestExpired, {
      id,
      expiresAt: request.expiresAt,
      // As every other time is shown, in the answer's locale (a request's is current here).
      expired: formatUtc(Date.parse(request.expiresAt), currentLocale(), false),
    });
  }
  if (request.status !== RequestStatus.Pending) {
    throw new OpsError(ErrorCode.RequestNotPending, { id, status: request.status });
  }
  if (request.requestedBy === actor.id) {
    await auditStep(ctx, actor, request, 'request.approve', 'rejected', 'self-approval');
    throw new OpsError(ErrorCode.SelfApproval, { id });
  }
  // A command-line identity counts against a Slack one only when `cli.users` binds it.
  const cross = policy.crossError(id, policy.partyOf(actor), partiesOf(request));
  if (cross) {
    await auditStep(
      ctx,
      actor,
      request,
      'request.approve',
      'rejected',
      cross.code === ErrorCode.SelfApproval ? 'self-approval' : cross.code,
    );
    throw cross;
  }
  try {
    await policy.checkRole(actor, policy.policyFor(request.action).role, `approve ${request.action}`);
  } catch (error) {
    await auditStep(ctx, actor, request, 'request.approve', 'denied', (error as OpsError).code);
    throw error;
  }
}

/** Adds `actor`'s approval; the last one needed runs the request. */
export async function approveRequest(
  ctx: ApprovalsContext,
  id: string,
  actor: Caller,
): Promise<ActionRequest> {
  let request = await expireIfDue(ctx, await loadForActor(ctx, id, actor), actor);
  await checkApprover(ctx, id, request, actor);
  const approval: Approval = { userId: actor.id, userName: actor.name, at: ctx.now().toISOString() };
  if (actor.via === 'cli') {
    approval.via = 'cli';
    if (actor.osUser !== undefined) approval.osUser = actor.osUser;
    if (actor.host !== undefined) approval.host = actor.host;
  }
  // One OS account typing `--user U0BOB approve` after `--user U0ALICE pause` is one person.
  const distinctOsUser = actor.via === 'cli' && ctx.config.approvals.cliSameOsUser !== 'allow';
  // The approval, its audit entry and (when it is the last one needed, before the ttl) the
  // move to approved are one write: a full disk never keeps one without the others.
  const added = await ctx.audit.recordWith(
    ctx.entryOf(actor, request, 'request.approved', 'approved'),
    (entry, key) =>
      ctx.store.addApprovalAudited(
        id,
        approval,
        { distinctOsUser, approveIfCompleteAt: approval.at },
        { entry, key },
      ),
  );
  if (!added.ok) {
    if (added.reason === 'self') throw new OpsError(ErrorCode.SelfApproval, { id });
    if (added.reason === 'same-os-user') {
      await auditStep(
        ctx,
        actor,
        added.request ?? request,
        'request.approve',
        'rejected',
        ctx.t.sameOsUserRejected,
      );
      throw new OpsError(ErrorCode.SelfApproval, { id });
    }
    if (added.reason === 'duplicate') throw new OpsError(ErrorCode.AlreadyApproved, { id });
    if (added.reason === 'missing') throw new OpsError(ErrorCode.UnknownRequest, { id });
    const current = added.request ?? request;
    throw new OpsError(ErrorCode.RequestNotPending, { id, status: current.status });
  }
  request = added.request;
  // Not complete yet, or its ttl ran out at this very moment (the sweep expires it).
  if (request.status !== RequestStatus.Approved) {
    await ctx.notify(request);
    return request;
  }
  return await ctx.execution.execute(request, actor);
}

/** Denies a pending request: its requester withdraws it, or someone who could approve it refuses it. */
export async function denyRequest(
  ctx: ApprovalsContext,
  id: string,
  actor: Caller,
  reason?: string,
): Promise<ActionRequest> {
  const { policy } = ctx;
  const request = await expireIfDue(ctx, await loadForActor(ctx, id, actor), actor);
  if (request.status !== RequestStatus.Pending) {
    throw new OpsError(ErrorCode.RequestNotPending, { id, status: request.status });
  }
  // An unbound `--user` does not answer what was asked in Slack, not even as its requester.
  const cross = policy.crossError(id, policy.partyOf(actor), partiesOf(request).slice(0, 1));
  if (cross?.code === ErrorCode.IdentityNotBound && cross.params.kind === 'cli-actor') {
    await auditStep(ctx, actor, request, 'request.deny', 'rejected', cross.code);
    throw cross;
  }
  // The requester may withdraw; anyone else needs the role that could approve it.
  if (request.requestedBy !== actor.id) {
    try {
      await policy.checkRole(actor, policy.policyFor(request.action).role, `deny ${request.action}`);
    } catch (error) {
      await auditStep(ctx, actor, request, 'request.deny', 'denied', (error as OpsError).code);
      throw error;
    }
  }
  const denied = await ctx.execution.moveAudited(
    request,
    'deny',
    { deniedBy: actor.id, denyReason: reason },
    undefined,
    ctx.entryOf(actor, request, 'request.denied', 'rejected', reason),
  );
  if (!denied) {
    const current = (await ctx.store.getRequest(id)) ?? request;
    throw new OpsError(ErrorCode.RequestNotPending, { id, status: current.status });
  }
  await ctx.notify(denied);
  return denied;
}
