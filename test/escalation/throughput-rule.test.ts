import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createBullmqBackend } from '../../src/backends/bullmq/index.js';
import { createBackendRegistry } from '../../src/backends/registry.js';
import { configSchema } from '../../src/config/schema.js';
import { evaluateRules } from '../../src/escalation/rules.js';
import { takeSample } from '../../src/escalation/sampler.js';
import { deletePrefix, randomName, systemFor } from '../helpers/bullmq-jobs.js';
import { queueTakenByHand } from '../helpers/bullmq-libs.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * "dispatch-ios is processing under 10/min while thousands wait": a rule on `throughput` with a
 * `when` on `waiting`, over a sample the monitor's own sampler takes of real BullMQ queues whose
 * jobs a real Worker finished at times the test set (Date only).
 */
const url = testRedisUrl();
const prefix = randomName('rtp');
const T0 = Date.UTC(2026, 11, 3, 3, 0, 0);
const closers: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await deletePrefix(url, prefix);
});

const rules = configSchema.parse({
  systems: [{ name: 'pushizo', type: 'bullmq', redis: 'redis://127.0.0.1:1' }],
  escalation: {
    rules: [
      {
        name: 'dispatch-stalling',
        queues: ['*/dispatch-*'],
        metric: 'throughput',
        below: 10,
        when: [{ metric: 'waiting', above: 50 }],
        severity: 'critical',
      },
      { name: 'slow-pickup', queues: ['*'], metric: 'waitP95Seconds', above: 30 },
      { name: 'slow-jobs', queues: ['*'], metric: 'runP95Seconds', above: 5 },
    ],
  },
}).escalation.rules;

describe('rules on throughput and durations', () => {
  it('fire for the queue processing slowly while many wait, not for the fast one nor the short one', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const names = ['dispatch-ios', 'dispatch-android', 'dispatch-web'];
    const system = systemFor(url, prefix, names);
    const backends = createBackendRegistry([createBullmqBackend(system)]);
    closers.push(() => backends.close());
    /** `finished` jobs, each added `waitMs` before a worker took it and run for `runMs`, then `waiting` more. */
    async function scene(name: string, finished: number[], waitMs: number, runMs: number, waiting: number) {
      const { queue, worker } = queueTakenByHand(name, { url, prefix }, closers);
      for (const at of finished) {
        vi.setSystemTime(at - runMs - waitMs);
        await queue.add('push', {}, { timestamp: at - runMs - waitMs });
        vi.setSystemTime(at - runMs);
        const token = randomName('tok');
        const job = await worker.getNextJob(token);
        vi.setSystemTime(at);
        await job!.moveToCompleted('sent', token, false);
      }
      await queue.addBulk(Array.from({ length: waiting }, (_, n) => ({ name: 'push', data: { n } })));
    }
    const now = T0 + 10 * 60_000;
    // ios: 2 pushes in the last 5 minutes (0.4/min), each waited 40 s and ran 8 s; 60 wait.
    await scene('dispatch-ios', [now - 200_000, now - 100_000], 40_000, 8_000, 60);
    // android: 60 pushes in the last 4 minutes, 60 wait: fast enough. All it keeps is that recent
    // (as a trimmed set would be), so the rate is over the 4 minutes: 15/min.
    await scene(
      'dispatch-android',
      Array.from({ length: 60 }, (_, k) => now - 240_000 + k * 4000),
      100,
      200,
      60,
    );
    // web: slow too, but only 5 wait.
    await scene('dispatch-web', [now - 150_000], 100, 200, 5);
    vi.setSystemTime(now);

    const sample = await takeSample(
      { config: { systems: [system], escalation: { rules } }, backends },
      [],
      now,
    );
    // Every tick has the rates (trend draws them); only a rule on a duration has jobs timed (it
    // reads job hashes, which costs; see the bench).
    const plain = await takeSample({ config: { systems: [system] }, backends }, [], now);
    const plainIos = plain.systems[0]!.queues.find((q) => q.name === 'dispatch-ios')!;
    expect(plainIos.throughput).toBe(0.4);
    // It kept no failed job: that rate is not known (not 0), and the sample says it read rates.
    expect(plainIos.failedPerMinute).toBeUndefined();
    expect(plain.systems[0]!.rates).toEqual({});
    expect(plainIos.waitP95Seconds).toBeUndefined();
    expect(plainIos.runP95Seconds).toBeUndefined();
    const byName = new Map(sample.systems[0]!.queues.map((q) => [q.name, q]));
    expect(byName.get('dispatch-ios')).toMatchObject({
      throughput: 0.4,
      waitP95Seconds: 40,
      runP95Seconds: 8,
    });
    expect(byName.get('dispatch-android')!.throughput).toBe(15);

    const firing = evaluateRules(rules, [sample], now)
      .filter((r) => r.firing)
      .map((r) => `${r.rule.name}|${r.queue}|${r.value}`)
      .sort();
    expect(firing).toEqual([
      'dispatch-stalling|dispatch-ios|0.4',
      'slow-jobs|dispatch-ios|8',
      'slow-pickup|dispatch-ios|40',
    ]);
  });

  it('refuses a `when` on a rule whose metric is not about a queue', () => {
    const parsed = configSchema.safeParse({
      systems: [{ name: 'pushizo', type: 'bullmq', redis: 'redis://127.0.0.1:1' }],
      escalation: {
        rules: [
          { name: 'x', metric: 'redisMemoryRatio', above: 0.9, when: [{ metric: 'waiting', above: 1 }] },
        ],
      },
    });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('must be a queue metric');
  });
});
