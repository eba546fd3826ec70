import { ErrorCode, isOpsError } from '../errors.js';
import type { PurgeRecord } from '../store/store.js';
import {
  failRequest,
  failureReason,
  ownerGone,
  type PurgesContext,
  resultOf,
  SYSTEM_ACTOR,
  settleRequest,
} from './context.js';
import { resumePurge } from './execute.js';
import { releaseLegacyUndo, resumeUndo } from './undo.js';

export interface RecoverOptions {
  /** Told of each purge (or undo) this run takes over, before it finishes it. */
  onClaimed?: (purge: PurgeRecord, kind: 'purge' | 'undo') => void;
}

/**
 * Purges and undos whose process died (SIGKILL, a crashed replica), or whose Redis went away, are
 * claimed and finished: a purge from its archive and store cursor, an undo from the marker its
 * Redis keeps. The audit says so. Run at every start of the bot and of the command line, and by
 * the maintenance sweep. Returns the purges it finished.
 */
export async function recoverDeadRuns(
  ctx: PurgesContext,
  options: RecoverOptions = {},
): Promise<PurgeRecord[]> {
  const staleBefore = ctx.now().getTime() - (ctx.deps.staleAfterMs ?? 60_000);
  const finished: PurgeRecord[] = [];
  for (const purge of await ctx.deps.store.listPurges({ states: ['archiving'] })) {
    if (!isDead(purge, ownerGone(purge.owner), staleBefore)) continue;
    const claimed = await claim(ctx, purge, 'archiving');
    if (!claimed) continue;
    ctx.deps.logger?.warn({ purgeId: purge.id, owner: purge.owner }, 'finishing a purge whose process died');
    options.onClaimed?.(claimed, 'purge');
    const record = await finishDeadPurge(ctx, purge, claimed);
    if (record) finished.push(record);
  }
  // An undo whose process died, or whose Redis went away, is finished from where the marker
  // in that Redis says it stopped: what is back is never put back twice.
  for (const purge of await ctx.deps.store.listPurges({ states: ['undoing'] })) {
    if (purge.undoneBy === undefined) {
      await releaseLegacyUndo(ctx, purge);
      continue;
    }
    // One of this process's own whose run ended without releasing it (the store blinked).
    const gone = purge.owner === ctx.owner ? !ctx.runningUndos.has(purge.id) : ownerGone(purge.owner);
    if (!isDead(purge, gone, staleBefore)) continue;
    const claimed = await claim(ctx, purge, 'undoing');
    if (!claimed) continue;
    options.onClaimed?.(claimed, 'undo');
    if (purge.owner && purge.owner !== ctx.owner)
      ctx.deps.logger?.warn(
        { purgeId: purge.id, owner: purge.owner },
        'finishing an undo whose process died',
      );
    await finishDeadUndo(ctx, purge, claimed, purge.undoneBy);
  }
  return finished;
}

/**
 * Is the run holding `purge` dead? Its process is gone, or (on another host, where that cannot
 * be asked) its heartbeat is older than `staleBefore`.
 */
function isDead(purge: PurgeRecord, gone: boolean | undefined, staleBefore: number): boolean {
  const stale = Date.parse(purge.heartbeatAt ?? purge.updatedAt) < staleBefore;
  return !(gone === false || (gone === undefined && !stale));
}

/** The purge's row taken over by this process, if no one else took it first. */
async function claim(
  ctx: PurgesContext,
  purge: PurgeRecord,
  state: 'archiving' | 'undoing',
): Promise<PurgeRecord | undefined> {
  return await ctx.deps.store.updatePurge(
    purge.id,
    [state],
    { owner: ctx.owner, heartbeatAt: ctx.now().toISOString() },
    purge.owner ?? null,
  );
}

/**
 * A dead purge resumed, audited and its request settled; undefined when it could not be finished
 * now (its Redis still away: released for the next run; or it failed: audited as such).
 */
async function finishDeadPurge(
  ctx: PurgesContext,
  purge: PurgeRecord,
  claimed: PurgeRecord,
): Promise<PurgeRecord | undefined> {
  const { deps } = ctx;
  const audited = { ...SYSTEM_ACTOR, action: 'purge.recovered', target: `${purge.system}/${purge.queue}` };
  try {
    const { record, recovered } = await resumePurge(ctx, claimed);
    await deps.audit.record({
      ...audited,
      params: {
        request: purge.id,
        diedOwner: purge.owner ?? null,
        ...resultOf(record),
        ...(recovered ? { recovered: { ...recovered } } : {}),
      },
      outcome: 'finished',
    });
    await settleRequest(ctx, purge.id, resultOf(record));
    return record;
  } catch (error) {
    if (
      isOpsError(error) &&
      (error.code === ErrorCode.PurgeInterrupted || error.code === ErrorCode.RedisUnavailable)
    ) {
      // Its Redis is still away: the purge waits, released, for the next run to try again
      // (this process's sweep included: a purge it owns would never look dead to it).
      await deps.store
        .updatePurge(purge.id, ['archiving'], { owner: undefined }, ctx.owner)
        .catch(() => undefined);
      deps.logger?.warn(
        { purgeId: purge.id, system: purge.system, reason: error.params.reason },
        'a purge waits for its Redis to answer again',
      );
      return undefined;
    }
    await deps.audit.record({
      ...audited,
      params: { request: purge.id, diedOwner: purge.owner ?? null },
      outcome: 'failed',
      error: failureReason(error),
    });
    deps.logger?.error({ err: error, purgeId: purge.id }, 'could not finish a purge whose process died');
    return undefined;
  }
}

/**
 * A dead undo resumed at its marker, audited and its request (`undoneBy`) settled; left as it
 * is when its Redis is still away or a live run elsewhere holds the marker; audited and its
 * request failed otherwise.
 */
async function finishDeadUndo(
  ctx: PurgesContext,
  purge: PurgeRecord,
  claimed: PurgeRecord,
  undoneBy: string,
): Promise<void> {
  const { deps } = ctx;
  const audited = { ...SYSTEM_ACTOR, action: 'undo.recovered', target: `${purge.system}/${purge.queue}` };
  const params = { purge: purge.id, request: undoneBy, diedOwner: purge.owner ?? null };
  try {
    const result = await resumeUndo(ctx, claimed);
    await deps.audit.record({
      ...audited,
      params: { ...params, restored: result.restored, alreadyThere: result.alreadyThere },
      outcome: 'finished',
    });
    await settleRequest(ctx, undoneBy, result);
  } catch (error) {
    if (isOpsError(error) && error.code === ErrorCode.UndoInterrupted) {
      deps.logger?.warn(
        { purgeId: purge.id, system: purge.system },
        'an undo waits for its Redis to answer again',
      );
      return;
    }
    if (isOpsError(error) && error.code === ErrorCode.UndoTakenOver) {
      // A live run elsewhere (its heartbeat looked old) holds the marker: it is left to it.
      await deps.store
        .updatePurge(purge.id, ['undoing'], { owner: purge.owner }, ctx.owner)
        .catch(() => undefined);
      deps.logger?.info({ purgeId: purge.id, owner: purge.owner }, 'an undo is still running elsewhere');
      return;
    }
    const reason = failureReason(error);
    await deps.audit.record({ ...audited, params, outcome: 'failed', error: reason });
    await failRequest(ctx, undoneBy, reason);
    deps.logger?.error({ err: error, purgeId: purge.id }, 'could not finish an undo whose process died');
  }
}
