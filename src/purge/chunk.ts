import { compressChunk, writeCompressedChunk } from '../archive/archive.js';
import type { PurgeItem, PurgePlace } from '../backends/queue-backend.js';
import { forgetSettled, heartbeat, type PurgeRun, reportProgress } from './run-state.js';

/**
 * Delete calls of a chunk on their way at once: while Redis runs one, the next is already there,
 * so a chunk's deletes no longer cost a round trip each (forty for a Celery chunk, one after the
 * other, each waiting behind the reads). Two at most: Redis takes a client's pipelined calls a
 * 16 KB read at a time, so another client's PING waits behind a couple of them, not a chunk's.
 */
const DELETES_IN_FLIGHT = 2;

/** What the delete scripts answered of one chunk's jobs. */
interface ChunkTally {
  /** Removed now. */
  purged: number;
  /** No longer where they were read (a worker took them): undo must not put them back. */
  skipped: string[];
  /** Earlier chunks whose outcome changed: jobs of theirs met again (see `amendEarlierChunk`). */
  amended: Set<number>;
}

/** A delete call sent, and its reply, counted in the order sent. */
interface SentDelete {
  batch: PurgeItem[];
  reply: Promise<boolean[]>;
}

/**
 * Hands one chunk of read records on to the archive phase and then the delete phase, both on
 * chains that keep chunks in order and let the walk read on meanwhile: the chunk is written to the
 * archive and fsynced, recorded in the store, and only then deleted from Redis. `counter` is the
 * walk's count of records read from `place` and not yet deleted (a read's offset from the edge).
 * A chunk of jobs met again only (all archived already) is deleted, and has no file of its own.
 */
export function flushChunk(
  run: PurgeRun,
  place: PurgePlace,
  counter: { outstanding: number },
  items: PurgeItem[],
  blocks: Buffer[],
): void {
  const { metAgain } = run;
  const records = metAgain.size === 0 ? items.length : items.filter((i) => !metAgain.has(i)).length;
  const seq = records > 0 ? ++run.seq : 0;
  const recorded = records > 0 ? archiveChunk(run, seq, records, blocks) : run.recordChain;
  const done = Promise.all([run.deleteChain, recorded]).then(() =>
    deleteChunk(run, place, counter, items, seq, records),
  );
  run.deleteChain = done.catch((error: unknown) => {
    run.failure ??= error;
  });
  run.inFlight.push(run.deleteChain);
}

/**
 * The archive phase of chunk `seq`: its file compressed from now on (on the compressor thread,
 * chunks in order), while the chunk before is still being written and fsynced, so a chunk's gzip
 * and the fsyncs before it no longer add up. Written one at a time, in order, then recorded with
 * the purge's heartbeat. Resolves once the chunk's row is stored.
 */
function archiveChunk(run: PurgeRun, seq: number, records: number, blocks: Buffer[]): Promise<void> {
  const { purge, deps } = run;
  const compressed = compressChunk(blocks);
  const written = run.writeChain.then(() =>
    writeCompressedChunk(purge.archivePath, seq, compressed, records),
  );
  run.writeChain = written.then(
    () => undefined,
    () => undefined,
  );
  const recorded = run.recordChain.then(async () => {
    const file = await written;
    run.archived += records;
    // The chunk's row and the purge's heartbeat go together: the SQLite store commits them in
    // one transaction and one fsync, and the chunk's deletes wait for both. Should one fail
    // and not the other, the purge's row is ahead of its chunk rows, which recovery takes as
    // it comes (the chunk rows are the truth; a file without a row is removed, and its jobs,
    // never deleted, are read again).
    const writes = await Promise.allSettled([
      deps.store.addPurgeChunk({
        purgeId: purge.id,
        seq,
        file: file.name,
        sha256: file.sha256,
        bytes: file.bytes,
        records: file.records,
        deleted: false,
        purged: 0,
        skipped: [],
      }),
      heartbeat(run, { chunks: seq, archived: run.archived }),
    ]);
    for (const write of writes) if (write.status === 'rejected') throw write.reason;
  });
  run.recordChain = recorded;
  return recorded;
}

/**
 * The delete phase of one chunk, once it is recorded and the chunk before it deleted: its jobs
 * removed from Redis by the backend's conditional delete, a couple of calls on their way at once
 * and each reply counted in order, then the chunk's row (and the rows of earlier chunks whose
 * jobs it met again) marked with what Redis answered.
 */
