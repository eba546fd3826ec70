import { describe, expect, it } from 'vitest';
import { DEMO_HISTORY, pastQueue } from '../../src/demo/history.js';
import type { QueueSample } from '../../src/escalation/samples.js';

const NOW = Date.parse('2026-12-03T00:23:00Z');
const options = { ...DEMO_HISTORY, now: NOW };

/** The demo's dispatch-ios as the first real sample sees it: 152 failures just seeded. */
const today: QueueSample = {
  name: 'dispatch-ios',
  waiting: 485,
  active: 0,
  delayed: 18,
  failed: 152,
  oldestWaitingSeconds: 2520,
  workers: 0,
  throughput: 40,
  failedPerMinute: 152,
};

/** The back-filled samples of the demo's 3 hours, oldest first. */
const history = () => {
  const out: QueueSample[] = [];
  for (let at = NOW - options.hours * 3_600_000; at < NOW; at += options.stepMs)
    out.push(pastQueue(today, at, options));
  return out;
};

describe("the demo's back-filled history", () => {
  it("derives failed/min from how the back-filled failed set grows, not today's rate copied into every sample", () => {
    const past = history();
    const failing = past.map((q) => q.failedPerMinute!);
    expect(failing.every((r) => r < today.failedPerMinute!)).toBe(true);
    expect(new Set(failing).size).toBeGreaterThan(1);
    for (let i = 1; i < past.length; i++)
      expect(failing[i]).toBe(Math.max(0, past[i]!.failed - past[i - 1]!.failed));
    // Calm before the backlog: nothing new failing.
    expect(failing.slice(0, 60).every((r) => r === 0)).toBe(true);
  });

  it('done/min varies with how busy the queue was, today’s at most', () => {
    const done = history().map((q) => q.throughput!);
    expect(new Set(done).size).toBeGreaterThan(10);
    expect(Math.max(...done)).toBeLessThanOrEqual(today.throughput! * 1.1);
    expect(Math.min(...done)).toBeLessThan(today.throughput! * 0.6);
  });

  it('a rate not known today stays not known in the past', () => {
    const { throughput: _t, failedPerMinute: _f, ...unknown } = today;
    const past = pastQueue(unknown, NOW - 3_600_000, options);
    expect(past).not.toHaveProperty('throughput');
    expect(past).not.toHaveProperty('failedPerMinute');
  });
});
