import { listChunkFiles, readChunk, removeFile } from '../archive/archive.js';
import type { PurgeItem, PurgePlace, QueuePurger } from '../backends/queue-backend.js';
import type { PurgeChunk, PurgeRecord, PurgeStore } from '../store/store.js';

/**
 * What a resumed purge found of the jobs an earlier run archived, as Redis answered. Of the
 * chunks recorded but not marked deleted: `deletedNow` the delete removed now (never deleted
 * before), `alreadyGone` were no longer in Redis (the killed run's delete took them),
 * `stillThere` were in Redis where the delete did not find them (a worker's, or further down a
 * list). `deletedAgain`: jobs of any earlier chunk the walk met again in the queue (a Redis back
 * from an older snapshot, a failover to a replica that lagged) and deleted, without archiving them
 * a second time.
 */
export interface PurgeRecovery {
  deletedNow: number;
  alreadyGone: number;
  stillThere: number;
  deletedAgain: number;
}

/** What a resumed purge starts from, once the chunks a killed run left are settled. */
export interface RecoveredRun {
  /** Every chunk row of the purge, as the store had them before this run. */
  recorded: PurgeChunk[];
  /** Records archived by earlier runs. */
  archived: number;
  /** The last chunk number used. */
  seq: number;
  /** Records already resolved (deleted, gone or left), for progress. */
  resolved: number;
  /** Every identity an earlier run archived, and the chunk it is in. */
  earlier: Map<string, number>;
  /** Each earlier chunk's outcome, as Redis answered (amended when the walk meets its jobs again). */
  outcomes: Map<number, { purged: number; skipped: Set<string> }>;
  recovered: PurgeRecovery;
  /** Records an earlier run archived, by place: they count against their state's cap. */
  archivedByPlace: Map<string, number>;
}

/**
 * Purge recovery, the first phase of `runPurge`: what a killed run left behind. Chunk files the
 * store never recorded are removed (their jobs never left Redis); chunks recorded but not marked
 * deleted are deleted again (the delete is conditional, so this is idempotent) and marked with
 * what Redis answered.
 */
export async function recoverEarlierRun(
  purge: PurgeRecord,
  deps: { store: PurgeStore; purger: QueuePurger },
  deleteBatch: number,
): Promise<RecoveredRun> {
  const { store, purger } = deps;
  const path = purge.archivePath;
  let resolved = 0;
  // 1. What a killed run left behind. The chunk rows are the truth: the purge's own row is
  // written with the last of them and may lag, or lead, by a chunk when one of the two writes
  // did not make it.
  const recorded = await store.listPurgeChunks(purge.id);
  const archived = recorded.reduce((n, c) => n + c.records, 0);
  const seq = recorded.reduce((max, c) => Math.max(max, c.seq), purge.chunks);
  const known = new Set(recorded.map((c) => c.file));
  for (const file of await listChunkFiles(path)) if (!known.has(file)) await removeFile(path, file);
  // Every identity an earlier run archived, and the chunk it is in: a Redis that came back from an
  // older snapshot (or a failover to a replica that lagged) holds again jobs that chunk says are
  // deleted. The walk deletes such a job again and amends its chunk, but never archives it twice.
  const earlier = new Map<string, number>();
  const outcomes = new Map<number, { purged: number; skipped: Set<string> }>();
  const recovered: PurgeRecovery = { deletedNow: 0, alreadyGone: 0, stillThere: 0, deletedAgain: 0 };
  // Records an earlier run archived, by place: they count against their state's cap.
  const archivedByPlace = new Map<string, number>();
  for (const chunk of recorded) {
    const lines = await readChunk(path, chunk.file);
    const parsed = lines.map((line) => purger.parse(line));
    for (const item of parsed) {
      earlier.set(item.identity, chunk.seq);
      archivedByPlace.set(item.place, (archivedByPlace.get(item.place) ?? 0) + 1);
    }
    if (chunk.deleted) {
      outcomes.set(chunk.seq, { purged: chunk.purged, skipped: new Set(chunk.skipped) });
      resolved += chunk.records;
      continue;
    }
    const byPlace = new Map<string, PurgeItem[]>();
    for (const { place, ...item } of parsed) {
      const items = byPlace.get(place) ?? [];
      items.push(item);
      byPlace.set(place, items);
    }
    let deletedNow = 0;
    const notRemoved = new Set<string>();
    const places = await purger.places(['waiting', 'failed', 'delayed']);
    for (const [name, items] of byPlace) {
      const place = places.find((p) => p.name === name) ?? { state: 'waiting', name, kind: 'list', size: 0 };
      for (let i = 0; i < items.length; i += deleteBatch) {
        const batch = items.slice(i, i + deleteBatch);
        const flags = await purger.remove(place as PurgePlace, batch);
        flags.forEach((ok, j) => {
          if (ok) deletedNow++;
          else notRemoved.add(batch[j]!.identity);
        });
      }
    }
    // Not removed now: either the killed run's delete took it (already gone), or it is still in
    // Redis, where this delete did not find it (never deleted, further down a list that came back
    // older, or taken by a worker). Redis tells the two apart; the walk below deletes what is
    // still queued and moves it from skipped to purged.
    const stillThere = new Set(
      notRemoved.size === 0
        ? []
        : await purger.conflicts(lines.filter((_, i) => notRemoved.has(parsed[i]!.identity))),
    );
    const reallySkipped = [...notRemoved].filter((id) => stillThere.has(id));
    recovered.deletedNow += deletedNow;
    recovered.stillThere += reallySkipped.length;
    recovered.alreadyGone += notRemoved.size - reallySkipped.length;
    const chunkPurged = chunk.records - reallySkipped.length;
    outcomes.set(chunk.seq, { purged: chunkPurged, skipped: new Set(reallySkipped) });
    await store.markPurgeChunk(purge.id, chunk.seq, { purged: chunkPurged, skipped: reallySkipped });
    resolved += chunk.records;
  }
  return { recorded, archived, seq, resolved, earlier, outcomes, recovered, archivedByPlace };
}
