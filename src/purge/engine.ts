import {
  type ArchiveManifest,
  CHUNK_RECORDS,
  compressChunk,
  readChunk,
  readManifest,
  splitBlocks,
  verifyArchive,
  writeCompressedChunk,
  writeManifest,
} from '../archive/archive.js';
import type {
  PurgeState as BackendState,
  PurgeBatch,
  PurgeItem,
  PurgePlace,
  QueuePurger,
} from '../backends/queue-backend.js';
import { ErrorCode, isOpsError, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import type { PurgeRecord, PurgeStore } from '../store/store.js';
import { type PurgeRecovery, recoverEarlierRun } from './recovery.js';

export type { PurgeRecovery } from './recovery.js';

/** How far a purge or an undo has come (the approvals' `ActionProgress`). */
export interface Progress {
  done: number;
  total: number;
  phase?: string;
}

export interface EngineDeps {
  store: PurgeStore;
  purger: QueuePurger;
  /** `host:pid` of this process; every write of the purge's row is conditional on it. */
  owner: string;
  now?: () => Date;
  progress?: (update: Progress) => void;
  signal?: AbortSignal;
  /** Entries per read call (one short script). Default 500. */
  readBatch?: number;
  /** Entries per delete call (one short script). Default 1000. */
  deleteBatch?: number;
  /** Entries per archive file: each is fsynced and recorded once. Default 10,000. */
  chunkSize?: number;
  /**
   * Told after each delete call how many of chunk `seq`'s jobs the delete scripts have reported
   * removed so far: what is gone from Redis before the chunk's row says so.
   */
  deleted?: (seq: number, purged: number) => void;
  /**
   * The most each state gives up, over every run of the purge (its preview's count per state,
   * stored with the request): what the approver saw is the most that goes, oldest first. Jobs
   * that arrived since stay. A state without a cap is bounded by `total` alone.
   */
  caps?: Partial<Record<BackendState, number>>;
}

/**
 * Delete calls of a chunk on their way at once: while Redis runs one, the next is already there,
 * so a chunk's deletes no longer cost a round trip each (forty for a Celery chunk, one after the
 * other, each waiting behind the reads). Two at most: Redis takes a client's pipelined calls a
 * 16 KB read at a time, so another client's PING waits behind a couple of them, not a chunk's.
 */
const DELETES_IN_FLIGHT = 2;

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
 */
export async function runPurge(purge: PurgeRecord, deps: EngineDeps): Promise<PurgeOutcome> {
  const { store, purger, owner } = deps;
  const now = deps.now ?? (() => new Date());
  const readBatch = deps.readBatch ?? purger.batch?.read ?? 500;
  const deleteBatch = deps.deleteBatch ?? purger.batch?.delete ?? 1000;
  const chunkSize = deps.chunkSize ?? CHUNK_RECORDS;
  const path = purge.archivePath;

  let resolved = 0;
  const report = () =>
    deps.progress?.({ done: resolved, total: Math.max(purge.total, resolved), phase: 'purging' });

  // 1. What a killed run left behind (see recovery.ts).
  const { recorded, earlier, outcomes, recovered, archivedByPlace, ...resumed } = await recoverEarlierRun(
    purge,
    deps,
    deleteBatch,
  );
  let archived = resumed.archived;
  let seq = resumed.seq;
  resolved = resumed.resolved;
  report();

  // 2. The walk.
  const seen = new Set<string>();
  // Reads are numbered as sent and settled (processed or dropped) in that order. A chunk's
  // identities are forgotten only once every read sent before its delete has settled: such a read
  // may hold some of them (the tail moved between two reads), and if its reply were processed
  // after they were forgotten they would be archived a second time. A read sent after the delete
  // runs after it in Redis and cannot see them.
  let readsSent = 0;
  let readsSettled = 0;
  const forgetting: { identities: string[]; afterRead: number }[] = [];
  const forgetSettled = () => {
    while (forgetting.length > 0 && forgetting[0]!.afterRead <= readsSettled)
      for (const identity of forgetting.shift()!.identities) seen.delete(identity);
  };
  let failure: unknown;
  let recordChain: Promise<void> = Promise.resolve();
  let deleteChain: Promise<void> = Promise.resolve();
  let writeChain: Promise<void> = Promise.resolve();
  const inFlight: Promise<void>[] = [];
  /** Read records an earlier run already archived (see `earlier`): deleted, not archived again. */
  const metAgain = new Set<PurgeItem>();
  const places = await purger.places(purge.states as BackendState[]);
  // How many of each state the purge has taken, this run and the ones before: a cap is the most.
  const takenByState = new Map<BackendState, number>();
  for (const place of places)
    takenByState.set(
      place.state,
      (takenByState.get(place.state) ?? 0) + (archivedByPlace.get(place.name) ?? 0),
    );
  const capLeft = (state: BackendState): number => {
    const cap = deps.caps?.[state];
    return cap === undefined ? Number.POSITIVE_INFINITY : cap - (takenByState.get(state) ?? 0);
  };

  // A failure (Redis gone, the store refusing) ends the walk only once the chunks already on their
  // way have settled: none is still being written, recorded or deleted when the caller decides
  // what the purge becomes (released for a later run, or finished as failed).
  const settleAndThrow = async (error: unknown): Promise<never> => {
    await Promise.allSettled([writeChain, recordChain, deleteChain, ...inFlight]);
    throw error;
  };

  const touch = async (patch: Partial<PurgeRecord>) => {
    const at = now().toISOString();
    const updated = await store.updatePurge(
      purge.id,
      ['archiving'],
      { ...patch, heartbeatAt: at, updatedAt: at },
      owner,
    );
    // Another process took the purge over (it took this one for dead): stop at once.
    if (!updated) throw new Error(`purge ${purge.id} is no longer owned by ${owner}`);
  };

  /** An earlier chunk's outcome, as Redis answered a delete of one of its jobs met again. */
  const amend = (identity: string, removed: boolean, changed: Set<number>) => {
    const at = earlier.get(identity)!;
    const outcome = outcomes.get(at);
    if (!outcome) return;
    if (removed) recovered.deletedAgain++;
    if (removed && outcome.skipped.delete(identity)) outcome.purged++;
    else if (!removed && !outcome.skipped.has(identity)) {
      // Gone from where it was read before the delete reached it: a worker took it. It is no
      // longer in the queue, and undo must not put it back.
      outcome.skipped.add(identity);
      outcome.purged--;
    } else return;
    changed.add(at);
  };

  const flush = (
    place: PurgePlace,
    counter: { outstanding: number },
    items: PurgeItem[],
    blocks: Buffer[],
  ) => {
    const records = metAgain.size === 0 ? items.length : items.filter((i) => !metAgain.has(i)).length;
    // A chunk of jobs met again only (all archived already) is deleted, and has no file of its own.
    const mySeq = records > 0 ? ++seq : 0;
    let recordedNow = recordChain;
    if (records > 0) {
      // Compressed from now on (on the compressor thread, chunks in order), while the chunk before
      // is still being written and fsynced: a chunk's gzip and the fsyncs before it no longer add
      // up. Written one at a time, in order; memory stays bounded by the chunks on their way (below).
      const compressed = compressChunk(blocks);
      const written = writeChain.then(() => writeCompressedChunk(path, mySeq, compressed, records));
      writeChain = written.then(
        () => undefined,
        () => undefined,
      );
      recordedNow = recordChain.then(async () => {
        const file = await written;
        archived += records;
        // The chunk's row and the purge's heartbeat go together: the SQLite store commits them in
        // one transaction and one fsync, and the chunk's deletes wait for both. Should one fail
        // and not the other, the purge's row is ahead of its chunk rows, which recovery takes as
        // it comes (the chunk rows are the truth; a file without a row is removed, and its jobs,
        // never deleted, are read again).
        const writes = await Promise.allSettled([
          store.addPurgeChunk({
            purgeId: purge.id,
            seq: mySeq,
            file: file.name,
            sha256: file.sha256,
            bytes: file.bytes,
            records: file.records,
            deleted: false,
            purged: 0,
            skipped: [],
          }),
          touch({ chunks: mySeq, archived }),
        ]);
        for (const write of writes) if (write.status === 'rejected') throw write.reason;
      });
      recordChain = recordedNow;
    }
    const done = Promise.all([deleteChain, recordedNow]).then(async () => {
      let chunkPurged = 0;
      const skipped: string[] = [];
      const amended = new Set<number>();
      const sent: { batch: PurgeItem[]; reply: Promise<boolean[]> }[] = [];
      const settleOldest = async () => {
        const { batch, reply } = sent.shift()!;
        const flags = await reply;
        // Counted as Redis answered: removed now, or no longer where it was read.
        flags.forEach((ok, j) => {
          const item = batch[j]!;
          if (metAgain.has(item)) amend(item.identity, ok, amended);
          else if (ok) chunkPurged++;
          else skipped.push(item.identity);
        });
        deps.deleted?.(mySeq, chunkPurged);
        resolved += batch.length;
        report();
      };
      try {
        for (let i = 0; i < items.length; i += deleteBatch) {
          const batch = items.slice(i, i + deleteBatch);
          // The delete is sent now, on the connection the reads use: a read sent after it runs after
          // it, so its offset must already leave this batch out. Counted when the reply came back,
          // a read in between skipped a batch past the edge, and every later delete missed the
          // one-step tail check and fell back to LREM id by id.
          const reply = purger.remove(place, batch);
          // Awaited in order below; one failing must not count as unhandled meanwhile.
          reply.catch(() => undefined);
          counter.outstanding -= batch.length;
          sent.push({ batch, reply });
          // Redis runs them in the order sent, so each batch is at the tail when its turn comes.
          if (sent.length >= DELETES_IN_FLIGHT) await settleOldest();
        }
        while (sent.length > 0) await settleOldest();
      } catch (error) {
        // Nothing of this chunk is still on its way when the failure is handed on.
        await Promise.allSettled(sent.map((call) => call.reply));
        throw error;
      }
      // Out of Redis now, or taken by a worker: met again, a record is a new one (a job retried
      // back to waiting), archived in a later chunk, and undo skips it only in this one. So `seen`
      // holds the few chunks on their way, not the whole purge.
      forgetting.push({ identities: items.map((item) => item.identity), afterRead: readsSent });
      forgetSettled();
      if (metAgain.size > 0) for (const item of items) metAgain.delete(item);
      for (const at of amended) {
        const outcome = outcomes.get(at)!;
        await store.markPurgeChunk(purge.id, at, { purged: outcome.purged, skipped: [...outcome.skipped] });
      }
      if (records > 0) await store.markPurgeChunk(purge.id, mySeq, { purged: chunkPurged, skipped });
    });
    deleteChain = done.catch((error: unknown) => {
      failure ??= error;
    });
    inFlight.push(deleteChain);
  };

  // Jobs counted when the purge started are what it takes: producers adding more meanwhile do not
  // keep it running forever.
  let readTotal = archived;

  for (const place of places) {
    const counter = { outstanding: 0 };
    let buffer: PurgeItem[] = [];
    let blocks: Buffer[] = [];
    let taken = 0;
    // Result keys are a list fixed at the start: walked by position, whatever each read finds.
    let keysCursor = 0;
    const drain = async () => {
      if (buffer.length > 0) {
        flush(place, counter, buffer, blocks);
        buffer = [];
        blocks = [];
      }
      await deleteChain;
    };
    // The read after the one awaited is already sent (so Redis is never idle waiting for the
    // client): its offset assumes the one before comes back whole, and it is dropped when not.
    let next: { want: number; reply: Promise<PurgeBatch>; seq: number } | undefined;
    const send = (ahead: number) => {
      // `ahead`: records of the read before, not counted yet (the key cursor moves at each send).
      const consumed = place.kind === 'keys' ? keysCursor : taken + ahead;
      // A resumed purge reads on past what is left to archive while it meets jobs an earlier run
      // archived: a Redis back from an older snapshot holds them at the edge workers take from.
      const left =
        earlier.size > 0 ? readBatch : Math.min(purge.total - readTotal, capLeft(place.state)) - ahead;
      const want = Math.min(readBatch, place.size - consumed, left);
      if (want <= 0) return undefined;
      const offset = place.kind === 'keys' ? keysCursor : counter.outstanding + ahead;
      const reply = purger.read(place, offset, want);
      // Awaited only once the read before it is handled (and the chunk flushed): if Redis goes
      // away meanwhile, its rejection must not count as unhandled, which ends a Node process.
      // Awaiting it later still throws.
      reply.catch(() => undefined);
      if (place.kind === 'keys') keysCursor += want;
      return { want, reply, seq: ++readsSent };
    };
    const settle = (read: { seq: number }) => {
      readsSettled = read.seq;
      forgetSettled();
    };
    const drop = () => {
      next?.reply.catch(() => undefined);
      if (next && place.kind === 'keys') keysCursor -= next.want;
      if (next) settle(next);
      next = undefined;
    };
    for (;;) {
      if (failure) {
        drop();
        return await settleAndThrow(failure);
      }
      if (deps.signal?.aborted) break;
      const current = next ?? send(0);
      next = undefined;
      if (!current) break;
      next = send(current.want);
      let batch: PurgeBatch;
      try {
        batch = await current.reply;
      } catch (error) {
        // The read sent after this one fails the same way: nobody may be left to await it alone.
        drop();
        return await settleAndThrow(error);
      }
      // Jobs counted when the purge started are what it archives; past them, only jobs an earlier
      // run archived are taken, and the walk of this place stops at the first other one.
      const budget = Math.min(purge.total - readTotal, capLeft(place.state));
      const { fresh, again, cut } = takeFresh(batch.items, seen, earlier, metAgain, budget);
      takenByState.set(place.state, (takenByState.get(place.state) ?? 0) + fresh.length - again);
      settle(current);
      if (fresh.length === batch.items.length && again === 0) blocks.push(...batch.lines);
      else {
        // A read that overlapped one before it (a job pushed back at the tail meanwhile) brings
        // records already taken, and one on a Redis that came back older records an earlier run
        // archived: only the lines of the others go.
        const keep = new Set(fresh.filter((item) => !metAgain.has(item)));
        const lines = splitBlocks(batch.lines);
        batch.items.forEach((item, i) => {
          if (keep.has(item)) blocks.push(lines[i]!);
        });
      }
      if (cut || (fresh.length !== current.want && place.kind !== 'keys')) drop();
      if (fresh.length === 0) {
        if (cut) break;
        if (place.kind === 'keys') continue;
        if (counter.outstanding === 0) break;
        // Everything there is already on its way out: let the deletes catch up, read again.
        await drain();
        continue;
      }
      buffer.push(...fresh);
      counter.outstanding += fresh.length;
      taken += fresh.length;
      readTotal += fresh.length - again;
      if (buffer.length >= chunkSize) {
        flush(place, counter, buffer, blocks);
        buffer = [];
        blocks = [];
        // At most two chunks on their way out: memory stays bounded whatever the queue's size.
        while (inFlight.length > 2) await inFlight.shift();
      }
      if (cut) break;
    }
    drop();
    if (failure) return await settleAndThrow(failure);
    await drain();
    inFlight.length = 0;
    if (failure) throw failure;
    if (deps.signal?.aborted) break;
  }
  try {
    await recordChain;
  } catch (error) {
    return await settleAndThrow(error);
  }
  await deleteChain;
  if (failure) throw failure;
  if (deps.signal?.aborted) throw stoppedForShutdown(purge);
  report();
  const outcome = await finishPurge(purge, deps, 'done');
  return recorded.length > 0 ? { ...outcome, recovered } : outcome;
}

/**
 * The records of a read the walk has not taken yet, now marked as taken (`seen`); those an earlier
 * run archived go to `metAgain` too (deleted, not archived again). Past `budget` other records the
 * walk stops (`cut`). A function of its own rather than a loop in runPurge, which is too large for
 * V8 to optimize: this runs once a record, a million times in a purge of a million.
 */
function takeFresh(
  items: readonly PurgeItem[],
  seen: Set<string>,
  earlier: ReadonlyMap<string, number>,
  metAgain: Set<PurgeItem>,
  budget: number,
): { fresh: PurgeItem[]; again: number; cut: boolean } {
  const fresh: PurgeItem[] = [];
  const resumed = earlier.size > 0;
  let again = 0;
  for (const item of items) {
    // One lookup for "taken before?" and "taken now".
    const before = seen.size;
    seen.add(item.identity);
    if (seen.size === before) continue;
    const archivedBefore = resumed && earlier.has(item.identity);
    if (!archivedBefore && budget <= 0) {
      seen.delete(item.identity);
      return { fresh, again, cut: true };
    }
    fresh.push(item);
    if (archivedBefore) {
      metAgain.add(item);
      again++;
    } else budget--;
  }
  return { fresh, again, cut: false };
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
