import { hostname } from 'node:os';
import type { ActionProgress, AuditRecorder, ExecutionContext } from '../approvals/service.js';
import { filterFromParams, type PurgeSelection } from '../backends/job-filter.js';
import type { PurgePreview, PurgeState, QueuePurger } from '../backends/queue-backend.js';
import type { BackendRegistry } from '../backends/registry.js';
import type { Config } from '../config/schema.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { type Locale, messages } from '../i18n/index.js';
import type { Logger } from '../lib/logger.js';
import type { ActionRequest, PurgeRecord, Store } from '../store/store.js';

/**
 * The archive's file format (gzip off the main thread, fsync, read back), loaded when a purge, an
 * undo or the retention sweep touches an archive: every start runs `recover()`, which finds nothing
 * to do nearly always, and should not initialise gzip, readline and a worker pool for that.
 */
const loadArchive = () => import('../archive/archive.js');

/** The purge and undo engine (and the archive), loaded when one runs. */
const loadEngine = () => import('./engine.js');

/** What `purge` answers with in `data.request.result` (README: the CLI contract). */
export interface PurgeResult {
  purged: number;
  archived: number;
  purgeId: string;
  archivePath: string;
  /**
   * Jobs of the purged states that arrived after the preview, beyond its count of each state
   * (the most a purge takes, oldest first), and were left where they are. Absent for a request
   * stored before the counts were kept.
   */
  newSincePreview?: number;
}

export interface UndoResult {
  restored: number;
  /**
   * Archived jobs left as they are because their id exists in Redis again (a Redis back from an
   * older snapshot, a failover, a producer): none is ever put back twice.
   */
  alreadyThere: number;
  purgeId: string;
  archivePath: string;
}

export interface Purges {
  /** The preview a purge request shows: exact counts, a sample, where it will be archived. */
  preview(
    system: string,
    queue: string,
    states: PurgeState[],
    purgeId: string,
    selection?: PurgeSelection,
  ): Promise<PurgePreview & { archivePath: string }>;
  /** The approved purge, run by the approvals service. */
  execute(request: ActionRequest, run: ExecutionContext): Promise<PurgeResult>;
  /** The purge an undo would restore, checked (state, archive kept, checksums). */
  undoable(purgeId: string): Promise<PurgeRecord>;
  undo(request: ActionRequest, run: ExecutionContext): Promise<UndoResult>;
  /**
   * Purges whose process died (SIGKILL, a crashed replica) are finished from their archive and
   * store cursor; the audit says so. Run at every start of the bot and of the command line.
   * `onClaimed` is told of each purge (or undo) this run takes over, before it finishes it.
   */
  recover(options?: {
    onClaimed?: (purge: PurgeRecord, kind: 'purge' | 'undo') => void;
  }): Promise<PurgeRecord[]>;
  /** At most once a day (whoever runs first): archives older than `archive.retentionDays` go. */
  sweepRetention(): Promise<string[] | undefined>;
}

export interface PurgesDeps {
  store: Store;
  audit: AuditRecorder;
  config: Pick<Config, 'archive'>;
  backends: () => BackendRegistry;
  logger?: Logger;
  now?: () => Date;
  /** `host:pid`; injectable for tests. */
  owner?: string;
  /** The config's `locale`: previews and outcomes stored with the request are written in it. */
  locale?: Locale;
  /** Engine sizes (tests use small ones to make many chunks). */
  chunkSize?: number;
  /** How long without a heartbeat a purge owned by another host is taken for dead. Default 60 s. */
  staleAfterMs?: number;
  /**
   * Told of a request recovery settled, as the approvals tell their listeners of every change
   * (its Slack message is redrawn, the App Home refreshed). Never throws.
   */
  requestChanged?: (request: ActionRequest) => Promise<void>;
}

const DAY_MS = 86_400_000;
/** How often a running undo tells the store it is alive. */
const BEAT_EVERY_MS = 5_000;
const SYSTEM_ACTOR = { actorId: 'queue-ops', actorName: 'queue-ops', via: 'cli' as const };

