import { gzipSync } from 'node:zlib';
import { splitBlocks } from '../archive/archive.js';
import type { PurgePlace, PurgePreview, QueuePurger } from './queue-backend.js';

/** Jobs shown in a purge preview (names and ages only, never data). */
const SAMPLE = 5;
/** Whole jobs gzipped, the way the archive will be, to estimate its size. */
const ESTIMATE_SAMPLE = 20;

/**
 * What every purger's preview has in common: counts per state from the places' sizes, a sample
 * of what goes first, and an archive size estimated from a few whole lines. `sampleOf` reads the
 * name and age out of one archive line of that backend.
 */
export async function previewOf(
  places: readonly PurgePlace[],
  read: QueuePurger['read'],
  sampleOf: (line: string) => PurgePreview['sample'][number],
): Promise<PurgePreview> {
  const byState: PurgePreview['byState'] = {};
  for (const place of places) byState[place.state] = (byState[place.state] ?? 0) + place.size;
  const total = places.reduce((sum, p) => sum + p.size, 0);
  const sample: PurgePreview['sample'] = [];
  const lines: string[] = [];
  for (const place of places) {
    if (place.size === 0 || lines.length >= ESTIMATE_SAMPLE) continue;
    const batch = await read(place, 0, ESTIMATE_SAMPLE - lines.length);
    for (const line of splitBlocks(batch.lines).map((l) => l.toString().trimEnd())) {
      lines.push(line);
      if (sample.length < SAMPLE) sample.push(sampleOf(line));
    }
  }
  const estimatedBytes =
    lines.length === 0 ? 0 : Math.ceil((gzipSync(lines.join('\n')).length / lines.length) * total);
  return { total, byState, sample, estimatedBytes };
}
