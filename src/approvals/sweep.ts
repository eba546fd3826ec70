import type { ActionRequest } from '../store/store.js';
import { RequestStatus } from '../store/store.js';
import { type ApprovalsContext, systemCaller } from './context.js';
import { expireIfDue } from './requests.js';
import { isExpired } from './state.js';

/** Executions started before leases existed have none: older than this with no outcome, they count as dead. */
export const STALE_EXECUTION_MS = 2 * 60_000;

/** A purge or undo request whose purge row recovery will finish (see Purges.recover). */
async function finishedByRecovery(
  ctx: Pick<ApprovalsContext, 'store'>,
  row: ActionRequest,
): Promise<boolean> {
  if (row.action === 'purge') return (await ctx.store.getPurge(row.id))?.state === 'archiving';
  if (row.action !== 'undo') return false;
  const purge = await ctx.store.getPurge(String(row.params.purgeId));
  return purge?.state === 'undoing' && purge.undoneBy === row.id;
}

/**
 * An execution whose lease ran out becomes `interrupted` and "may have run" (it started: its
 * start was written with `request.executing`), with what to check; an approved request no
 * replica started within a lease's length becomes `interrupted` and "did not run", which is
 * then certain: nothing runs without its start written first. Each with its audit entry, in
 * one write. Undefined when the row is left as it is.
 */
async function closeIfLapsed(
  ctx: ApprovalsContext,
  row: ActionRequest,
  staleAfterMs: number,
): Promise<ActionRequest | undefined> {
  const { execution, t } = ctx;
  const at = ctx.now();
  const system = systemCaller(row);
  if (row.status === RequestStatus.Executing) {
    // This process ran it and is still writing its outcome (a full disk): not dead.
    if (execution.unsettled(row.id)) return undefined;
    // The lease's own end when it has one; executions from before leases, by their start.
    const deadline = row.leaseUntil ? at : new Date(at.getTime() - staleAfterMs);
    if (Date.parse(row.leaseUntil ?? row.startedAt ?? row.updatedAt) > deadline.getTime()) return undefined;
    // A purge or undo goes on from its archive: purge recovery (here or on another replica)
    // finishes it and settles its request. Reported interrupted meanwhile, it would show an
    // "interrupted" error next to its `done`.
    if (await finishedByRecovery(ctx, row)) return undefined;
    const error = t.interruptedError(row.target);
    // Conditional on the lease still being out: a renewal that lands first keeps it running.
    return await execution.moveAudited(
      row,
      'interrupt',
      { error, finishedAt: at.toISOString() },
      { leaseExpiredAt: deadline.toISOString() },
      ctx.entryOf(system, row, 'request.interrupted', 'interrupted', error),
    );
  }
  // Approved, but its start was never written (its bot died first, or the store refused it):
  // no replica picked it up within a lease's length, and none will.
  if (Date.parse(row.updatedAt) > at.getTime() - ctx.lease.ttlMs) return undefined;
  return await execution.moveAudited(
    row,
    'abandon',
    { error: t.neverStartedError, finishedAt: at.toISOString() },
    undefined,
    ctx.entryOf(system, row, 'request.interrupted', 'interrupted', t.neverStartedError),
  );
}

/** Marks pending requests past their ttl as expired; returns them. */
export async function expireDueRequests(ctx: ApprovalsContext): Promise<ActionRequest[]> {
  const system = systemCaller();
  const rows = await ctx.store.listRequests({ statuses: [RequestStatus.Pending] });
  const expired: ActionRequest[] = [];
  for (const row of rows) {
    if (!isExpired(row.expiresAt, ctx.now())) continue;
    const moved = await expireIfDue(ctx, row, { ...system, channel: row.channel, via: row.via });
    if (moved.status === RequestStatus.Expired) expired.push(moved);
  }
  return expired;
}

/** Closes the executions whose lease ran out, and the approved requests no replica started (see `closeIfLapsed`). */
export async function recoverInterruptedRequests(
  ctx: ApprovalsContext,
  options: { staleAfterMs?: number } = {},
): Promise<ActionRequest[]> {
  const rows = await ctx.store.listRequests({
    statuses: [RequestStatus.Approved, RequestStatus.Executing],
  });
  const out: ActionRequest[] = [];
  for (const row of rows) {
    const moved = await closeIfLapsed(ctx, row, options.staleAfterMs ?? STALE_EXECUTION_MS);
    if (!moved) continue;
    await ctx.notify(moved);
    out.push(moved);
  }
  return out;
}
