/**
 * A process of its own that PINGs Redis back to back on its own connection, as a BullMQ worker or
 * producer on that Redis would: what it measures is Redis (and the link), not the purging
 * process's pauses (its GC, its page faults), which a thread inside that process would share.
 * Forked with the Redis URL as its argument; says `ready`, then on any message posts
 * `{ worst, p99, count, busy, worstAt, over20 }` (ms; busy = BUSY replies) and exits. Plain JS: no tsx here.
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';

const redis = new Redis(process.argv[2]);
let stopping = false;
const samples = [];
process.on('message', () => {
  stopping = true;
});
await redis.ping();
process.send('ready');
let busy = 0;
const started = performance.now();
let worstAt = 0;
let worstSoFar = 0;
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
  const took = performance.now() - t0;
  if (took > worstSoFar) {
    worstSoFar = took;
    worstAt = t0 - started;
  }
  samples.push(took);
  // A probe, not a load: one PING every half millisecond at most.
  await new Promise((r) => setTimeout(r, 0.5));
}
samples.sort((a, b) => a - b);
process.send(
  {
    worst: samples.at(-1) ?? 0,
    p99: samples[Math.floor(samples.length * 0.99)] ?? 0,
    count: samples.length,
    busy,
    // When the worst PING was sent (ms after the probe started), and how many waited over 20 ms.
    worstAt,
    over20: samples.filter((s) => s > 20).length,
  },
  () => {
    redis.disconnect();
    process.exit(0);
  },
);
