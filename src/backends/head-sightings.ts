import type { QueueCounts, SystemStatus } from './queue-backend.js';

/**
 * The monitor's sighting of the message at the head of a Celery queue: its delivery tag and when
 * the monitor first saw it there (epoch ms). Stored in its samples (src/escalation/sightings.ts
 * reads them); merged into a status here, for `status` and `/metrics` alike.
 */
export interface HeadSighting {
  id: string;
  firstSeen: number;
}

/** By system, then by queue. */
export type Sightings = ReadonlyMap<string, ReadonlyMap<string, HeadSighting>>;

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
