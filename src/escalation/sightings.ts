import type { HeadSighting, Sightings } from '../backends/head-sightings.js';
import type { EscalationStore } from '../store/store.js';
import { decodeSample } from './samples.js';

export { type HeadSighting, type Sightings, withSightings } from '../backends/head-sightings.js';

/**
 * The monitor's sightings of the message at the head of each Celery queue, as its samples store
 * them: the one source of a Celery queue's age for `status` and the rules alike. Celery messages
 * carry no enqueue time, so the age is the time since the monitor first saw the same delivery tag
 * at the head, a lower bound that survives restarts because it is in the store. `status` reads
 * them and never writes any: a read needs no writable store.
 */
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
