import { gzipSync } from 'node:zlib';
import { CHUNK_RECORDS, manifestBytesFor, splitBlocks } from '../archive/archive.js';
import { ARCHIVE_GZIP_LEVEL } from '../archive/compressor.js';
import type { PurgePlace, PurgePreview, QueuePurger } from './queue-backend.js';

/** Jobs shown in a purge preview (names and ages only, never data). */
const SAMPLE = 5;
/** Whole jobs gzipped, the way the archive will be, to estimate its size. */
const ESTIMATE_SAMPLE = 20;

const gzipped = (lines: readonly string[]) =>
  gzipSync(`${lines.join('\n')}\n`, { level: ARCHIVE_GZIP_LEVEL }).length;

/**
 * The archive's size on disk from a sample of its lines: the sample gzipped as the archive's
 * chunks are, plus what each further line adds once gzip has seen lines like it (the second half
 * of the sample over the first: jobs of a queue look alike, so a line costs far less than alone),
 * plus the manifest. Lines gzipped one sample at a time and scaled up counted every line's
 * repetition again (13 kB said for 4.3 kB written), and the manifest not at all.
 */
export function estimateArchiveBytes(sample: readonly string[], total: number): number {
  if (sample.length === 0 || total === 0) return 0;
  const whole = gzipped(sample);
  let chunks = whole;
  if (total > sample.length) {
    const half = Math.ceil(sample.length / 2);
    const perLine =
      sample.length > half ? (whole - gzipped(sample.slice(0, half))) / (sample.length - half) : whole;
    chunks += Math.max(0, perLine) * (total - sample.length);
  }
  const files = Math.ceil(total / CHUNK_RECORDS);
  // Each further chunk is a gzip member of its own: its header and trailer, about 20 bytes.
  return Math.ceil(chunks + (files - 1) * 20 + manifestBytesFor(files));
}

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
  return { total, byState, sample, estimatedBytes: estimateArchiveBytes(lines, total) };
}
