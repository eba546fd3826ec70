import type { Catalog } from '../i18n/index.js';
import type { ActionRequest, Store } from '../store/store.js';
import type { AuditWriter, Caller, Execution, ExecutionDeps, LeaseOptions } from './execution.js';
import type { ApprovalPolicy, Authority, PolicyDeps } from './policy.js';

/**
 * What every role of the approvals service works with (the requests' API and their sweep), built
 * once by `createApprovals`: the store and audit, the policy and the execution it composed, the
 * clock, and the listeners to tell of a change.
 */
export interface ApprovalsContext {
  store: Store;
  audit: AuditWriter;
  authority: Authority;
  config: PolicyDeps['config'];
  /** Stored with the request, which has no locale of its own: the config's locale. */
  t: Catalog['approvals'];
  now: () => Date;
  newId: () => string;
  lease: LeaseOptions;
  policy: ApprovalPolicy;
  execution: Execution;
  /** The audit entry of one step of `request`, timed now. */
  entryOf: ExecutionDeps['entryOf'];
  /** Tells every listener of a stored change; never throws. */
  notify(request: ActionRequest): Promise<void>;
}

/** The audit entry of one step of a request, timed by `now`, with what it keeps of a command-line caller. */
/**
 * queue-ops itself as the one who acts (an expiry, a lapsed execution closed by the sweep), on
 * the request's own surface (`via`, `channel`) when it has one.
 */
export function systemCaller(on: Pick<ActionRequest, 'via' | 'channel'> = { via: 'cli' }): Caller {
  return { id: 'queue-ops', name: 'queue-ops', via: on.via, ...(on.channel ? { channel: on.channel } : {}) };
}

export function stepEntries(now: () => Date, originOf: ApprovalPolicy['originOf']): ExecutionDeps['entryOf'] {
  return (actor, request, action, outcome, error, extra) => ({
    at: now().toISOString(),
    actorId: actor.id,
    actorName: actor.name,
    via: actor.via,
    channel: actor.channel,
    action,
    target: request.target,
    params: {
      request: request.id,
      action: request.action,
      ...request.params,
      ...originOf(actor),
      ...extra,
    },
    outcome,
    error,
  });
}

/** Records one step of `request` on its own (a refusal, a creation): no state change goes with it. */
export async function auditStep(
  ctx: Pick<ApprovalsContext, 'audit' | 'entryOf'>,
  actor: Caller,
  request: ActionRequest,
  action: string,
  outcome: string,
  error?: string,
): Promise<void> {
  await ctx.audit.record(ctx.entryOf(actor, request, action, outcome, error));
}
