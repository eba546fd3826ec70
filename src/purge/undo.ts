import type { ActionProgress, ExecutionContext } from '../approvals/service.js';
import type { QueuePurger } from '../backends/queue-backend.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import type { ActionRequest, PurgeRecord } from '../store/store.js';
import {
  loadArchive,
  loadEngine,
  ownerGone,
  type PurgesContext,
  purgerFor,
  SYSTEM_ACTOR,
  type UndoResult,
} from './context.js';

/** How often a running undo tells the store it is alive. */
const BEAT_EVERY_MS = 5_000;

/** The purge an undo may start on, by its state alone (the archive is checked after). */
async function undoableState(ctx: PurgesContext, purgeId: string): Promise<PurgeRecord> {
  const { t } = ctx;
  const purge = await ctx.deps.store.getPurge(purgeId);
  const refuse = (reason: string) => new OpsError(ErrorCode.NotUndoable, { id: purgeId, reason });
  if (!purge) throw refuse(t.undoUnknown);
  if (purge.state === 'undone' || purge.state === 'rolled-back') throw refuse(t.undoAlready(purge.undoneBy));
  if (purge.state === 'undoing' && !purge.owner) throw refuse(t.undoResuming);
  if (purge.state === 'archiving' || purge.state === 'undoing') throw refuse(t.undoRunning);
  if (purge.archiveRemovedAt) throw refuse(t.undoArchiveGone(purge.archiveRemovedAt));
  return purge;
}

/** The purge an undo would restore, checked (state, archive kept, checksums). */
export async function undoablePurge(ctx: PurgesContext, purgeId: string): Promise<PurgeRecord> {
  const purge = await undoableState(ctx, purgeId);
  const { readManifest, verifyArchive } = await loadArchive();
  const manifest = await readManifest(purge.archivePath);
  await verifyArchive(purge.archivePath, manifest);
  return purge;
}

/** The approved undo: the purge claimed for it, then restored (see `resumeUndo`). */
export async function executeUndo(
  ctx: PurgesContext,
  request: ActionRequest,
  run: ExecutionContext,
): Promise<UndoResult> {
  const purgeId = String(request.params.purgeId);
  // The archive's checksums are verified once, by the undo itself, right before it restores.
  await undoableState(ctx, purgeId);
  const claimed = await ctx.deps.store.updatePurge(purgeId, ['done', 'failed'], {
    state: 'undoing',
    owner: ctx.owner,
    // Known from the start, so that whoever finishes an undo this run leaves can settle it.
    undoneBy: request.id,
    heartbeatAt: ctx.now().toISOString(),
    updatedAt: ctx.now().toISOString(),
  });
  if (!claimed) throw new OpsError(ErrorCode.NotUndoable, { id: purgeId, reason: ctx.t.undoRunning });
  return await resumeUndo(ctx, claimed, run);
}

/**
 * Runs (or resumes, at the marker its Redis keeps) the undo of a purge this process has claimed.
 * Redis gone or a shutdown: the purge stays `undoing`, released, for the next sweep or command
 * line to finish. Refused (checksum, ids that exist again, any reply error): undoable again,
 * and a later undo starts where this one stopped.
 */
export async function resumeUndo(
  ctx: PurgesContext,
  purge: PurgeRecord,
  run?: ExecutionContext,
): Promise<UndoResult> {
  const { deps } = ctx;
  let done = 0;
  const beat = undoHeartbeat(ctx, purge);
  const progress = (update: ActionProgress) => {
    done = update.done;
    run?.progress(update);
  };
  let purger: QueuePurger | undefined;
  ctx.runningUndos.add(purge.id);
  try {
    purger = await purgerFor(ctx, purge.system, purge.queue);
    const { restored, alreadyThere } = await (await loadEngine()).runUndo(purge, {
      purger,
      progress,
      beat,
      ...(run ? { signal: run.signal } : {}),
    });
    const at = ctx.now().toISOString();
    // Whoever holds the row now: the marker at its end says this undo is complete (a sweep
    // elsewhere may have claimed the row meanwhile, taking the heartbeat for a dead one's).
    await deps.store.updatePurge(purge.id, ['undoing'], {
      state: 'undone',
      owner: undefined,
      updatedAt: at,
      heartbeatAt: at,
    });
    // Only now: a marker dropped while the undo could still resume would start it over.
    await purger
      .clearUndoProgress(purge.id)
      .catch((error: unknown) =>
        deps.logger?.warn({ err: error, purgeId: purge.id }, 'undo marker not removed; it is harmless'),
      );
    return { restored, alreadyThere, purgeId: purge.id, archivePath: purge.archivePath };
  } catch (error) {
    throw await releaseStoppedUndo(ctx, purge, error, done, run);
  } finally {
    ctx.runningUndos.delete(purge.id);
    await purger?.close();
  }
}

