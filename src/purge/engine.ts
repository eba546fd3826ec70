import {
  type ArchiveManifest,
  readChunk,
  readManifest,
  verifyArchive,
  writeManifest,
} from '../archive/archive.js';
import type { PurgeState as BackendState } from '../backends/queue-backend.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { PurgeRecord } from '../store/store.js';
import { walkPlace } from './read.js';
import { type PurgeRecovery, recoverEarlierRun } from './recovery.js';
import {
  countEarlierTakes,
  type EngineDeps,
  type PurgeRun,
  reportProgress,
  settleAndThrow,
  startRun,
} from './run-state.js';

export type { PurgeRecovery } from './recovery.js';
export type { EngineDeps, Progress } from './run-state.js';

/** The archive of one finished (or failed) purge, as the manifest records it. */
export interface PurgeOutcome {
  record: PurgeRecord;
  manifest: ArchiveManifest;
  /** A resumed purge: what Redis said of the jobs an earlier run had archived. */
  recovered?: PurgeRecovery;
}

/**
 * Runs (or resumes) one purge. For each place, batches are read from where workers take next,
 * gathered into chunks, and each chunk is written to the archive and fsynced, recorded in the
 * store, and only then deleted from Redis with a conditional delete. Reading the next batches
 * overlaps with archiving and deleting the previous chunk; deletes run one call at a time and in
 * chunk order, so a batch is always at the edge of its list when it is deleted.
 *
 * Resuming (after a crash): chunks recorded but not marked deleted are deleted again (the delete
 * is conditional, so this is idempotent), chunk files the store never recorded are removed (their
 * jobs never left Redis), and the walk continues until `total` jobs are archived or the places
 * are empty. So each job is either in Redis or in the archive, never in both, never in neither.
 * A Redis that came back older than it was (a snapshot, a failover, a backup) holds again jobs
 * an earlier run archived and deleted: the resumed walk deletes them again without archiving
 * them a second time, and every chunk's counts are what Redis answered (see {@link PurgeRecovery}).
 *
 * The phases, each in a file of its own: recovery (recovery.ts), then the walk of each place:
 * read (read.ts), archive and delete (chunk.ts), sharing one `PurgeRun` (run-state.ts); then the
 * manifest (`finishPurge`).
 */
export async function runPurge(purge: PurgeRecord, deps: EngineDeps): Promise<PurgeOutcome> {
  const deleteBatch = deps.deleteBatch ?? deps.purger.batch?.delete ?? 1000;
  // 1. What a killed run left behind (see recovery.ts).
  const earlierRun = await recoverEarlierRun(purge, deps, deleteBatch);
  const run = startRun(purge, deps, earlierRun, deleteBatch);
  reportProgress(run);

  // 2. The walk: read, archive, delete, place after place, each state up to its cap.
  const places = await deps.purger.places(purge.states as BackendState[]);
  countEarlierTakes(run, places, earlierRun.archivedByPlace);
  for (const place of places) {
    await walkPlace(run, place);
    if (deps.signal?.aborted) break;
  }
  await settleLastChunks(run);
  if (deps.signal?.aborted) throw stoppedForShutdown(purge);

  // 3. The manifest, from the chunk rows.
  reportProgress(run);
  const outcome = await finishPurge(purge, deps, 'done');
  return earlierRun.recorded.length > 0 ? { ...outcome, recovered: run.recovered } : outcome;
}

/** The last chunks of the walk recorded and deleted; the first failure of any chunk is thrown. */
async function settleLastChunks(run: PurgeRun): Promise<void> {
  try {
    await run.recordChain;
  } catch (error) {
    return await settleAndThrow(run, error);
  }
  await run.deleteChain;
  if (run.failure) throw run.failure;
}