/** Is the process `host:pid` gone? Only answerable on this host; elsewhere, staleness decides. */
function ownerGone(owner: string | undefined): boolean | undefined {
  if (!owner) return true;
  const at = owner.lastIndexOf(':');
  const host = owner.slice(0, at);
  const pid = Number(owner.slice(at + 1));
  if (host !== hostname() || !Number.isInteger(pid)) return undefined;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export function createPurges(deps: PurgesDeps): Purges {
  const now = deps.now ?? (() => new Date());
  const owner = deps.owner ?? `${hostname()}:${process.pid}`;
  const t = messages(deps.locale ?? 'en').purge;
  /** Undos this process is running now: a row of its own not among them was left by a run that ended. */
  const runningUndos = new Set<string>();

  async function purgerFor(system: string, queue: string, selection?: PurgeSelection): Promise<QueuePurger> {
    const backend = deps.backends().get(system);
    if (!backend) throw new OpsError(ErrorCode.UnknownSystem, { system, valid: deps.backends().names() });
    if (!backend.purger)
      throw new OpsError(ErrorCode.NotSupported, { system, type: backend.type, what: 'purge' });
    return await backend.purger(queue, selection);
  }

  /**
   * The part of its states a purge takes, from its request (the purge's id is its request's): a
   * resumed purge selects as the approved one did, never more. Checked as data.
   */
  async function selectionOf(
    purgeId: string,
    params?: Record<string, unknown>,
  ): Promise<PurgeSelection | undefined> {
    const stored = params ?? (await deps.store.getRequest(purgeId))?.params ?? {};
    const filter = filterFromParams(stored.filter);
    const keep = stored.keep;
    if (keep !== undefined && !(Number.isInteger(keep) && (keep as number) >= 0))
      throw new Error(`purge ${purgeId}: bad keep ${String(keep)}`);
    if (!filter && keep === undefined) return undefined;
    return { ...(filter ? { filter } : {}), ...(keep !== undefined ? { keep: keep as number } : {}) };
  }

  /**
   * The most each state gives up (its preview's count, `params.caps`), from the purge's request,
   * checked as data; undefined for a request stored before the counts were kept.
   */
  async function capsOf(
    purgeId: string,
    params?: Record<string, unknown>,
  ): Promise<Partial<Record<PurgeState, number>> | undefined> {
    const stored = params ?? (await deps.store.getRequest(purgeId))?.params ?? {};
    const caps = stored.caps;
    if (caps === undefined) return undefined;
    if (typeof caps !== 'object' || caps === null) throw new Error(`purge ${purgeId}: bad caps`);
    const out: Partial<Record<PurgeState, number>> = {};
    for (const [state, count] of Object.entries(caps)) {
      if (
        !['waiting', 'failed', 'delayed'].includes(state) ||
        !Number.isInteger(count) ||
        (count as number) < 0
      )
        throw new Error(`purge ${purgeId}: bad cap ${state}`);
      out[state as PurgeState] = count as number;
    }
    return out;
  }

  const progressOf = (run: ExecutionContext) => (update: ActionProgress) => run.progress(update);

  async function resume(purge: PurgeRecord, run?: ExecutionContext, selection?: PurgeSelection) {
    const purger = await purgerFor(purge.system, purge.queue, selection ?? (await selectionOf(purge.id)));
    const caps = await capsOf(purge.id).catch(async (error: unknown) => {
      await purger.close();
      throw error;
    });
    // What the delete scripts reported removed, chunk by chunk, this run: a chunk's row says so
    // only once its last batch is deleted.
    const deleted = new Map<number, number>();
    const engine = {
      store: deps.store,
      purger,
      owner,
      now,
      chunkSize: deps.chunkSize,
      deleted: (seq: number, purged: number) => deleted.set(seq, purged),
      ...(caps ? { caps } : {}),
      ...(run ? { progress: progressOf(run), signal: run.signal } : {}),
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
        if (lost) throw await interrupted(purge, error as OpsError, deleted);
      } else {
        const current = await deps.store.getPurge(purge.id);
        if (current?.state === 'archiving' && current.owner === owner) {
          const reason = error instanceof OpsError ? error.code : String((error as Error)?.message ?? error);
          await (await loadEngine()).finishPurge(current, engine, 'failed', reason).catch(() => undefined);
        }
      }
      throw error;
    } finally {
      await purger.close();
    }
  }

  /** The purge an undo may start on, by its state alone (the archive is checked after). */
  async function undoableState(purgeId: string): Promise<PurgeRecord> {
    const purge = await deps.store.getPurge(purgeId);
    const refuse = (reason: string) => new OpsError(ErrorCode.NotUndoable, { id: purgeId, reason });
    if (!purge) throw refuse(t.undoUnknown);
    if (purge.state === 'undone' || purge.state === 'rolled-back')
      throw refuse(t.undoAlready(purge.undoneBy));
    if (purge.state === 'undoing' && !purge.owner) throw refuse(t.undoResuming);
    if (purge.state === 'archiving' || purge.state === 'undoing') throw refuse(t.undoRunning);
    if (purge.archiveRemovedAt) throw refuse(t.undoArchiveGone(purge.archiveRemovedAt));
    return purge;
  }

  /**
   * `PurgeInterrupted`: which Redis, why, and how far the purge got: what the delete scripts
   * reported removed, in chunks marked deleted and in those this run was still deleting.
   */
  async function interrupted(
    purge: PurgeRecord,
    cause: OpsError,
    deleted: ReadonlyMap<number, number>,
  ): Promise<OpsError> {
    const chunks = await deps.store.listPurgeChunks(purge.id).catch(() => []);
    return new OpsError(ErrorCode.PurgeInterrupted, {
      system: purge.system,
      target: `${purge.system}/${purge.queue}`,
      reason: cause.params.reason,
      done: chunks.reduce((n, c) => n + (c.deleted ? c.purged : (deleted.get(c.seq) ?? 0)), 0),
      total: purge.total,
    });
  }

  const resultOf = (record: PurgeRecord): PurgeResult => ({
    purged: record.purged,
    archived: record.archived,
    purgeId: record.id,
    archivePath: record.archivePath,
  });

  return {
    async preview(system, queue, states, purgeId, selection) {
      const purger = await purgerFor(system, queue, selection);
      try {
        const preview = await purger.preview(states);
        return {
          ...preview,
          archivePath: (await loadArchive()).archivePathFor(deps.config.archive.dir, purgeId),
        };
      } finally {
        await purger.close();
      }
    },

    async execute(request, run) {
      const system = String(request.params.system);
      const queue = String(request.params.queue);
      const states = (request.params.states as PurgeState[]) ?? ['waiting'];
      const selection = await selectionOf(request.id, request.params);
      const caps = await capsOf(request.id, request.params);
      const purger = await purgerFor(system, queue, selection);
      let total: number;
      let newSincePreview: number | undefined;
      let backend: string;
      try {
        // Each state gives up at most its preview's count: what arrived since stays, and is said.
        const byState = new Map<PurgeState, number>();
        for (const place of await purger.places(states))
          byState.set(place.state, (byState.get(place.state) ?? 0) + place.size);
        total = 0;
        if (caps) newSincePreview = 0;
        for (const [state, size] of byState) {
          const cap = caps?.[state];
          total += cap === undefined ? size : Math.min(size, cap);
          if (cap !== undefined) newSincePreview = (newSincePreview ?? 0) + Math.max(0, size - cap);
        }
        backend = deps.backends().get(system)!.type;
      } finally {
        await purger.close();
      }
      const { archivePathFor, createArchiveDir } = await loadArchive();
      const archivePath = archivePathFor(deps.config.archive.dir, request.id);
      await createArchiveDir(archivePath);
      const at = now().toISOString();
      const purge: PurgeRecord = {
        id: request.id,
        system,
        queue,
        backend,
        states,
        state: 'archiving',
        archivePath,
        total,
        chunks: 0,
        archived: 0,
        purged: 0,
        owner,
        heartbeatAt: at,
        createdAt: at,
        updatedAt: at,
      };
      await deps.store.createPurge(purge);
      const { record } = await resume(purge, run, selection);
      return { ...resultOf(record), ...(newSincePreview !== undefined ? { newSincePreview } : {}) };
    },

    async undoable(purgeId) {
      const purge = await undoableState(purgeId);
      const { readManifest, verifyArchive } = await loadArchive();
      const manifest = await readManifest(purge.archivePath);
      await verifyArchive(purge.archivePath, manifest);
      return purge;
    },

    async undo(request, run) {
      const purgeId = String(request.params.purgeId);
      // The archive's checksums are verified once, by the undo itself, right before it restores.
      await undoableState(purgeId);
      const claimed = await deps.store.updatePurge(purgeId, ['done', 'failed'], {
        state: 'undoing',
        owner,
        // Known from the start, so that whoever finishes an undo this run leaves can settle it.
        undoneBy: request.id,
        heartbeatAt: now().toISOString(),
        updatedAt: now().toISOString(),
      });
      if (!claimed) throw new OpsError(ErrorCode.NotUndoable, { id: purgeId, reason: t.undoRunning });
      return await resumeUndo(claimed, run);
    },

    async recover(options = {}) {
      const out: PurgeRecord[] = [];
      const staleBefore = now().getTime() - (deps.staleAfterMs ?? 60_000);
      for (const purge of await deps.store.listPurges({ states: ['archiving'] })) {
        const gone = ownerGone(purge.owner);
        const stale = Date.parse(purge.heartbeatAt ?? purge.updatedAt) < staleBefore;
        if (gone === false || (gone === undefined && !stale)) continue;
        const claimed = await deps.store.updatePurge(
          purge.id,
          ['archiving'],
          { owner, heartbeatAt: now().toISOString() },
          purge.owner ?? null,
        );
        if (!claimed) continue;
        deps.logger?.warn({ purgeId: purge.id, owner: purge.owner }, 'finishing a purge whose process died');
        options.onClaimed?.(claimed, 'purge');
        try {
          const { record, recovered } = await resume(claimed);
          await deps.audit.record({
            ...SYSTEM_ACTOR,
            action: 'purge.recovered',
            target: `${purge.system}/${purge.queue}`,
            params: {
              request: purge.id,
              diedOwner: purge.owner ?? null,
              ...resultOf(record),
              ...(recovered ? { recovered: { ...recovered } } : {}),
            },
            outcome: 'finished',
          });
          await settleRequest(purge.id, resultOf(record));
          out.push(record);
        } catch (error) {
          if (
            isOpsError(error) &&
            (error.code === ErrorCode.PurgeInterrupted || error.code === ErrorCode.RedisUnavailable)
          ) {
            // Its Redis is still away: the purge waits, released, for the next run to try again
            // (this process's sweep included: a purge it owns would never look dead to it).
            await deps.store
              .updatePurge(purge.id, ['archiving'], { owner: undefined }, owner)
              .catch(() => undefined);
            deps.logger?.warn(
              { purgeId: purge.id, system: purge.system, reason: error.params.reason },
              'a purge waits for its Redis to answer again',
            );
            continue;
          }
          const reason = error instanceof OpsError ? error.code : String((error as Error)?.message ?? error);
          await deps.audit.record({
            ...SYSTEM_ACTOR,
            action: 'purge.recovered',
            target: `${purge.system}/${purge.queue}`,
            params: { request: purge.id, diedOwner: purge.owner ?? null },
            outcome: 'failed',
            error: reason,
          });
          deps.logger?.error(
            { err: error, purgeId: purge.id },
            'could not finish a purge whose process died',
          );
        }
      }
      // An undo whose process died, or whose Redis went away, is finished from where the marker
      // in that Redis says it stopped: what is back is never put back twice.
      for (const purge of await deps.store.listPurges({ states: ['undoing'] })) {
        if (purge.undoneBy === undefined) {
          await releaseLegacyUndo(purge);
          continue;
        }
        // One of this process's own whose run ended without releasing it (the store blinked).
        const gone = purge.owner === owner ? !runningUndos.has(purge.id) : ownerGone(purge.owner);
        const stale = Date.parse(purge.heartbeatAt ?? purge.updatedAt) < staleBefore;
        if (gone === false || (gone === undefined && !stale)) continue;
        const claimed = await deps.store.updatePurge(
          purge.id,
          ['undoing'],
          { owner, heartbeatAt: now().toISOString() },
          purge.owner ?? null,
        );
        if (!claimed) continue;
        const audited = {
          ...SYSTEM_ACTOR,
          action: 'undo.recovered',
          target: `${purge.system}/${purge.queue}`,
        };
        const params = { purge: purge.id, request: purge.undoneBy, diedOwner: purge.owner ?? null };
        options.onClaimed?.(claimed, 'undo');
        if (purge.owner && purge.owner !== owner)
          deps.logger?.warn(
            { purgeId: purge.id, owner: purge.owner },
            'finishing an undo whose process died',
          );
        try {
          const result = await resumeUndo(claimed);
          await deps.audit.record({
            ...audited,
            params: { ...params, restored: result.restored, alreadyThere: result.alreadyThere },
            outcome: 'finished',
          });
          await settleRequest(purge.undoneBy, result);
        } catch (error) {
          if (isOpsError(error) && error.code === ErrorCode.UndoInterrupted) {
            deps.logger?.warn(
              { purgeId: purge.id, system: purge.system },
              'an undo waits for its Redis to answer again',
            );
            continue;
          }
          if (isOpsError(error) && error.code === ErrorCode.UndoTakenOver) {
            // A live run elsewhere (its heartbeat looked old) holds the marker: it is left to it.
            await deps.store
              .updatePurge(purge.id, ['undoing'], { owner: purge.owner }, owner)
              .catch(() => undefined);
            deps.logger?.info(
              { purgeId: purge.id, owner: purge.owner },
              'an undo is still running elsewhere',
            );
            continue;
          }
          const reason = isOpsError(error) ? error.code : String((error as Error)?.message ?? error);
          await deps.audit.record({ ...audited, params, outcome: 'failed', error: reason });
          await failRequest(purge.undoneBy, reason);
          deps.logger?.error(
            { err: error, purgeId: purge.id },
            'could not finish an undo whose process died',
          );
        }
      }
      return out;
    },

    async sweepRetention() {
      const at = now();
      const due = await deps.store.claimPeriodic(
        'archive-retention',
        at.toISOString(),
        new Date(at.getTime() - DAY_MS).toISOString(),
      );
      if (!due) return undefined;
      const cutoff = new Date(at.getTime() - deps.config.archive.retentionDays * DAY_MS);
      const { archivesOlderThan, removeArchive } = await loadArchive();
      const removed: string[] = [];
      for (const name of await archivesOlderThan(deps.config.archive.dir, cutoff)) {
        const purge = await deps.store.getPurge(name);
        if (purge && (purge.state === 'archiving' || purge.state === 'undoing')) continue;
        await removeArchive(deps.config.archive.dir, name);
        if (purge) await deps.store.updatePurge(name, [purge.state], { archiveRemovedAt: at.toISOString() });
        removed.push(name);
      }
      // Audited when it removed something; a daily run that found nothing to remove is only logged.
      if (removed.length === 0) {
        deps.logger?.debug({ cutoff: cutoff.toISOString() }, 'archive retention: nothing to remove');
        return removed;
      }
      await deps.audit.record({
        ...SYSTEM_ACTOR,
        action: 'archive.retention',
        target: deps.config.archive.dir,
        params: { retentionDays: deps.config.archive.retentionDays, removed },
        outcome: 'ok',
      });
      return removed;
    },
  };

  /**
   * Runs (or resumes, at the marker its Redis keeps) the undo of a purge this process has claimed.
   * Redis gone or a shutdown: the purge stays `undoing`, released, for the next sweep or command
   * line to finish. Refused (checksum, ids that exist again, any reply error): undoable again,
   * and a later undo starts where this one stopped.
   */
  async function resumeUndo(purge: PurgeRecord, run?: ExecutionContext): Promise<UndoResult> {
    let done = 0;
    let lastBeat = now().getTime();
    const progress = (update: ActionProgress) => {
      done = update.done;
      run?.progress(update);
    };
    let purger: QueuePurger | undefined;
    runningUndos.add(purge.id);
    try {
      purger = await purgerFor(purge.system, purge.queue);
      const { restored, alreadyThere } = await (await loadEngine()).runUndo(purge, {
        purger,
        progress,
        beat: async () => {
          // A write every few seconds, not every step: plenty against a 60 s staleness. A store
          // that blinks costs a beat, not the undo.
          if (now().getTime() - lastBeat < BEAT_EVERY_MS) return;
          lastBeat = now().getTime();
          await deps.store
            .updatePurge(purge.id, ['undoing'], { heartbeatAt: now().toISOString() }, owner)
            .catch((error: unknown) =>
              deps.logger?.warn({ err: error, purgeId: purge.id }, 'undo heartbeat not stored'),
            );
        },
        ...(run ? { signal: run.signal } : {}),
      });
      const at = now().toISOString();
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
      // Another run moved the marker: it holds the undo now, and its row too.
      if (isOpsError(error) && error.code === ErrorCode.UndoTakenOver) throw error;
      const lost = isOpsError(error) && error.code === ErrorCode.RedisUnavailable;
      const at = now().toISOString();
      if (lost || run?.signal.aborted) {
        await deps.store
          .updatePurge(purge.id, ['undoing'], { owner: undefined, updatedAt: at }, owner)
          .catch(() => undefined);
        if (!lost) throw error;
        throw new OpsError(ErrorCode.UndoInterrupted, {
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
      throw error;
    } finally {
      runningUndos.delete(purge.id);
      await purger?.close();
    }
  }

  /**
   * An undo left running by a version that kept no marker (no `undoneBy`): where it stopped is
   * not known, so it is not resumed (Celery's messages would go back twice). Released as before,
   * once its process is surely gone, and audited; the user checks the queue.
   */
  async function releaseLegacyUndo(purge: PurgeRecord) {
    if (ownerGone(purge.owner) !== true) return;
    const released = await deps.store.updatePurge(
      purge.id,
      ['undoing'],
      { state: purge.error ? 'failed' : 'done', owner: undefined, updatedAt: now().toISOString() },
      purge.owner ?? null,
    );
    if (!released) return;
    await deps.audit.record({
      ...SYSTEM_ACTOR,
      action: 'undo.recovered',
      target: `${purge.system}/${purge.queue}`,
      params: { purge: purge.id, diedOwner: purge.owner ?? null },
      outcome: 'interrupted',
      error: t.undoInterrupted,
    });
  }

  /** The request of an undo that recovery could not finish says why (it said "goes on by itself"). */
  async function failRequest(id: string, reason: string) {
    const at = now().toISOString();
    const failed = await deps.store
      .transitionRequest(id, ['executing', 'interrupted', 'failed'], {
        status: 'failed',
        error: reason,
        finishedAt: at,
        updatedAt: at,
      })
      .catch(() => undefined);
    if (failed) await deps.requestChanged?.(failed);
  }

  /**
   * The request of a purge or undo finished at recovery says so, whatever the dead process (or
   * one that lost its Redis: `PurgeInterrupted`) left it as: done, and no error beside it.
   */
  async function settleRequest(id: string, result: PurgeResult | UndoResult) {
    const at = now().toISOString();
    const settled = await deps.store.transitionRequest(id, ['executing', 'interrupted', 'failed'], {
      status: 'done',
      result: { ...result },
      error: null,
      finishedAt: at,
      updatedAt: at,
    });
    // Its message still says running, interrupted or failed until it is redrawn.
    if (settled) await deps.requestChanged?.(settled);
  }
}
