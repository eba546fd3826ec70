import { splitBlocks } from '../archive/archive.js';
import type { PurgeBatch, PurgeItem, PurgePlace } from '../backends/queue-backend.js';
import { flushChunk } from './chunk.js';
import { capLeft, countTaken, forgetSettled, type PurgeRun, settleAndThrow } from './run-state.js';

/** A read sent, numbered in the order sent (see `PurgeRun.readsSent`). */
interface SentRead {
  want: number;
  reply: Promise<PurgeBatch>;
  seq: number;
}

/** Where the walk of one place stands. */
interface PlaceCursor {
  readonly place: PurgePlace;
  /** Records taken from the place and not yet deleted: the offset of a read from the edge. */
  outstanding: number;
  /** Records taken from the place this run. */
  taken: number;
  /** Result keys are a list fixed at the start: walked by position, whatever each read finds. */
  keysCursor: number;
  /**
   * The read after the one awaited is already sent (so Redis is never idle waiting for the
   * client): its offset assumes the one before comes back whole, and it is dropped when not.
   */
  next: SentRead | undefined;
  /** The chunk being gathered: its records, and their archive lines. */
  buffer: PurgeItem[];
  blocks: Buffer[];
}

/**
 * The read phase of one place: batches read from where workers take next, one read always sent
 * ahead, the records not taken yet gathered into chunks, and each full chunk handed on to be
 * archived and deleted (chunk.ts) while the reads go on. It stops when the place is empty, when
 * the purge's `total` or the state's cap is reached, or on a shutdown; it returns once the place's
 * chunks are deleted, and throws the first failure once nothing is on its way any more.
 */
export async function walkPlace(run: PurgeRun, place: PurgePlace): Promise<void> {
  const cursor: PlaceCursor = {
    place,
    outstanding: 0,
    taken: 0,
    keysCursor: 0,
    next: undefined,
    buffer: [],
    blocks: [],
  };
  for (;;) {
    if (run.failure) {
      dropReadAhead(run, cursor);
      return await settleAndThrow(run, run.failure);
    }
    if (run.deps.signal?.aborted) break;
    const current = cursor.next ?? sendRead(run, cursor, 0);
    cursor.next = undefined;
    if (!current) break;
    cursor.next = sendRead(run, cursor, current.want);
    let batch: PurgeBatch;
    try {
      batch = await current.reply;
    } catch (error) {
      // The read sent after this one fails the same way: nobody may be left to await it alone.
      dropReadAhead(run, cursor);
      return await settleAndThrow(run, error);
    }
    const { fresh, again, cut } = takeRead(run, cursor, current, batch);
    if (cut || (fresh.length !== current.want && place.kind !== 'keys')) dropReadAhead(run, cursor);
    if (fresh.length === 0) {
      if (cut) break;
      if (place.kind === 'keys') continue;
      if (cursor.outstanding === 0) break;
      // Everything there is already on its way out: let the deletes catch up, read again.
      await drainPlace(run, cursor);
      continue;
    }
    cursor.buffer.push(...fresh);
    cursor.outstanding += fresh.length;
    cursor.taken += fresh.length;
    run.readTotal += fresh.length - again;
    if (cursor.buffer.length >= run.chunkSize) {
      flushBuffer(run, cursor);
      // At most two chunks on their way out: memory stays bounded whatever the queue's size.
      while (run.inFlight.length > 2) await run.inFlight.shift();
    }
    if (cut) break;
  }
  dropReadAhead(run, cursor);
  if (run.failure) return await settleAndThrow(run, run.failure);
  await drainPlace(run, cursor);
  run.inFlight.length = 0;
  if (run.failure) throw run.failure;
}

/**
 * Sends the next read of the place, or none when there is nothing left to take. `ahead`: records
 * of the read before, not counted yet (the key cursor moves at each send).
 */