/**
 * The undo's heartbeat, called between its steps: a write every few seconds, not every step,
 * plenty against a 60 s staleness. A store that blinks costs a beat, not the undo.
 */
function undoHeartbeat(ctx: PurgesContext, purge: PurgeRecord): () => Promise<void> {
  let lastBeat = ctx.now().getTime();
  return async () => {
    if (ctx.now().getTime() - lastBeat < BEAT_EVERY_MS) return;
    lastBeat = ctx.now().getTime();
    await ctx.deps.store
      .updatePurge(purge.id, ['undoing'], { heartbeatAt: ctx.now().toISOString() }, ctx.owner)
      .catch((error: unknown) =>
        ctx.deps.logger?.warn({ err: error, purgeId: purge.id }, 'undo heartbeat not stored'),
      );
  };
}

/**
 * What a stopped undo leaves, and the error it throws: taken over by another run (its row is
 * that run's); Redis gone or a shutdown (released, still `undoing`, `UndoInterrupted` for a lost
 * Redis); refused (undoable again).
 */
async function releaseStoppedUndo(
  ctx: PurgesContext,
  purge: PurgeRecord,
  error: unknown,
  done: number,
  run?: ExecutionContext,
): Promise<unknown> {
  const { deps, owner } = ctx;
  // Another run moved the marker: it holds the undo now, and its row too.
  if (isOpsError(error) && error.code === ErrorCode.UndoTakenOver) return error;
  const lost = isOpsError(error) && error.code === ErrorCode.RedisUnavailable;
  const at = ctx.now().toISOString();
  if (lost || run?.signal.aborted) {
    await deps.store
      .updatePurge(purge.id, ['undoing'], { owner: undefined, updatedAt: at }, owner)
      .catch(() => undefined);
    if (!lost) return error;
    return new OpsError(ErrorCode.UndoInterrupted, {
      system: purge.system,
      id: purge.id,
      target: `${purge.system}/${purge.queue}`,
      reason: (error as OpsError).params.reason,
      done,
      total: purge.purged,
    });
  }
  await deps.store
    .updatePurge(
      purge.id,
      ['undoing'],
      { state: purge.error ? 'failed' : 'done', owner: undefined, updatedAt: at },
      owner,
    )
    .catch(() => undefined);
  return error;
}

/**
 * An undo left running by a version that kept no marker (no `undoneBy`): where it stopped is
 * not known, so it is not resumed (Celery's messages would go back twice). Released as before,
 * once its process is surely gone, and audited; the user checks the queue.
 */
export async function releaseLegacyUndo(ctx: PurgesContext, purge: PurgeRecord): Promise<void> {
  if (ownerGone(purge.owner) !== true) return;
  const released = await ctx.deps.store.updatePurge(
    purge.id,
    ['undoing'],
    { state: purge.error ? 'failed' : 'done', owner: undefined, updatedAt: ctx.now().toISOString() },
    purge.owner ?? null,
  );
  if (!released) return;
  await ctx.deps.audit.record({
    ...SYSTEM_ACTOR,
    action: 'undo.recovered',
    target: `${purge.system}/${purge.queue}`,
    params: { purge: purge.id, diedOwner: purge.owner ?? null },
    outcome: 'interrupted',
    error: ctx.t.undoInterrupted,
  });
}