/** Writes the manifest from the recorded chunks and moves the purge to `state`. */
export async function finishPurge(
  purge: PurgeRecord,
  deps: Pick<EngineDeps, 'store' | 'purger' | 'owner' | 'now'>,
  state: 'done' | 'failed',
  error?: string,
): Promise<PurgeOutcome> {
  const now = deps.now ?? (() => new Date());
  const chunks = await deps.store.listPurgeChunks(purge.id);
  const files = chunks.map((c) => ({
    name: c.file,
    records: c.records,
    purged: c.deleted ? c.purged : 0,
    skipped: c.skipped,
    sha256: c.sha256,
    bytes: c.bytes,
  }));
  const archived = files.reduce((n, f) => n + f.records, 0);
  const purged = files.reduce((n, f) => n + f.purged, 0);
  const finishedAt = now().toISOString();
  const manifest: ArchiveManifest = {
    version: 1,
    purgeId: purge.id,
    system: purge.system,
    type: purge.backend,
    queue: purge.queue,
    states: purge.states,
    createdAt: purge.createdAt,
    finishedAt,
    files,
    counts: { archived, purged, skipped: archived - purged },
    meta: deps.purger.meta(),
  };
  await writeManifest(purge.archivePath, manifest);
  const record = await deps.store.updatePurge(
    purge.id,
    ['archiving'],
    {
      state,
      archived,
      purged,
      chunks: chunks.length ? chunks[chunks.length - 1]!.seq : 0,
      finishedAt,
      updatedAt: finishedAt,
      heartbeatAt: finishedAt,
      ...(error ? { error } : {}),
    },
    deps.owner,
  );
  if (!record) throw new Error(`purge ${purge.id} is no longer owned by ${deps.owner}`);
  return { record, manifest };
}

/**
 * Undo: checks every archive file against the manifest (a mismatch refuses, naming the file),
 * then restores: files last to first, lines last to first, so that list order comes back exactly
 * (the oldest job ends up where a worker takes next, as before).
 *
 * A job whose id exists in Redis again is left as it is and counted in `existing`, never put
 * back a second time: a Redis that restarted from a snapshot taken before the purge, a failover
 * to a replica that lagged, a restore from backup, or a producer, brought it back. Each backend's
 * restore decides that in the same atomic step that writes (BullMQ: the job's hash; Celery: the
 * task id, in every priority list of the queue and in `unacked`).
 *
 * That sequence (moved lines left out) is fixed, and the lines go back in steps that each move
 * the undo's marker in Redis atomically with what they write. So an undo cut short by a lost
 * Redis, a killed process or a shutdown resumes at the marker: every line goes back at most once.
 * `alreadyThere` counts the lines handled and not put back, earlier runs of this undo included.
 */
export async function runUndo(
  purge: PurgeRecord,
  deps: Pick<EngineDeps, 'purger' | 'progress' | 'signal'> & {
    batch?: number;
    /**
     * Called between steps, and while checking: the service's heartbeat, so that no other host
     * takes a live undo for dead. Best effort: it must not throw.
     */
    beat?: () => Promise<void>;
  },
): Promise<{ restored: number; existing: string[]; alreadyThere: number }> {
  const manifest = await readManifest(purge.archivePath);
  // Redis first: while it is away (a sweep every 30 s retries) the archive is not hashed for nothing.
  const start = await deps.purger.undoProgress(purge.id);
  // Refusals say what is already back when a resumed undo stops: "nothing was restored" would be wrong.
  const partly = start.restored > 0 ? { restoredBefore: start.restored } : {};
  try {
    await verifyArchive(purge.archivePath, manifest);
  } catch (error) {
    if (isOpsError(error) && error.code === ErrorCode.ArchiveInvalid && start.restored > 0)
      throw new OpsError(error.code, { ...error.params, ...partly });
    throw error;
  }
  await deps.beat?.();
  const batch = deps.batch ?? 1000;
  const total = manifest.counts.purged;
  const order = [...manifest.files].reverse();
  const restorable = async (file: (typeof order)[number]) => {
    const skip = new Set(file.skipped);
    const lines = await readChunk(purge.archivePath, file.name);
    const kept = skip.size === 0 ? lines : lines.filter((l) => !skip.has(deps.purger.parse(l).identity));
    return kept.reverse();
  };
  let restored = start.restored;
  // Lines an earlier run of this undo handled without putting them back.
  const before = Math.max(0, start.position - start.restored);
  const existing: string[] = [];
  let position = 0;
  for (const file of order) {
    const lines = await restorable(file);
    const first = Math.max(0, start.position - position);
    for (let i = first; i < lines.length; i += batch) {
      if (deps.signal?.aborted) throw stoppedForShutdown(purge);
      const slice = lines.slice(i, i + batch);
      const outcome = await deps.purger.restore(slice, {
        purgeId: purge.id,
        from: position + i,
        restoredBefore: restored,
      });
      restored += outcome.restored;
      existing.push(...outcome.existing);
      deps.progress?.({ done: restored, total, phase: 'restoring' });
      await deps.beat?.();
    }
    position += lines.length;
  }
  return { restored, existing, alreadyThere: before + existing.length };
}

function stoppedForShutdown(purge: PurgeRecord): OpsError {
  return new OpsError(ErrorCode.NotSupported, {
    system: purge.system,
    type: purge.backend,
    what: messages().purge.stoppedForShutdown,
  });
}
