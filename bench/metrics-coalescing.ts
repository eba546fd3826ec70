/**
 * `npm run bench -- metrics`: 1,000 BullMQ queues watched by one bot, hit by 10
 * concurrent `/metrics` scrapes plus 10 concurrent `/queue status` calls. Prints the Redis
 * commands actually sent and the latency, next to the same 20 requests each reading alone (no
 * sharing), which is what a separate exporter beside the bot would add. Figures only.
 */
import { Redis } from 'ioredis';
import { createBullmqBackend } from '../src/backends/bullmq/index.js';
import { coalesceStatus } from '../src/backends/coalesce.js';
import type { BullmqSystemConfig } from '../src/config/schema.js';
import { configSchema } from '../src/config/schema.js';
import { startPrivateRedis } from '../src/lib/redis-server.js';
import { createMetrics } from '../src/metrics/metrics.js';

const QUEUES = 1000;
const JOBS_PER_QUEUE = 20;
const ROUNDS = 5;

async function processed(admin: Redis): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await admin.info('stats'))?.[1] ?? 0);
}

async function seed(admin: Redis): Promise<void> {
  const now = Date.now();
  for (let q = 0; q < QUEUES; q += 50) {
    const pipeline = admin.pipeline();
    for (let i = q; i < Math.min(QUEUES, q + 50); i++) {
      const base = `bench:q${i}:`;
      pipeline.hset(`${base}meta`, 'opts.maxLenEvents', '10000', 'version', 'bullmq:6.0.0');
      for (let j = 0; j < JOBS_PER_QUEUE; j++) {
        pipeline.hset(
          `${base}${j}`,
          'name',
          'job',
          'data',
          '{}',
          'opts',
          '{}',
          'timestamp',
          String(now - j * 1000),
        );
        pipeline.lpush(`${base}wait`, String(j));
      }
    }
    await pipeline.exec();
  }
}

async function run(label: string, admin: Redis, work: () => Promise<unknown>[]) {
  const times: number[] = [];
  let commands = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const before = await processed(admin);
    const started = performance.now();
    await Promise.all(work());
    times.push(performance.now() - started);
    // The INFO that reads the counter is itself counted once.
    commands += (await processed(admin)) - before - 1;
  }
  times.sort((a, b) => a - b);
  return { label, medianMs: times[Math.floor(times.length / 2)]!, commands: commands / ROUNDS };
}

/** The `metrics` section of `npm run bench`. */
export async function benchMetricsCoalescing(): Promise<void> {
  const redis = await startPrivateRedis();
  const admin = new Redis(redis.url);
  try {
    await seed(admin);
    const config = configSchema.parse({
      systems: [{ name: 'pushizo', type: 'bullmq', redis: redis.url, prefix: 'bench' }],
    });
    const system = config.systems[0] as BullmqSystemConfig;
    const raw = createBullmqBackend(system, { commandTimeoutMs: 60_000 });
    const shared = coalesceStatus(createBullmqBackend(system, { commandTimeoutMs: 60_000 }));
    const metrics = createMetrics({
      backends: { names: () => ['pushizo'], get: () => shared },
      cacheSeconds: 0,
      processMetrics: false,
    });
    // Ten exporters that share nothing, as ten scrapers reading alone would be: one metrics
    // object would itself share a read among concurrent scrapes.
    const aloneMetrics = Array.from({ length: 10 }, () =>
      createMetrics({
        backends: { names: () => ['pushizo'], get: () => raw },
        cacheSeconds: 0,
        processMetrics: false,
      }),
    );
    // Warm both: script load and queue discovery.
    await raw.status();
    await shared.status();

    const alone = await run('each of the 20 reads alone', admin, () => [
      ...aloneMetrics.map((alone) => alone.render()),
      ...Array.from({ length: 10 }, () => raw.status()),
    ]);
    const coalesced = await run('queue-ops: 10 scrapes + 10 status, shared', admin, () => [
      ...Array.from({ length: 10 }, () => metrics.render()),
      ...Array.from({ length: 10 }, () => shared.status()),
    ]);
    const single = await run('one status call (reference)', admin, () => [raw.status()]);

    console.log(
      `\n/metrics + status over ${QUEUES} BullMQ queues, 20 concurrent requests (median of ${ROUNDS})`,
    );
    console.log('| what | wall ms | Redis commands |');
    console.log('|---|---:|---:|');
    for (const r of [coalesced, alone, single]) {
      console.log(`| ${r.label} | ${r.medianMs.toFixed(1)} | ${r.commands.toFixed(0)} |`);
    }
    console.log(
      `sharing: ${(alone.commands / Math.max(1, coalesced.commands)).toFixed(1)}× fewer Redis commands, ` +
        `${(alone.medianMs / coalesced.medianMs).toFixed(1)}× faster for the 20 requests`,
    );
    await raw.close();
    await shared.close();
  } finally {
    admin.disconnect();
    await redis.stop();
  }
}
