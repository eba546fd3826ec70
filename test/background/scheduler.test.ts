import { afterEach, describe, expect, it } from 'vitest';
import { type BackgroundJob, createJobScheduler, type JobScheduler } from '../../src/background/scheduler.js';
import { createLogger } from '../../src/lib/logger.js';

/**
 * The scheduler on real timers with short intervals: every-replica jobs on their own timers, the
 * leader's jobs only after a claim that holds, in order, never overlapping themselves, their
 * errors logged and not thrown, nothing running after stop.
 */

const lines: Record<string, unknown>[] = [];
const logger = createLogger({
  level: 'info',
  destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const schedulers: JobScheduler[] = [];

function job(name: string, scope: BackgroundJob['scope'], everyMs: number, run: () => Promise<unknown>) {
  return { name, scope, everyMs, run } satisfies BackgroundJob;
}

afterEach(async () => {
  for (const scheduler of schedulers.splice(0)) await scheduler.stop();
  lines.length = 0;
});

describe('the background job scheduler', () => {
  it('runs an every-replica job once at start, before start resolves, then on its timer', async () => {
    let runs = 0;
    const scheduler = createJobScheduler({
      jobs: [job('sweep', 'every-replica', 20, async () => void runs++)],
      logger,
    });
    schedulers.push(scheduler);
    await scheduler.start();
    expect(runs).toBe(1);
    await sleep(110);
    expect(runs).toBeGreaterThanOrEqual(3);
    await scheduler.stop();
    const stoppedAt = runs;
    await sleep(60);
    expect(runs).toBe(stoppedAt);
  });

  it('never overlaps a job with itself, and stop waits for the run in progress', async () => {
    let running = 0;
    let most = 0;
    let finished = 0;
    const scheduler = createJobScheduler({
      jobs: [
        job('slow', 'every-replica', 10, async () => {
          running++;
          most = Math.max(most, running);
          await sleep(45);
          running--;
          finished++;
        }),
      ],
      logger,
    });
    schedulers.push(scheduler);
    await scheduler.start();
    await sleep(60);
    await scheduler.stop();
    expect(most).toBe(1);
    expect(running).toBe(0);
    expect(finished).toBeGreaterThanOrEqual(2);
  });

  it('logs a failing job by name and runs it again at its next turn', async () => {
    let runs = 0;
    const scheduler = createJobScheduler({
      jobs: [
        job('flaky', 'every-replica', 15, async () => {
          runs++;
          throw new Error('Redis is down');
        }),
      ],
      logger,
    });
    schedulers.push(scheduler);
    await scheduler.start();
    await sleep(50);
    expect(runs).toBeGreaterThanOrEqual(2);
    const failed = lines.filter((line) => line.job === 'flaky');
    expect(failed.length).toBe(runs);
    expect(failed[0]).toMatchObject({
      level: 40,
      component: 'background',
      err: { message: 'Redis is down' },
    });
  });

  it('runs the leader jobs, in order, only where the claim holds, once each interval', async () => {
    const order: string[] = [];
    let leads = false;
    let claims = 0;
    const scheduler = createJobScheduler({
      jobs: [
        job('limit-expiry', 'leader', 40, async () => void order.push('limit-expiry')),
        job('monitor-tick', 'leader', 40, async () => void order.push('monitor-tick')),
      ],
      leadership: {
        everyMs: 20,
        claim: async () => {
          claims++;
          return leads;
        },
      },
      logger,
    });
    schedulers.push(scheduler);
    await scheduler.start();
    await sleep(50);
    // A follower claims every step and runs nothing.
    expect(claims).toBeGreaterThanOrEqual(2);
    expect(order).toEqual([]);
    leads = true;
    claims = 0;
    await sleep(130);
    await scheduler.stop();
    expect(order.length).toBeGreaterThanOrEqual(4);
    // Renewed every step, ticked every second one (an interval is two steps).
    expect(order.length / 2).toBeLessThan(claims);
    for (let i = 0; i < order.length; i += 2)
      expect(order.slice(i, i + 2)).toEqual(['limit-expiry', 'monitor-tick']);
  });

  it('refuses leader jobs without a leadership to decide who runs them', () => {
    expect(() =>
      createJobScheduler({ jobs: [job('monitor-tick', 'leader', 10, async () => {})], logger }),
    ).toThrow(/leadership/);
  });
});
