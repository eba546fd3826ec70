/**
 * A worker thread that PINGs Redis back to back on its own connection and event loop, so that
 * what it measures is Redis (and the link), not the purge's work in the main thread. Posts
 * `{ worst, p99, count, busy }` (ms; busy = BUSY replies) when told to stop. Plain JS: worker threads do not go through tsx.
 */
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { Redis } from 'ioredis';

const redis = new Redis(workerData.url);
let stopping = false;
const samples = [];
parentPort.on('message', () => {
  stopping = true;
});
await redis.ping();
parentPort.postMessage('ready');
let busy = 0;
while (!stopping) {
  const t0 = performance.now();
  // A Redis stuck in a long script answers BUSY: the PING waits (and is retried) until it gets PONG.
  for (;;) {
    try {
      await redis.ping();
      break;
    } catch {
      busy += 1;
      await new Promise((r) => setTimeout(r, 1));
    }
  }
  samples.push(performance.now() - t0);
  // A probe, not a load: one PING every half millisecond at most.
  await new Promise((r) => setTimeout(r, 0.5));
}
samples.sort((a, b) => a - b);
parentPort.postMessage({
  worst: samples.at(-1) ?? 0,
  p99: samples[Math.floor(samples.length * 0.99)] ?? 0,
  count: samples.length,
  busy,
});
redis.disconnect();
