/**
 * `npm run bench -- redis`: what `/queue redis <system>` costs on a Redis of 1,000,000 keys
 * (`BENCH_REDIS_KEYS`): the time of the whole read (INFO, MEMORY STATS, SLOWLOG, then the bounded
 * key sample) and the worst PING of a probe (a process of its own) meanwhile, beside the same probe
 * on the idle Redis for as long, and beside the runbook's `redis-cli --bigkeys` (a full SCAN).
 * Figures only.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { readRedisHealth } from '../src/backends/redis-health.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { withProbe } from './purge.js';

const KEYS = Number(process.env.BENCH_REDIS_KEYS ?? 1_000_000);
const run = promisify(execFile);

export async function redisHealthBench(log: (text: string) => void): Promise<string[]> {
  const server = await startPrivateRedis();
  const url = `${server.url}/0`;
  const admin = new Redis(url);
  try {
    log(`redis: seeding ${KEYS.toLocaleString('en-US')} keys (strings, hashes, one big list)…`);
    for (let start = 0; start < KEYS; start += 10_000) {
      const pipeline = admin.pipeline();
      for (let i = start; i < Math.min(KEYS, start + 10_000); i++)
        if (i % 2 === 0) pipeline.set(`bench:s:${i}`, 'x'.repeat(40));
        else pipeline.hset(`bench:h:${i}`, 'a', '1', 'b', '2');
      await pipeline.exec();
    }
    await admin.rpush('bench:big', ...Array.from({ length: 100_000 }, (_, i) => `item-${i}`));
    const idle = await withProbe(url, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return 0;
    });
    let sampled = 0;
    const health = await withProbe(url, async () => {
      const reading = await readRedisHealth(admin);
      sampled = reading.sample.scanned;
      return reading.bigKeys.length;
    });
    const bigkeys = await withProbe(url, async () => {
      await run('redis-cli', ['-u', url, '--bigkeys'], { maxBuffer: 64 * 1024 * 1024 });
      return 0;
    });
    const row = (label: string, f: typeof idle, note: string) =>
      `| ${label} | ${f.ms.toFixed(0)} ms | ${f.worstPing.toFixed(1)} ms | ${f.p99Ping.toFixed(1)} ms | ${f.longestCall.toFixed(1)} ms | ${note} |`;
    return [
      '',
      `redis <system> on ${KEYS.toLocaleString('en-US')} keys`,
      '| run | time | worst PING | p99 PING | longest call | note |',
      '|---|---|---|---|---|---|',
      row('idle Redis, 1 s', idle, 'the probe alone'),
      row(
        'queue-ops `redis` (pipelined read + key sample)',
        health,
        `sampled ${sampled.toLocaleString('en-US')} keys (budget 10,000 keys / 500 ms)`,
      ),
      row('`redis-cli --bigkeys` (runbook)', bigkeys, 'a full SCAN of every key'),
    ];
  } finally {
    admin.disconnect();
    await server.stop();
  }
}
