import type { QueueCounts, SystemStatus } from '../backends/queue-backend.js';
import type { EscalationStore } from '../store/store.js';
import { decodeSample } from './samples.js';

/**
 * The monitor's sightings of the message at the head of each Celery queue, as its samples store
 * them: the one source of a Celery queue's age for `status` and the rules alike. Celery messages
 * carry no enqueue time, so the age is the time since the monitor first saw the same delivery tag
 * at the head, a lower bound that survives restarts because it is in the store. `status` reads
 * them and never writes any: a read needs no writable store.
 */
export interface HeadSighting {
  id: string;
  firstSeen: number;
}

/** By system, then by queue. */
export type Sightings = ReadonlyMap<string, ReadonlyMap<string, HeadSighting>>;

/** How many of the newest samples are searched for a system the newest one could not read. */
const SAMPLES_SEARCHED = 10;

/**
 * The newest sighting of each queue of each of `systems`, from the newest sample in which that
 * system was read. Empty when there is no store, no sample, or the store fails: the age is then
 * unknown, never made up.
 */
export async function readSightings(
  store: Pick<EscalationStore, 'newestSamples'> | undefined,
  systems: readonly string[],
): Promise<Sightings> {
  const found = new Map<string, Map<string, HeadSighting>>();
  if (!store || systems.length === 0) return found;
  const wanted = new Set(systems);
  // The newest sample answers almost always; older ones only for a system it could not read.
  for (const limit of [1, SAMPLES_SEARCHED]) {
    const rows = await store.newestSamples(limit);
    for (const row of rows.slice(limit === 1 ? 0 : 1)) {
      for (const system of decodeSample(row.data).systems) {
        if (!system.ok || !wanted.has(system.name) || found.has(system.name)) continue;
        const heads = new Map<string, HeadSighting>();
        for (const q of system.queues) if (q.head) heads.set(q.name, q.head);
        found.set(system.name, heads);
      }
    }
    if (found.size === wanted.size || rows.length < limit) break;
  }
  return found;
}

/** Merged statuses, kept while the same status object is shown at the same second. */
const merged = new WeakMap<SystemStatus, { key: string; status: SystemStatus }>();

/**
 * `status` with the age of each queue whose head message the monitor saw: at least the time since
 * it first saw it there (`oldestWaitingFrom: 'firstSeen'`), unless the broker's own figure (a
 * past ETA) is larger. A head that moved since the sighting is a message the monitor never saw:
 * its age stays unknown. The same status object comes back when nothing changes, so the status
 * renderer's cache of a snapshot shared by many commands still holds.
 */
export function withSightings(
  status: SystemStatus,
  heads: ReadonlyMap<string, HeadSighting> | undefined,
  now: number,
): SystemStatus {
  if (!heads || heads.size === 0) return status;
  const second = Math.floor(now / 1000);
  const key = `${second}|${JSON.stringify([...heads])}`;
  const known = merged.get(status);
  if (known?.key === key) return known.status;
  let changed = false;
  const queues = status.queues.map((q): QueueCounts => {
    const seen = q.headId === undefined ? undefined : heads.get(q.name);
    if (!seen || seen.id !== q.headId || q.waiting === 0) return q;
    const held = Math.max(0, Math.floor((now - seen.firstSeen) / 1000));
    if (q.oldestWaitingSeconds !== null && q.oldestWaitingSeconds >= held) return q;
    changed = true;
    return {
      ...q,
      oldestWaitingSeconds: held,
      oldestWaitingFrom: 'firstSeen',
      waitingSeenSince: seen.firstSeen,
    };
  });
  const result = changed ? { ...status, queues } : status;
  merged.set(status, { key, status: result });
  return result;
}
