import type { ActionProgress, ExecutionContext } from '../approvals/service.js';
import type { PurgeSelection } from '../backends/job-filter.js';
import type { PurgePlace, PurgePreview, PurgeState, QueuePurger } from '../backends/queue-backend.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import type { ActionRequest, PurgeRecord } from '../store/store.js';
import {
  capsOf,
  failureReason,
  loadArchive,
  loadEngine,
  type PurgeResult,
  type PurgesContext,
  purgerFor,
  resultOf,
  selectionOf,
} from './context.js';
import type { PurgeOutcome } from './engine.js';

/** The most a purge takes of each state (its preview's count, see `capsOf`). */
type Caps = Partial<Record<PurgeState, number>>;

/**
 * The preview a purge request shows: exact counts, a sample, where it will be archived. With a
 * purger of its own, closed before the request is created: the purge runs only once approved,
 * later (a second admin's click), maybe in another process (the bot, another replica, the
 * command line) or never (denied, expired), so no Redis connection is held across the approval.
 */
export async function previewPurge(
  ctx: PurgesContext,
  system: string,
  queue: string,
  states: PurgeState[],
  purgeId: string,
  selection?: PurgeSelection,
): Promise<PurgePreview & { archivePath: string }> {
  const purger = await purgerFor(ctx, system, queue, selection);
  try {
    const preview = await purger.preview(states);
    return {
      ...preview,
      archivePath: (await loadArchive()).archivePathFor(ctx.deps.config.archive.dir, purgeId),
    };
  } finally {
    await purger.close();
  }
}

/**
 * The approved purge, run by the approvals service: one purger counts what it takes (each state
 * at most its preview's count) and runs it.
 */
export async function executePurge(
  ctx: PurgesContext,
  request: ActionRequest,
  run: ExecutionContext,
): Promise<PurgeResult> {
  const system = String(request.params.system);
  const queue = String(request.params.queue);
  const states = (request.params.states as PurgeState[]) ?? ['waiting'];
  const selection = await selectionOf(ctx, request.id, request.params);
  const caps = await capsOf(ctx, request.id, request.params);
  const purger = await purgerFor(ctx, system, queue, selection);
  try {
    const { total, newSincePreview } = countToTake(await purger.places(states), caps);
    const backend = ctx.deps.backends().get(system)!.type;
    const purge = await createPurge(ctx, request.id, { system, queue, backend, states, total });
    const { record } = await runOwnedPurge(ctx, purge, purger, caps, run);
    return { ...resultOf(record), ...(newSincePreview !== undefined ? { newSincePreview } : {}) };
  } finally {
    await purger.close();
  }
}

/**
 * A purge this process has claimed from a dead one (see restart-recovery.ts), resumed with one
 * purger, selecting and capped as its request was.
 */
export async function resumePurge(ctx: PurgesContext, purge: PurgeRecord): Promise<PurgeOutcome> {
  const purger = await purgerFor(ctx, purge.system, purge.queue, await selectionOf(ctx, purge.id));
  try {
    return await runOwnedPurge(ctx, purge, purger, await capsOf(ctx, purge.id));
  } finally {
    await purger.close();
  }
}

/**
 * What a purge takes: each state gives up at most its preview's count. What arrived since stays,
 * and is said (`newSincePreview`, for a request that kept the counts).
 */
function countToTake(
  places: readonly PurgePlace[],
  caps: Caps | undefined,
): { total: number; newSincePreview: number | undefined } {
  const byState = new Map<PurgeState, number>();
  for (const place of places) byState.set(place.state, (byState.get(place.state) ?? 0) + place.size);
  let total = 0;
  let newSincePreview: number | undefined = caps ? 0 : undefined;
  for (const [state, size] of byState) {
    const cap = caps?.[state];
    total += cap === undefined ? size : Math.min(size, cap);
    if (cap !== undefined) newSincePreview = (newSincePreview ?? 0) + Math.max(0, size - cap);
  }
  return { total, newSincePreview };
}

