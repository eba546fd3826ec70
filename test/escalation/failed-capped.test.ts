import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { configSchema } from '../../src/config/schema.js';
import { evaluateRules } from '../../src/escalation/rules.js';
import { takeSample } from '../../src/escalation/sampler.js';
import type { Sample } from '../../src/escalation/samples.js';
import { connectionFor, deletePrefix, randomName, systemFor, waitFor } from '../helpers/bullmq-jobs.js';
import { LIBS } from '../helpers/bullmq-libs.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * `failedIncrease` on a real BullMQ queue whose failed set is capped by `removeOnFail: { count }`,
 * as Pushizo's is (5000): the set stays the same size while jobs keep failing, so the monitor
 * counts failures by when they failed (ZCOUNT on the set's scores, in the status read's round trip).
 * Between two samples it sees up to the cap (5000 in 30 s is an alert anyway).
 */
const redisUrl = testRedisUrl();

describe.each(LIBS)('failedIncrease with a capped failed set, BullMQ $major', ({ lib }) => {
  const prefix = randomName('cap');
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    await deletePrefix(redisUrl, prefix);
  });

  // A cap of 20 keeps a small set (a listpack in Redis), one of 150 a big one (a skiplist): the
  // status script counts them in a different order.
  it.each([20, 150])(
    'counts every new failure although the failed set stays at its cap of %i',
    async (cap) => {
      const name = 'dispatch-ios';
      const queue = new lib.Queue(name, { connection: connectionFor(redisUrl), prefix });
      closers.push(() => queue.close());
      let failures = 0;
      const worker = new lib.Worker(
        name,
        async () => {
          throw new Error('ProviderError: 503');
        },
        { connection: connectionFor(redisUrl), prefix, concurrency: 10 },
      );
      worker.on('failed', () => {
        failures++;
      });
      closers.push(() => worker.close());
      const addFailing = async (n: number) => {
        await queue.addBulk(
          Array.from({ length: n }, (_, i) => ({
            name: 'send',
            data: { i },
            opts: { removeOnFail: { count: cap } },
          })),
        );
      };

      await addFailing(cap + 10);
      await waitFor(`${cap + 10} failures`, async () => failures >= cap + 10);
      const system = systemFor(redisUrl, prefix, [name]);
      const backend = createBullmqBackend(system);
      closers.push(() => backend.close());
      const deps = {
        config: { systems: [system] },
        backends: { names: () => [system.name], get: () => backend, all: () => [backend] },
      };
      const first = await takeSample(deps, [], Date.now());
      expect(first.systems[0]!.queues[0]).toMatchObject({ failed: cap });
      // No earlier sample: nothing to count from yet.
      expect(first.systems[0]!.queues[0]!.failedNew).toBeUndefined();

      await new Promise((resolve) => setTimeout(resolve, 5));
      await addFailing(15);
      await waitFor('15 more failures', async () => failures >= cap + 25);
      const history: Sample[] = [first];
      const second = await takeSample(deps, history, Date.now());
      expect(second.systems[0]!.queues[0]).toMatchObject({ failed: cap, failedNew: 15 });
      // And none when nothing failed since (read from the newest failure alone).
      await new Promise((resolve) => setTimeout(resolve, 5));
      const third = await takeSample(deps, [first, second], Date.now());
      expect(third.systems[0]!.queues[0]).toMatchObject({ failed: cap, failedNew: 0 });

      const rules = configSchema.parse({
        systems: [system],
        escalation: {
          rules: [
            { name: 'dlq-growth', metric: 'failedIncrease', above: 10, within: '5m', severity: 'warning' },
          ],
        },
      }).escalation.rules;
      const [result] = evaluateRules(rules, [first, second], second.at);
      expect(result).toMatchObject({ subject: `${system.name}/${name}`, value: 15, firing: true });
    },
  );

  it('counts failures since a sample older than the rates span, and none after an old one within it', async () => {
    const name = 'webhooks';
    const queue = new lib.Queue(name, { connection: connectionFor(redisUrl), prefix });
    closers.push(() => queue.close());
    await queue.add('deliver', {});
    const system = systemFor(redisUrl, prefix, [name]);
    const backend = createBullmqBackend(system);
    closers.push(() => backend.close());
    const deps = {
      config: { systems: [system] },
      backends: { names: () => [system.name], get: () => backend, all: () => [backend] },
    };
    // Failures as BullMQ scores them (finishedOn): 4 seven minutes ago, none since. The status
    // script skips the count where the rates (the last 5 minutes) found no failure, but only when
    // their span covers the time since the previous sample.
    const now = Date.now();
    const redis = new Redis(redisUrl);
    closers.push(async () => redis.disconnect());
    await redis.zadd(
      `${prefix}:${name}:failed`,
      ...[1, 2, 3, 4].flatMap((i) => [now - 7 * 60_000 + i, `f${i}`]),
    );
    const previous = (at: number): Sample => ({
      at,
      systems: [{ name: system.name, type: 'bullmq', ok: true, workers: [], queues: [] }],
    });
    const afterLongGap = await takeSample(deps, [previous(now - 10 * 60_000)], Date.now());
    expect(afterLongGap.systems[0]!.queues[0]).toMatchObject({ failed: 4, failedNew: 4, failedPerMinute: 0 });
    const withinSpan = await takeSample(deps, [previous(now - 60_000)], Date.now());
    expect(withinSpan.systems[0]!.queues[0]).toMatchObject({ failed: 4, failedNew: 0 });
  });

  it('does not count failures that were retried as growth of the failed set (issue 38: 152 with 12 left)', async () => {
    const name = 'dispatch-web';
    const queue = new lib.Queue(name, { connection: connectionFor(redisUrl), prefix });
    closers.push(() => queue.close());
    const system = systemFor(redisUrl, prefix, [name]);
    const backend = createBullmqBackend(system);
    closers.push(() => backend.close());
    const deps = {
      config: { systems: [system] },
      backends: { names: () => [system.name], get: () => backend, all: () => [backend] },
    };
    const first = await takeSample(deps, [], Date.now());
    let failures = 0;
    const worker = new lib.Worker(
      name,
      async () => {
        throw new Error('ProviderError: 503');
      },
      { connection: connectionFor(redisUrl), prefix, concurrency: 10 },
    );
    worker.on('failed', () => {
      failures++;
    });
    await queue.addBulk(Array.from({ length: 30 }, (_, i) => ({ name: 'send', data: { i } })));
    await waitFor('30 failures', async () => failures >= 30);
    await worker.close();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await takeSample(deps, [first], Date.now());
    expect(second.systems[0]!.queues[0]).toMatchObject({ failed: 30, failedNew: 30 });

    // 25 of them retried (as `retry` does): back to waiting, out of the failed set.
    const failed = await queue.getJobs(['failed'], 0, 24);
    for (const job of failed) await job.retry('failed');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const third = await takeSample(deps, [first, second], Date.now());
    expect(third.systems[0]!.queues[0]).toMatchObject({ failed: 5, failedNew: 0, waiting: 25 });

    const rules = configSchema.parse({
      systems: [system],
      escalation: {
        rules: [
          { name: 'dlq-growth', metric: 'failedIncrease', above: 10, within: '5m', severity: 'warning' },
        ],
      },
    }).escalation.rules;
    const [result] = evaluateRules(rules, [first, second, third], third.at);
    // The failed set grew by 5 over the window; 30 failed, but 25 of them are waiting again.
    expect(result).toMatchObject({ subject: `${system.name}/${name}`, value: 5, firing: false });
  });
});
