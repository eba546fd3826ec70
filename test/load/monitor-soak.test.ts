import { describe, expect, it } from 'vitest';
import { runMonitorSoak, type SoakResult } from '../../bench/soak.js';
import { deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * The escalation monitor for a day and a half on a controlled clock (no real waiting): 20 real
 * BullMQ queues, 2 of them over the rule's threshold for an hour every six, so alerts open, post
 * their charts, remind and resolve all along, through the real outbox to a local Slack stand-in.
 * Read after 24 h (the samples' window just filled), 30 h and 36 h: the two last six-hour halves
 * must leave the store the same size. `npm run bench -- soak` runs the same loop on 1,000 queues
 * and prints the heap; timing is never asserted here.
 */
describe('the monitor over 36 hours of simulated time', () => {
  const url = testRedisUrl();
  const INTERVAL_S = 1800;
  let result: SoakResult;

  it('opens an alert for each hot queue every six hours, to the end', async () => {
    const prefix = randomName('soak');
    try {
      result = await runMonitorSoak({
        redisUrl: url,
        queues: 20,
        hot: 2,
        hours: 36,
        intervalSeconds: INTERVAL_S,
        prefix,
        checkpointHours: [24, 30, 36],
      });
    } finally {
      await deletePrefix(url, prefix);
    }
    expect(result.checkpoints.map((c) => c.hour)).toEqual([24, 30, 36]);
    // Hot from hours 0, 6, … 36 (the last tick is at 36 h): 7 periods × 2 queues.
    expect(result.alertsOpened).toBe(14);
  }, 120_000);

  it('keeps samples for the 24 h window only: as many after 36 h as after 30 h', () => {
    const [, half, end] = result.checkpoints as [unknown, SoakResultPoint, SoakResultPoint];
    expect(end.samples).toBe(half.samples);
    expect(end.samples).toBeLessThanOrEqual((24 * 3600) / INTERVAL_S + 1);
    expect(end.oldestSampleHours).toBeLessThanOrEqual(24);
  });

  it('drains the outbox every tick and does not grow it: delivered messages older than a day go', () => {
    for (const c of result.checkpoints) expect(c.outbox.pending).toBe(0);
    const [, half, end] = result.checkpoints as [unknown, SoakResultPoint, SoakResultPoint];
    expect(end.outbox.rows).toBe(half.outbox.rows);
  });

  it('sends Slack the same messages in each six-hour half, with the same alerts firing at each reading', () => {
    const [first, half, end] = result.checkpoints as [SoakResultPoint, SoakResultPoint, SoakResultPoint];
    expect(half.slackCalls - first.slackCalls).toBeGreaterThan(0);
    expect(end.slackCalls - half.slackCalls).toBe(half.slackCalls - first.slackCalls);
    expect(end.alerts.firing).toBe(half.alerts.firing);
    expect(end.alerts.firing).toBe(first.alerts.firing);
  });
});

type SoakResultPoint = SoakResult['checkpoints'][number];
