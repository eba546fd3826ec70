/**
 * Retry of part of 100,000 failed BullMQ jobs (`retry … all --error …`), beside the plain retry of
 * the newest 1,000: the filter is applied in Redis, a read-only script over windows of 1,000
 * entries, and only matching ids come back to the bot. For each: wall time, and the worst and p99
 * PING of a probe (a process of its own, see ping-probe.mjs) while it ran, and the longest single
 * call Redis timed. Each run on a freshly seeded set (pipelined raw writes in BullMQ's layout).
 * `npm run bench -- filters`. Figures only, no assertions.
 */
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { createBullmqBackend } from '../src/backends/bullmq/index.js';
import type { BullmqSystemConfig } from '../src/config/schema.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { withProbe } from './purge.js';

const N = 100_000;
const PREFIX = 'bench-filter';
const QUEUE = 'dispatch-ios';
/** One failure in this many has the rare error: 1,000 of 100,000, spread over the whole set. */
const RARE_EVERY = 100;

/** `N` failed jobs as BullMQ 5 writes them (hash + the failed zset, scored by finishedOn). */
async function seedFailed(redis: Redis): Promise<void> {
  const base = `${PREFIX}:${QUEUE}:`;
  await redis.flushdb();
  await redis.hset(`${base}meta`, 'opts.maxLenEvents', '10000', 'version', 'bullmq:5.0.0');
  const started = Date.now() - N * 1000;
  for (let from = 0; from < N; from += 5000) {
    const pipeline = redis.pipeline();
    const zadd: (string | number)[] = [];
    for (let n = from; n < Math.min(N, from + 5000); n++) {
      const id = String(n + 1);
      const at = started + n * 1000;
      const rare = n % RARE_EVERY === 0;
      pipeline.hset(
        base + id,
        'name',
        rare ? 'send-silent' : 'send',
        'data',
        JSON.stringify({ n, token: 'x'.repeat(64) }),
        'opts',
        '{"attempts":1}',
        'timestamp',
        String(at - 500),
        'delay',
        '0',
        'priority',
        '0',
        'processedOn',
        String(at - 100),
        'finishedOn',
        String(at),
        'atm',
        '1',
        'failedReason',
        rare ? 'APNs 410 Unregistered' : 'APNs 429 TooManyRequests',
        'stacktrace',
        JSON.stringify([`Error: APNs\n    at send (/app/worker.js:${n % 97}:13)`]),
      );
      zadd.push(at, id);
    }
    pipeline.zadd(`${base}failed`, ...zadd);
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
  }
}

export async function filtersBench(log: (text: string) => void): Promise<string[]> {
  const server = await startPrivateRedis();
  const url = `${server.url}/0`;
  const admin = new Redis(url);
  const system: BullmqSystemConfig = {
    name: 'bench',
    type: 'bullmq',
    redis: url,
    prefix: PREFIX,
    queues: [QUEUE],
  };
  const rows: string[] = [];
  const variants: { label: string; work: () => Promise<number> }[] = [
    {
      label: 'retry all (newest 1,000, no filter)',
      work: async () => {
        const backend = createBullmqBackend(system, { commandTimeoutMs: 60_000 });
        try {
          return (await backend.retry(QUEUE, { all: true, limit: 1000 })).retried;
        } finally {
          await backend.close();
        }
      },
    },
    {
      label: 'preview of --error 410 (counts all 100,000)',
      work: async () => {
        const backend = createBullmqBackend(system, { commandTimeoutMs: 60_000 });
        try {
          const preview = await backend.previewRetry(QUEUE, {
            all: true,
            limit: 1000,
            filter: { error: '410' },
          });
          return preview.matched ?? 0;
        } finally {
          await backend.close();
        }
      },
    },
    {
      label: 'retry all --error 410 (1,000 spread over 100,000)',
      work: async () => {
        const backend = createBullmqBackend(system, { commandTimeoutMs: 60_000 });
        try {
          return (await backend.retry(QUEUE, { all: true, limit: 1000, filter: { error: '410' } })).retried;
        } finally {
          await backend.close();
        }
      },
    },
    {
      label: 'retry all --name send-silent --older-than 1h',
      work: async () => {
        const backend = createBullmqBackend(system, { commandTimeoutMs: 60_000 });
        try {
          return (
            await backend.retry(QUEUE, {
              all: true,
              limit: 1000,
              filter: { name: 'send-silent', olderThan: '1h' },
            })
          ).retried;
        } finally {
          await backend.close();
        }
      },
    },
  ];
  try {
    const widths = [50, 10, 9, 14, 10, 14];
    const row = (cells: string[]) =>
      cells.map((c, i) => (i === 0 ? c.padEnd(widths[0]!) : c.padStart(widths[i]!))).join('  ');
    const header = row([
      'Failed set of 100,000 (BullMQ)',
      'ms',
      'jobs',
      'worst PING ms',
      'p99 ms',
      'longest call ms',
    ]);
    rows.push('', header, '-'.repeat(header.length));
    for (const variant of variants) {
      log(`seeding ${N.toLocaleString('en-US')} failed jobs…`);
      await seedFailed(admin);
      log(variant.label);
      // One unmeasured run of the same work first would change the set; the script cache is warmed instead.
      const figure = await withProbe(url, variant.work);
      rows.push(
        row([
          variant.label,
          figure.ms.toFixed(0),
          String(figure.removed),
          figure.worstPing.toFixed(1),
          figure.p99Ping.toFixed(1),
          figure.longestCall.toFixed(1),
        ]),
      );
    }
    rows.push(
      '',
      'jobs: retried (preview: how many match). worst PING: the longest a PING from a process of its own waited',
      'while the work ran, i.e. how long workers and producers on that Redis were held up. longest call: the',
      "longest single command (a script call whole) in Redis' slow log. The filter walks the failed set in",
      'script calls of 250 entries (three hash fields each); the retry stops walking once it has its 1,000.',
      `load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(
          ' ',
        )} (1, 5, 15 min): figures from a busy machine are slower throughout, the plain retry included.`,
    );
    return rows;
  } finally {
    admin.disconnect();
    await server.stop();
  }
}
