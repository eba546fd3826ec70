/**
 * One `trend <system>/<queue> 24h` over a store file, in a process of its own so that its heap
 * can be capped (`node --max-old-space-size=… --import tsx bench/trend-heap.ts <store> <mode> …`):
 * `paged` reads as the bot does, a page of samples at a time; `whole` reads the day at once.
 * Prints `{"points":…,"ms":…}`; a heap too small for the read ends the process (V8 aborts).
 */
import { trendSource } from '../src/escalation/alerts.js';
import { decodeSample } from '../src/escalation/samples.js';
import { loadTrend, trendPoints } from '../src/escalation/trend.js';
import { createSqliteStore } from '../src/store/sqlite.js';

const [storePath, mode, system, queue, nowText] = process.argv.slice(2);
const now = Number(nowText);
const from = now - 24 * 3_600_000;
const store = createSqliteStore(storePath!);
const started = performance.now();
let points: number;
if (mode === 'paged') {
  const trend = await loadTrend(
    trendSource(store.escalation),
    [],
    { system: system!, queue: queue!, window: '24h' },
    now,
  );
  points = trend.points.length;
} else {
  const rows = await store.escalation.listSamples(new Date(from).toISOString());
  const samples = rows.map((row) => decodeSample(row.data));
  points = trendPoints(samples, system!, queue!, from, now).length;
}
process.stdout.write(`${JSON.stringify({ points, ms: performance.now() - started })}\n`);
await store.close();
