import type { Redis } from 'ioredis';
import { hasFilter, type PurgeSelection } from '../job-filter.js';
import { runScriptBuffer } from '../lua.js';
import { previewOf } from '../purge-preview.js';
import type { PurgePlace, PurgePreview, PurgeState, QueuePurger } from '../queue-backend.js';
import { filterArgs, READ_SELECTED, walkMatching } from './filter-script.js';
import { batchOfReply, LAYOUT, sampleOfLine } from './purge.js';

/**
 * Deletes per call for selected jobs of a list: one may sit anywhere in it, where the delete's
 * LREM looks for it from the tail (a scan up to it), so a call takes a few dozen of them, not the
 * hundreds a sorted set's ZMSCORE + ZREM takes at once.
 */
const LIST_DELETE_CALL = 25;

/** Selected jobs per read: one READ_SELECTED call, a few milliseconds of Redis. */
const SELECTED_READ = 250;

/**
 * A purger that takes part of the states it is asked for: the jobs a filter matches and/or all but
 * the newest `keep` failures. Only the choice of jobs differs from a whole-state purge; archiving,
 * deleting (conditional, where each job still is), undo and recovery are the purger it wraps.
 *
 * With a filter, each place is walked once in Redis, window by window (SELECT_MATCHING: only the
 * ids that match come back), in the order a purge takes it (oldest first), and becomes a place of
 * kind `keys`: the selected ids, walked by position. Its archive lines name the real list or zset,
 * so undo puts each job back where it was. `--keep n` alone needs no walk: the failed set is read
 * from its oldest, as a whole-state purge reads it, and stops `n` short of its size.
 */
export function withSelection(
  purger: QueuePurger,
  options: { client: Redis; prefix: string; queue: string; selection: PurgeSelection; now?: () => number },
): QueuePurger {
  const { client, selection } = options;
  const now = options.now ?? Date.now;
  const base = `${options.prefix}:${options.queue}:`;
  const filter = hasFilter(selection.filter) ? selection.filter : undefined;
  const keep = selection.keep;
  /** The ids each place's selection took, oldest first, by place name. */
  const selected = new Map<string, string[]>();
  const realKind = new Map<string, 'list' | 'zset'>(LAYOUT.map((p) => [p.name, p.kind]));
  const real = (place: PurgePlace): PurgePlace => ({
    ...place,
    kind: realKind.get(place.name) ?? place.kind,
  });

  /** The places as the selection takes them; `outOf` is what they hold in all. */
  async function choose(states: PurgeState[]): Promise<{ places: PurgePlace[]; outOf: number }> {
    const whole = await purger.places(states);
    const outOf = whole.reduce((n, p) => n + p.size, 0);
    const places: PurgePlace[] = [];
    for (const place of whole) {
      const keepHere = place.state === 'failed' ? (keep ?? 0) : 0;
      if (!filter) {
        places.push({ ...place, size: Math.max(0, place.size - keepHere) });
        continue;
      }
      if (place.size === 0) {
        selected.set(place.name, []);
        places.push({ ...place, kind: 'keys', size: 0 });
        continue;
      }
      const timeField = place.state === 'failed' ? 'finishedOn' : 'timestamp';
      const { ids } = await walkMatching(
        client,
        base + place.name,
        place.kind === 'list' ? 'list' : 'zset',
        base,
        filterArgs(filter, now(), timeField),
        Number.MAX_SAFE_INTEGER,
      );
      // Oldest first: the newest `keep` matches are the last ones.
      const taken = keepHere > 0 ? ids.slice(0, Math.max(0, ids.length - keepHere)) : ids;
      selected.set(place.name, taken);
      places.push({ ...place, kind: 'keys', size: taken.length });
    }
    return { places, outOf };
  }

  async function read(place: PurgePlace, offset: number, limit: number) {
    const ids = selected.get(place.name);
    if (place.kind !== 'keys' || !ids) return await purger.read(place, offset, limit);
    const batch = ids.slice(offset, offset + limit);
    if (batch.length === 0) return { items: [], lines: [] };
    const reply = (await runScriptBuffer(
      client,
      READ_SELECTED,
      [base + place.name],
      [realKind.get(place.name) ?? 'zset', base, ...batch],
    )) as Buffer[];
    return batchOfReply(place.name, reply);
  }

  return {
    ...purger,
    async preview(states): Promise<PurgePreview> {
      const { places, outOf } = await choose(states);
      const preview = await previewOf(places, read, (line) => sampleOfLine(line, now()));
      return { ...preview, outOf };
    },
    places: async (states) => (await choose(states)).places,
    read,
    async remove(place, items) {
      const where = real(place);
      if (!filter || where.kind !== 'list') return await purger.remove(where, items);
      // Sent back to back: a selection is walked by position, so no read waits on these.
      const calls: Promise<boolean[]>[] = [];
      for (let i = 0; i < items.length; i += LIST_DELETE_CALL)
        calls.push(purger.remove(where, items.slice(i, i + LIST_DELETE_CALL)));
      return (await Promise.all(calls)).flat();
    },
    meta: () => ({ ...purger.meta(), selection: { ...selection } }),
    // A selection's ids are read by one READ_SELECTED call each, which holds Redis while it runs.
    batch: { read: SELECTED_READ, delete: purger.batch?.delete ?? SELECTED_READ },
  };
}