/** The purge's row, owned by this process, and its archive's folder. */
async function createPurge(
  ctx: PurgesContext,
  id: string,
  what: Pick<PurgeRecord, 'system' | 'queue' | 'backend' | 'states' | 'total'>,
): Promise<PurgeRecord> {
  const { archivePathFor, createArchiveDir } = await loadArchive();
  const archivePath = archivePathFor(ctx.deps.config.archive.dir, id);
  await createArchiveDir(archivePath);
  const at = ctx.now().toISOString();
  const purge: PurgeRecord = {
    id,
    system: what.system,
    queue: what.queue,
    backend: what.backend,
    states: what.states,
    state: 'archiving',
    archivePath,
    total: what.total,
    chunks: 0,
    archived: 0,
    purged: 0,
    owner: ctx.owner,
    heartbeatAt: at,
    createdAt: at,
    updatedAt: at,
  };
  await ctx.deps.store.createPurge(purge);
  return purge;
}

/**
 * Runs (or resumes) a purge this process owns, with the purger its caller opened and closes. A
 * failure leaves the purge for a later run (shutting down, or its Redis gone) or finishes it as
 * failed (anything else).
 */
async function runOwnedPurge(
  ctx: PurgesContext,
  purge: PurgeRecord,
  purger: QueuePurger,
  caps: Caps | undefined,
  run?: ExecutionContext,
): Promise<PurgeOutcome> {
  const { deps, owner } = ctx;
  // What the delete scripts reported removed, chunk by chunk, this run: a chunk's row says so
  // only once its last batch is deleted.
  const deleted = new Map<number, number>();
  const engine = {
    store: deps.store,
    purger,
    owner,
    now: ctx.now,
    chunkSize: deps.chunkSize,
    deleted: (seq: number, purged: number) => deleted.set(seq, purged),
    ...(caps ? { caps } : {}),
    ...(run ? { progress: (update: ActionProgress) => run.progress(update), signal: run.signal } : {}),
  };
  try {
    return await (await loadEngine()).runPurge(purge, engine);
  } catch (error) {
    // Shutting down, or its Redis went away (killed, restarting, hanging past the command
    // timeout): leave it to a later run, owned by nobody so that the first run to find Redis
    // answering again takes it. Finished as failed instead, its last chunks would stay archived
    // but not deleted, in the archive and in the queue at once, and undo would refuse them.
    const lost = isOpsError(error) && error.code === ErrorCode.RedisUnavailable;
    if (run?.signal.aborted || lost) {
      await deps.store.updatePurge(purge.id, ['archiving'], { owner: undefined }, owner);
      if (lost) throw await interrupted(ctx, purge, error as OpsError, deleted);
    } else {
      const current = await deps.store.getPurge(purge.id);
      if (current?.state === 'archiving' && current.owner === owner)
        await (await loadEngine())
          .finishPurge(current, engine, 'failed', failureReason(error))
          .catch(() => undefined);
    }
    throw error;
  }
}

/**
 * `PurgeInterrupted`: which Redis, why, and how far the purge got: what the delete scripts
 * reported removed, in chunks marked deleted and in those this run was still deleting.
 */
async function interrupted(
  ctx: PurgesContext,
  purge: PurgeRecord,
  cause: OpsError,
  deleted: ReadonlyMap<number, number>,
): Promise<OpsError> {
  const chunks = await ctx.deps.store.listPurgeChunks(purge.id).catch(() => []);
  return new OpsError(ErrorCode.PurgeInterrupted, {
    system: purge.system,
    target: `${purge.system}/${purge.queue}`,
    reason: cause.params.reason,
    done: chunks.reduce((n, c) => n + (c.deleted ? c.purged : (deleted.get(c.seq) ?? 0)), 0),
    total: purge.total,
  });
}