async function deleteChunk(
  run: PurgeRun,
  place: PurgePlace,
  counter: { outstanding: number },
  items: PurgeItem[],
  seq: number,
  records: number,
): Promise<void> {
  const tally: ChunkTally = { purged: 0, skipped: [], amended: new Set() };
  const sent: SentDelete[] = [];
  try {
    for (let i = 0; i < items.length; i += run.deleteBatch) {
      const batch = items.slice(i, i + run.deleteBatch);
      // The delete is sent now, on the connection the reads use: a read sent after it runs after
      // it, so its offset must already leave this batch out. Counted when the reply came back,
      // a read in between skipped a batch past the edge, and every later delete missed the
      // one-step tail check and fell back to LREM id by id.
      const reply = run.deps.purger.remove(place, batch);
      // Awaited in order below; one failing must not count as unhandled meanwhile.
      reply.catch(() => undefined);
      counter.outstanding -= batch.length;
      sent.push({ batch, reply });
      // Redis runs them in the order sent, so each batch is at the tail when its turn comes.
      if (sent.length >= DELETES_IN_FLIGHT) await countDeleted(run, sent.shift()!, seq, tally);
    }
    while (sent.length > 0) await countDeleted(run, sent.shift()!, seq, tally);
  } catch (error) {
    // Nothing of this chunk is still on its way when the failure is handed on.
    await Promise.allSettled(sent.map((call) => call.reply));
    throw error;
  }
  forgetChunk(run, items);
  await markDeleted(run, seq, records, tally);
}

/**
 * A deleted chunk's records are out of Redis now, or taken by a worker: met again, a record is a
 * new one (a job retried back to waiting), archived in a later chunk, and undo skips it only in
 * this one. So `seen` holds the few chunks on their way, not the whole purge.
 */
function forgetChunk(run: PurgeRun, items: PurgeItem[]): void {
  run.forgetting.push({ identities: items.map((item) => item.identity), afterRead: run.readsSent });
  forgetSettled(run);
  if (run.metAgain.size > 0) for (const item of items) run.metAgain.delete(item);
}

/** The rows of chunk `seq` and of the earlier chunks it amended, marked with what Redis answered. */
async function markDeleted(run: PurgeRun, seq: number, records: number, tally: ChunkTally): Promise<void> {
  const { purge, deps } = run;
  for (const at of tally.amended) {
    const outcome = run.outcomes.get(at)!;
    await deps.store.markPurgeChunk(purge.id, at, { purged: outcome.purged, skipped: [...outcome.skipped] });
  }
  if (records > 0)
    await deps.store.markPurgeChunk(purge.id, seq, { purged: tally.purged, skipped: tally.skipped });
}

/** One delete call's reply, counted as Redis answered: removed now, or no longer where it was read. */
async function countDeleted(run: PurgeRun, call: SentDelete, seq: number, tally: ChunkTally): Promise<void> {
  const { batch } = call;
  const flags = await call.reply;
  flags.forEach((ok, j) => {
    const item = batch[j]!;
    if (run.metAgain.has(item)) amendEarlierChunk(run, item.identity, ok, tally.amended);
    else if (ok) tally.purged++;
    else tally.skipped.push(item.identity);
  });
  run.deps.deleted?.(seq, tally.purged);
  run.resolved += batch.length;
  reportProgress(run);
}

/**
 * An earlier chunk's outcome, as Redis answered a delete of one of its jobs met again (a Redis
 * back from an older snapshot holds it again); `changed` collects the chunks to mark again.
 */
function amendEarlierChunk(run: PurgeRun, identity: string, removed: boolean, changed: Set<number>): void {
  const at = run.earlier.get(identity)!;
  const outcome = run.outcomes.get(at);
  if (!outcome) return;
  if (removed) run.recovered.deletedAgain++;
  if (removed && outcome.skipped.delete(identity)) outcome.purged++;
  else if (!removed && !outcome.skipped.has(identity)) {
    // Gone from where it was read before the delete reached it: a worker took it. It is no
    // longer in the queue, and undo must not put it back.
    outcome.skipped.add(identity);
    outcome.purged--;
  } else return;
  changed.add(at);
}
