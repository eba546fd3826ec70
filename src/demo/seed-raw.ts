import type { Redis } from 'ioredis';

/**
 * Writes `count` waiting BullMQ jobs the way BullMQ's `addStandardJob` lays them out (a hash with
 * name, data, opts, timestamp, delay, priority; the id LPUSHed on `wait`; the id counter and the
 * meta hash), with pipelined raw writes: a million jobs in seconds, where `Queue.add` one by one
 * takes minutes. For the bench and the tests of million-job paths; real BullMQ workers process
 * these jobs like any other.
 */
export async function seedRawBullmqJobs(
  redis: Redis,
  options: { prefix: string; queue: string; count: number; name?: string; version?: string; batch?: number },
): Promise<void> {
  const base = `${options.prefix}:${options.queue}:`;
  const batch = options.batch ?? 5000;
  const now = Date.now();
  const opts = JSON.stringify({ attempts: 1 });
  const start = Number(await redis.incrby(`${base}id`, options.count)) - options.count;
  await redis.hset(`${base}meta`, 'opts.maxLenEvents', '10000', 'version', options.version ?? 'bullmq:6.7.0');
  for (let from = 0; from < options.count; from += batch) {
    const pipeline = redis.pipeline();
    const ids: string[] = [];
    for (let i = from; i < Math.min(options.count, from + batch); i++) {
      const id = String(start + i + 1);
      ids.push(id);
      pipeline.hset(
        base + id,
        'name',
        options.name ?? 'event.ingest',
        'data',
        `{"n":${i},"payload":"${'x'.repeat(40)}"}`,
        'opts',
        opts,
        'timestamp',
        String(now + i),
        'delay',
        '0',
        'priority',
        '0',
      );
    }
    pipeline.lpush(`${base}wait`, ...ids);
    await pipeline.exec();
  }
}