function sendRead(run: PurgeRun, cursor: PlaceCursor, ahead: number): SentRead | undefined {
  const { place } = cursor;
  const consumed = place.kind === 'keys' ? cursor.keysCursor : cursor.taken + ahead;
  // A resumed purge reads on past what is left to archive while it meets jobs an earlier run
  // archived: a Redis back from an older snapshot holds them at the edge workers take from.
  const left =
    run.earlier.size > 0
      ? run.readBatch
      : Math.min(run.purge.total - run.readTotal, capLeft(run, place.state)) - ahead;
  const want = Math.min(run.readBatch, place.size - consumed, left);
  if (want <= 0) return undefined;
  const offset = place.kind === 'keys' ? cursor.keysCursor : cursor.outstanding + ahead;
  const reply = run.deps.purger.read(place, offset, want);
  // Awaited only once the read before it is handled (and the chunk flushed): if Redis goes
  // away meanwhile, its rejection must not count as unhandled, which ends a Node process.
  // Awaiting it later still throws.
  reply.catch(() => undefined);
  if (place.kind === 'keys') cursor.keysCursor += want;
  return { want, reply, seq: ++run.readsSent };
}

/** A read processed or dropped: the chunks deleted before it was sent may be forgotten now. */
function settleRead(run: PurgeRun, read: SentRead): void {
  run.readsSettled = read.seq;
  forgetSettled(run);
}

/** The read sent ahead is not taken (the one before came back short, or the walk stops). */
function dropReadAhead(run: PurgeRun, cursor: PlaceCursor): void {
  const { next } = cursor;
  if (!next) return;
  next.reply.catch(() => undefined);
  if (cursor.place.kind === 'keys') cursor.keysCursor -= next.want;
  settleRead(run, next);
  cursor.next = undefined;
}

/**
 * Takes what is new of a read's reply into the chunk being gathered: jobs counted when the purge
 * started are what it archives; past them, only jobs an earlier run archived are taken, and the
 * walk of this place stops at the first other one (`cut`).
 */
function takeRead(
  run: PurgeRun,
  cursor: PlaceCursor,
  read: SentRead,
  batch: PurgeBatch,
): { fresh: PurgeItem[]; again: number; cut: boolean } {
  const { state } = cursor.place;
  const budget = Math.min(run.purge.total - run.readTotal, capLeft(run, state));
  const taken = takeFresh(batch.items, run.seen, run.earlier, run.metAgain, budget);
  const { fresh, again } = taken;
  countTaken(run, state, fresh.length - again);
  settleRead(run, read);
  if (fresh.length === batch.items.length && again === 0) cursor.blocks.push(...batch.lines);
  else {
    // A read that overlapped one before it (a job pushed back at the tail meanwhile) brings
    // records already taken, and one on a Redis that came back older records an earlier run
    // archived: only the lines of the others go.
    const keep = new Set(fresh.filter((item) => !run.metAgain.has(item)));
    const lines = splitBlocks(batch.lines);
    batch.items.forEach((item, i) => {
      if (keep.has(item)) cursor.blocks.push(lines[i]!);
    });
  }
  return taken;
}

/** Hands the chunk gathered so far on to be archived and deleted, and starts the next one. */
function flushBuffer(run: PurgeRun, cursor: PlaceCursor): void {
  flushChunk(run, cursor.place, cursor, cursor.buffer, cursor.blocks);
  cursor.buffer = [];
  cursor.blocks = [];
}

/** The chunk gathered so far handed on, and every chunk of the walk deleted. */
async function drainPlace(run: PurgeRun, cursor: PlaceCursor): Promise<void> {
  if (cursor.buffer.length > 0) flushBuffer(run, cursor);
  await run.deleteChain;
}

/**
 * The records of a read the walk has not taken yet, now marked as taken (`seen`); those an earlier
 * run archived go to `metAgain` too (deleted, not archived again). Past `budget` other records the
 * walk stops (`cut`). A function of its own, small enough for V8 to optimize: this runs once a
 * record, a million times in a purge of a million.
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
