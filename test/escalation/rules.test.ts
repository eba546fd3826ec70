import { describe, expect, it } from 'vitest';
import type { SystemStatus } from '../../src/backends/queue-backend.js';
import { configSchema, type EscalationRule } from '../../src/config/schema.js';
import {
  type Alert,
  type AlertEffect,
  ackAlert,
  advanceAlert,
  type LifecycleSettings,
  snoozeAlert,
} from '../../src/escalation/lifecycle.js';
import {
  evaluateRules,
  newRuleMemory,
  patternMatcher,
  patternRegExp,
  type RuleResult,
} from '../../src/escalation/rules.js';
import { toSystemSample } from '../../src/escalation/sampler.js';
import type { QueueSample, Sample, SystemSample } from '../../src/escalation/samples.js';

const T0 = Date.parse('2030-01-01T10:00:00.000Z');
const STEP = 30_000;

function parseRules(rules: unknown[]): EscalationRule[] {
  return configSchema.parse({
    systems: [{ name: 'pushizo', type: 'bullmq', redis: 'redis://x' }],
    escalation: { rules },
  }).escalation.rules;
}

function queue(name: string, fields: Partial<QueueSample> = {}): QueueSample {
  return {
    name,
    waiting: 0,
    active: 0,
    delayed: 0,
    failed: 0,
    oldestWaitingSeconds: null,
    workers: 1,
    ...fields,
  };
}

function system(name: string, fields: Partial<SystemSample> = {}): SystemSample {
  return {
    name,
    type: 'bullmq',
    ok: true,
    memory: { used: 100, max: 1000, policy: 'noeviction' },
    workers: ['w1'],
    queues: [],
    ...fields,
  };
}

/** One sample per tick of 30 s, built from a function of the tick number. */
function history(ticks: number, build: (tick: number) => SystemSample[]): Sample[] {
  return Array.from({ length: ticks }, (_, tick) => ({ at: T0 + tick * STEP, systems: build(tick) }));
}

const at = (tick: number) => T0 + tick * STEP;

describe('rule evaluation (pure, controlled clock)', () => {
  /** A `dlq` rule on `pushizo/dispatch-*` without `for`, over one sample of two queues past it. */
  const firstSampleOverDlq = () => {
    const rules = parseRules([
      { name: 'dlq', queues: ['pushizo/dispatch-*'], metric: 'failed', above: 10, severity: 'warning' },
    ]);
    const samples = history(1, () => [
      system('pushizo', { queues: [queue('dispatch-ios', { failed: 11 }), queue('events', { failed: 99 })] }),
    ]);
    return evaluateRules(rules, samples, at(0));
  };

  it('a rule without `for` fires on the first sample over its threshold', () => {
    const results = firstSampleOverDlq();
    expect(results.map((r) => [r.subject, r.firing])).toEqual([['pushizo/dispatch-ios', true]]);
  });

  it('a rule’s queue patterns match system/queue', () => {
    expect(firstSampleOverDlq().map((r) => r.subject)).toEqual(['pushizo/dispatch-ios']);
  });

  it('`for: 2m` fires only once the breach has lasted two minutes, and a dip restarts the window', () => {
    const rules = parseRules([
      { name: 'backlog', metric: 'waiting', above: 100, for: '2m', severity: 'critical' },
    ]);
    // Over from tick 1; one dip at tick 3; over again from tick 4.
    const waiting = [0, 500, 500, 50, 500, 500, 500, 500, 500];
    const samples = history(waiting.length, (t) => [
      system('pushizo', { queues: [queue('q', { waiting: waiting[t]! })] }),
    ]);
    const firingAt = waiting.map((_, t) => evaluateRules(rules, samples.slice(0, t + 1), at(t))[0]!.firing);
    // Tick 4 + 4 samples of 30 s = 2 minutes: first fires at tick 8.
    expect(firingAt).toEqual([false, false, false, false, false, false, false, false, true]);
  });

  it('a monitor remembering where each breach began, tick after tick, decides exactly as one reading it all afresh', () => {
    const rules = parseRules([
      {
        name: 'backlog',
        queues: ['pushizo/*'],
        metric: 'waiting',
        above: 100,
        for: '2m',
        severity: 'critical',
      },
      {
        name: 'stuck',
        queues: ['pushizo/*'],
        metric: 'minutesToDrain',
        above: 60,
        for: '1m',
        severity: 'warning',
      },
      { name: 'down', metric: 'unreachableSamples', above: 0, for: '1m', severity: 'critical' },
    ]);
    // Breaches that begin, dip, come back and last; Redis unreachable for a while; q-c appears late.
    const waiting = (q: number, t: number) =>
      [t % 9 === 4 ? 50 : 500, t < 6 ? 0 : 300 + t, t > 20 ? 999 : 0][q]! + (t % 5 === 0 ? 1 : 0);
    const samples = history(40, (t) => [
      system('pushizo', {
        ok: t < 14 || t > 17,
        queues: ['q-a', 'q-b', ...(t > 20 ? ['q-c'] : [])].map((name, q) =>
          queue(name, { waiting: waiting(q, t) }),
        ),
      }),
    ]);
    // The window the monitor keeps: the samples of the last 5 minutes, older ones pruned.
    const kept = (t: number) => samples.slice(Math.max(0, t - 9), t + 1);
    const memory = newRuleMemory();
    // A second monitor's results are read only after its next evaluation: what they read lazily
    // (clean run, series) is theirs, not moved by the subjects carried into the next one.
    const lateMemory = newRuleMemory();
    let unread: { results: RuleResult[]; expected: string; t: number } | undefined;
    for (let t = 0; t < samples.length; t++) {
      // A tick that was not evaluated (t = 31, when q-a dips) makes the next history not the
      // previous one plus a sample: nothing of it is reused.
      if (t === 31) continue;
      const remembered = evaluateRules(rules, kept(t), at(t), { memory });
      const afresh = evaluateRules(rules, kept(t), at(t));
      const readLate = evaluateRules(rules, kept(t), at(t), { memory: lateMemory });
      if (unread) expect(JSON.stringify(unread.results), `tick ${unread.t}, read late`).toBe(unread.expected);
      unread = { results: readLate, expected: JSON.stringify(afresh), t };
      expect(JSON.parse(JSON.stringify(remembered)), `tick ${t}`).toEqual(JSON.parse(JSON.stringify(afresh)));
      // What a monitor asks for: those firing, and those of its open alerts (here q-b's backlog).
      const open = new Set(['backlog|pushizo/q-b']);
      const asked = evaluateRules(rules, kept(t), at(t), { memory: newRuleMemory(), only: open });
      expect(JSON.parse(JSON.stringify(asked)), `tick ${t}`).toEqual(
        JSON.parse(JSON.stringify(afresh.filter((r) => r.firing || open.has(r.key)))),
      );
    }
    // Along the way each rule fires, and stops (a dip, Redis back, a queue draining).
    const firing = (t: number) =>
      evaluateRules(rules, kept(t), at(t))
        .filter((r) => r.firing)
        .map((r) => r.key);
    expect(firing(12)).toContain('backlog|pushizo/q-a');
    expect(firing(13)).not.toContain('backlog|pushizo/q-a');
    expect(firing(16)).toEqual(['down|pushizo']);
    expect(firing(19)).toEqual([]);
    expect(firing(27)).toContain('backlog|pushizo/q-c');
  });

  it('gives the clean run, the last 12 values and the time to drain of every subject, read or serialized alike', () => {
    const rules = parseRules([
      {
        name: 'backlog',
        queues: ['pushizo/*'],
        metric: 'waiting',
        above: 100,
        for: '1m',
        severity: 'critical',
      },
    ]);
    // q-a: over for good from tick 2, draining 10 a tick; q-b: over until tick 9, then under for 6 ticks.
    const samples = history(16, (t) => [
      system('pushizo', {
        queues: [
          queue('q-a', { waiting: t < 2 ? 50 : 500 - 10 * t }),
          queue('q-b', { waiting: t < 10 ? 300 : 20 }),
        ],
      }),
    ]);
    const results = evaluateRules(rules, samples, at(15));
    const [a, b] = results;
    expect([a!.subject, a!.breachNow, a!.firing, a!.cleanRun]).toEqual(['pushizo/q-a', true, true, 0]);
    expect(a!.series).toEqual(Array.from({ length: 12 }, (_, i) => 500 - 10 * (i + 4)));
    // 350 waiting, 10 fewer every 30 s: 17.5 minutes.
    expect(a!.minutesToDrain).toBeCloseTo(17.5, 5);
    expect([b!.subject, b!.breachNow, b!.firing, b!.cleanRun]).toEqual(['pushizo/q-b', false, false, 6]);
    expect(b!.series).toEqual([300, 300, 300, 300, 300, 300, 20, 20, 20, 20, 20, 20]);
    // What is stored and logged: the same fields as plain values.
    expect(JSON.parse(JSON.stringify(results))).toEqual([
      expect.objectContaining({
        subject: 'pushizo/q-a',
        cleanRun: 0,
        series: a!.series,
        minutesToDrain: a!.minutesToDrain,
      }),
      expect.objectContaining({ subject: 'pushizo/q-b', cleanRun: 6, series: b!.series }),
    ]);
  });

  it('`within: 5m` counts failures added over the last five minutes, not since the beginning', () => {
    const rules = parseRules([
      { name: 'dlq-growth', metric: 'failedIncrease', above: 100, within: '5m', severity: 'warning' },
    ]);
    // +30 per tick: 10 ticks (5 min) add 300; a burst of 200 at tick 12.
    const failed = (t: number) => (t <= 11 ? t * 5 : 55 + 200);
    const samples = history(14, (t) => [system('pushizo', { queues: [queue('q', { failed: failed(t) })] })]);
    const value = (t: number) => evaluateRules(rules, samples.slice(0, t + 1), at(t))[0]!.value;
    expect(value(11)).toBe(50);
    expect(evaluateRules(rules, samples.slice(0, 12), at(11))[0]!.firing).toBe(false);
    expect(value(12)).toBe(255 - 5 * 2);
    expect(evaluateRules(rules, samples.slice(0, 13), at(12))[0]!.firing).toBe(true);
    expect(value(0)).toBeUndefined();
  });

  it('failedIncrease counts failures by when they failed, so a failed set capped at 5000 still shows them', () => {
    const rules = parseRules([
      { name: 'dlq-growth', metric: 'failedIncrease', above: 100, within: '5m', severity: 'warning' },
    ]);
    // removeOnFail keeps the set at 5000; 40 new failures per tick push the oldest out.
    const samples = history(12, (t) => [
      system('pushizo', { queues: [queue('q', { failed: 5000, ...(t > 0 ? { failedNew: 40 } : {}) })] }),
    ]);
    const result = (t: number) => evaluateRules(rules, samples.slice(0, t + 1), at(t))[0]!;
    // Two ticks: 80 new, under 100. Ten ticks (the 5 minute window): 400.
    expect(result(2)).toMatchObject({ value: 80, firing: false });
    expect(result(11)).toMatchObject({ value: 400, firing: true });
    // The same history counted by the set's size alone sees nothing.
    const blind = samples.map((sample) => ({
      ...sample,
      systems: sample.systems.map((sys) => ({
        ...sys,
        queues: sys.queues.map(({ failedNew: _n, ...q }) => q),
      })),
    }));
    expect(evaluateRules(rules, blind, at(11))[0]!).toMatchObject({ value: 0, firing: false });
  });

  it('drainRate and minutesToDrain come from successive samples', () => {
    const rules = parseRules([{ name: 'drain', metric: 'minutesToDrain', above: 30, severity: 'warning' }]);
    const samples = history(3, (t) => [
      system('pushizo', { queues: [queue('q', { waiting: [1000, 900, 900][t]! })] }),
    ]);
    // 100 jobs in 30 s = 200/min: 900 left is 4.5 minutes.
    expect(evaluateRules(rules, samples.slice(0, 2), at(1))[0]!.value).toBeCloseTo(4.5);
    const stuck = evaluateRules(rules, samples, at(2))[0]!;
    expect(stuck.value).toBe(Number.POSITIVE_INFINITY);
    expect(stuck.firing).toBe(true);
    expect(stuck.minutesToDrain).toBe(Number.POSITIVE_INFINITY);
  });

  it('worker churn: workers appearing and disappearing between samples (a crash loop) fires', () => {
    const rules = parseRules([{ name: 'crash-loop', metric: 'workerChurn', above: 3, within: '2m' }]);
    const steady = history(6, () => [system('zeus', { type: 'celery', workers: ['w1@a', 'w2@a'] })]);
    expect(evaluateRules(rules, steady, at(5))[0]!).toMatchObject({
      subject: 'zeus',
      value: 0,
      firing: false,
    });
    // w2 dies and comes back every other sample.
    const looping = history(6, (t) => [
      system('zeus', { type: 'celery', workers: t % 2 ? ['w1@a'] : ['w1@a', 'w2@a'] }),
    ]);
    expect(evaluateRules(rules, looping, at(5))[0]!).toMatchObject({ value: 4, firing: true });
  });

  it("counts a queue's workers: those listing it once each, and those listing no queue", () => {
    const queue = (name: string) => ({ name, waiting: 1, prioritized: 0, active: 0, delayed: 0, failed: 0 });
    const sample = toSystemSample(
      {
        name: 'zeus',
        type: 'celery',
        warnings: [],
        queues: [queue('alarms'), queue('mail'), queue('idle')],
        redis: { usedMemoryBytes: 1, maxMemoryBytes: 0, maxMemoryPolicy: 'noeviction' },
        workers: [
          { name: 'celery@a', queues: ['alarms', 'alarms', 'mail'] },
          { name: 'celery@b', queues: ['alarms'] },
          { name: 'celery@any' },
        ],
      } as unknown as SystemStatus,
      undefined,
      at(0),
    );
    expect(sample.queues.map((q) => [q.name, q.workers])).toEqual([
      ['alarms', 3],
      ['mail', 2],
      ['idle', 1],
    ]);
  });

  it('a Celery worker that comes back under its name with a new pid between samples is churn too', () => {
    const status = (pid: number) =>
      ({
        name: 'zeus',
        type: 'celery',
        warnings: [],
        queues: [],
        redis: { usedMemoryBytes: 1, maxMemoryBytes: 0, maxMemoryPolicy: 'noeviction' },
        workers: [{ name: 'celery@zeus-1', details: { pid, concurrency: 4 } }],
      }) as unknown as SystemStatus;
    const first = toSystemSample(status(101), undefined, at(0));
    const restarted = toSystemSample(status(202), first, at(1));
    const same = toSystemSample(status(202), restarted, at(2));
    expect(restarted.workers).not.toEqual(first.workers);
    expect(same.workers).toEqual(restarted.workers);
    const rules = parseRules([{ name: 'crash-loop', metric: 'workerChurn', above: 1, within: '2m' }]);
    // Restarted every other sample under the same name.
    const looping = history(6, (t) => [toSystemSample(status(1000 + Math.floor(t / 2)), undefined, at(t))]);
    expect(evaluateRules(rules, looping, at(5))[0]!).toMatchObject({ subject: 'zeus', firing: true });
  });

  it('a Celery worker restarted with the same pid (a container restarted by Compose) is churn, by its uptime', () => {
    const status = (uptimeSeconds?: number) =>
      ({
        name: 'zeus',
        type: 'celery',
        warnings: [],
        queues: [],
        redis: { usedMemoryBytes: 1, maxMemoryBytes: 0, maxMemoryPolicy: 'noeviction' },
        workers: [
          {
            name: 'celery@zeus-1',
            details: { pid: 7, ...(uptimeSeconds === undefined ? {} : { uptimeSeconds }) },
          },
        ],
      }) as unknown as SystemStatus;
    // Samples a minute apart: up 100 s, then 160 s (the same process), then 20 s (started anew, pid 7 again).
    const first = toSystemSample(status(100), undefined, at(0), undefined);
    const same = toSystemSample(status(100 + (at(1) - at(0)) / 1000), first, at(1), at(0));
    const restarted = toSystemSample(status(20), same, at(2), at(1));
    const unanswered = toSystemSample(status(), restarted, at(3), at(2));
    const later = toSystemSample(status(20 + (at(4) - at(2)) / 1000), unanswered, at(4), at(3));
    expect(same.workers).toEqual(first.workers);
    expect(restarted.workers).not.toEqual(same.workers);
    // A tick whose stats did not answer keeps the identity; the process living on keeps it too.
    expect(unanswered.workers).toEqual(restarted.workers);
    expect(later.workers).toEqual(restarted.workers);
  });

  describe('a paused queue', () => {
    const rules = parseRules([
      { name: 'no-workers', metric: 'workers', below: 1 },
      { name: 'backlog', metric: 'waiting', above: 10 },
      {
        name: 'watch-paused',
        queues: ['pushizo/maintenance'],
        metric: 'workers',
        below: 1,
        includePaused: true,
      },
    ]);

    it('is skipped by every rule unless it says includePaused', () => {
      const samples = history(1, () => [
        system('pushizo', {
          queues: [
            queue('maintenance', { waiting: 50, workers: 0, paused: true }),
            queue('events', { waiting: 50, workers: 0 }),
          ],
        }),
      ]);
      const firing = evaluateRules(rules, samples, at(0))
        .filter((r) => r.firing)
        .map((r) => `${r.rule.name} ${r.subject}`);
      expect(firing).toEqual([
        'no-workers pushizo/events',
        'backlog pushizo/events',
        'watch-paused pushizo/maintenance',
      ]);
    });

    it('clears a firing alert once paused', () => {
      // Paused after it fired: the paused samples count as clean, toward `clearAfterSamples`.
      const paused = history(3, (t) => [
        system('pushizo', {
          queues: [queue('events', { waiting: 50, workers: 0, ...(t > 0 ? { paused: true } : {}) })],
        }),
      ]);
      expect(evaluateRules(rules.slice(0, 1), paused, at(2))[0]).toMatchObject({
        firing: false,
        cleanRun: 2,
      });
    });
  });

  it('the sampler marks a paused queue', () => {
    const status = {
      name: 'pushizo',
      type: 'bullmq',
      warnings: [],
      redis: { usedMemoryBytes: 1, maxMemoryBytes: 0, maxMemoryPolicy: 'noeviction' },
      workers: [],
      queues: [
        { name: 'maintenance', waiting: 3, prioritized: 0, active: 0, delayed: 0, failed: 0, isPaused: true },
        { name: 'events', waiting: 3, prioritized: 0, active: 0, delayed: 0, failed: 0, isPaused: false },
      ],
    } as unknown as SystemStatus;
    const sample = toSystemSample(status, undefined, at(0));
    expect(sample.queues.map((q) => [q.name, q.paused ?? false])).toEqual([
      ['maintenance', true],
      ['events', false],
    ]);
  });

  describe('system rules and no workers', () => {
    const rules = parseRules([
      { name: 'no-workers', metric: 'workers', below: 1 },
      { name: 'down', metric: 'unreachableSamples', above: 2 },
      { name: 'evict', metric: 'evictionPolicy', above: 0 },
      { name: 'mem', metric: 'redisMemoryRatio', above: 0.9 },
    ]);
    /** The keys firing on one sample: an evicting policy, memory at 95%, an idle and a stuck queue. */
    const firingOnOneSample = () =>
      evaluateRules(
        rules,
        history(1, () => [
          system('pushizo', {
            memory: { used: 950, max: 1000, policy: 'allkeys-lru' },
            queues: [queue('idle', { workers: 0 }), queue('stuck', { workers: 0, waiting: 5 })],
          }),
        ]),
        at(0),
      )
        .filter((r) => r.firing)
        .map((r) => r.key)
        .sort();

    it('no workers only fires while jobs wait', () => {
      expect(firingOnOneSample().filter((key) => key.startsWith('no-workers|'))).toEqual([
        'no-workers|pushizo/stuck',
      ]);
    });

    it('an evicting maxmemory policy fires', () => {
      expect(firingOnOneSample()).toContain('evict|pushizo');
    });

    it('one sample fires exactly the rules it breaches', () => {
      expect(firingOnOneSample()).toEqual(['evict|pushizo', 'mem|pushizo', 'no-workers|pushizo/stuck']);
    });

    it('unreachable counts samples in a row', () => {
      const down = history(4, (t) => [system('pushizo', t === 0 ? {} : { ok: false, queues: [] })]);
      expect(evaluateRules(rules, down.slice(0, 3), at(2)).find((r) => r.rule.name === 'down')!.firing).toBe(
        false,
      );
      expect(evaluateRules(rules, down, at(3)).find((r) => r.rule.name === 'down')!).toMatchObject({
        value: 3,
        firing: true,
      });
    });
  });

  it('a rule on failed samples with `within` counts them in the window (k of n), not only a run', () => {
    // A link that flaps: every other sample unreadable, never three in a row.
    const flapping = history(10, (t) => [system('pushizo', t % 2 === 1 ? { ok: false, queues: [] } : {})]);
    const rules = parseRules([
      { name: 'down', metric: 'unreachableSamples', above: 2 },
      { name: 'flaky', metric: 'unreachableSamples', above: 2, within: '5m' },
      { name: 'redis-network', metric: 'networkUnstableSamples', above: 2, within: '5m' },
    ]);
    const results = evaluateRules(rules, flapping, at(9));
    const of = (name: string) => results.find((r) => r.rule.name === name);
    expect(of('down')?.firing ?? false).toBe(false);
    expect(of('flaky')).toMatchObject({ value: 5, firing: true });
    // An unreadable sample counts as unstable too.
    expect(of('redis-network')).toMatchObject({ value: 5, firing: true });
    // Only the window counts: the same flapping 10 minutes earlier is forgotten.
    const calm = [
      ...flapping,
      ...history(11, () => [system('pushizo')])
        .slice(0)
        .map((s, i) => ({ ...s, at: at(10 + i) })),
    ];
    expect(evaluateRules(rules, calm, at(20)).find((r) => r.rule.name === 'flaky')?.firing ?? false).toBe(
      false,
    );
  });

  it('redis-network counts samples whose network part shows a signal', () => {
    const signals = (t: number) => (t >= 7 ? ['reconnects'] : []);
    const samples = history(10, (t) => [
      system('pushizo', {
        network: {
          rttP50Ms: 0.3,
          rttP95Ms: 0.5,
          rttMaxMs: 0.5,
          pings: 3,
          received: t,
          rejected: 0,
          clients: 3,
          signals: signals(t),
        },
      }),
    ]);
    const rules = configSchema.parse({ systems: [{ name: 'pushizo', type: 'bullmq', redis: 'redis://x' }] })
      .escalation.rules;
    const results = evaluateRules(rules, samples, at(9));
    expect(results.find((r) => r.rule.name === 'redis-network')).toMatchObject({
      value: 3,
      firing: true,
      rule: { severity: 'warning' },
    });
    expect(
      evaluateRules(rules, samples.slice(0, 9), at(8)).find((r) => r.rule.name === 'redis-network')?.firing ??
        false,
    ).toBe(false);
  });

  it('the defaults come from the seeds: backlog over 100,000, alarms 30 min late, Redis memory', () => {
    const rules = configSchema.parse({ systems: [{ name: 'zeus', type: 'celery', redis: 'redis://x' }] })
      .escalation.rules;
    expect(rules.find((r) => r.name === 'backlog')).toMatchObject({
      metric: 'waiting',
      above: 100_000,
      for: 120_000,
    });
    expect(rules.find((r) => r.name === 'alarm-latency')).toMatchObject({
      queues: ['*/celery:alarm_processing'],
      above: 1800,
    });
    expect(rules.find((r) => r.name === 'redis-memory')).toMatchObject({ above: 0.9 });
  });

  it('a bad rule is named by its path with what would be valid', () => {
    const parsed = configSchema.safeParse({
      systems: [{ name: 'zeus', type: 'celery', redis: 'redis://x' }],
      escalation: { rules: [{ name: 'x', metric: 'depth', above: 1, for: '2 minutes' }] },
    });
    const lines = parsed.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
    expect(lines).toContain('escalation.rules.0.for: expected a duration like 30s, 2m or 1h');
    expect(lines.some((l) => l.startsWith('escalation.rules.0.metric: expected one of: waiting'))).toBe(true);
  });
});

/** Runs rules + lifecycle tick by tick over a history, as the monitor does, collecting effects. */
function simulate(
  rulesInput: unknown[],
  samples: Sample[],
  settings: LifecycleSettings,
  between: (tick: number, alert: Alert | undefined) => Alert | undefined = (_, a) => a,
) {
  const rules = parseRules(rulesInput);
  let open: Alert | undefined;
  let resolved: Alert | undefined;
  let ids = 0;
  const log: { tick: number; effects: AlertEffect[]; alert?: Alert }[] = [];
  samples.forEach((_, tick) => {
    open = between(tick, open);
    const [result] = evaluateRules(rules, samples.slice(0, tick + 1), samples[tick]!.at);
    if (!result) return;
    const step = advanceAlert(open, resolved, result, samples[tick]!.at, settings, () => `a-${++ids}`);
    if (step.alert?.status === 'resolved') {
      resolved = step.alert;
      open = undefined;
    } else open = step.alert;
    if (step.effects.length) log.push({ tick, effects: step.effects, alert: step.alert });
  });
  return { log, open, resolved };
}

const kinds = (effects: AlertEffect[]) =>
  effects.map((e) => (e.kind === 'thread' ? `thread:${e.reason}` : e.kind));
const settings: LifecycleSettings = {
  renotifyMinutes: 2,
  escalateAfterMinutes: 3,
  escalateTo: ['S0PLATFORM'],
  clearAfterSamples: 2,
};

describe('queue patterns', () => {
  it('match exactly what their regular expression matches', () => {
    const patterns = [
      '*',
      'zeus/*',
      '*/scheduler',
      'zeus/celery:*_processing',
      'ab*ba',
      'a*b*c',
      'zeus/alarms',
      'x.y/*',
    ];
    const paths = [
      'zeus/alarms',
      'zeus/celery:alarm_processing',
      'pushizo/scheduler',
      'scheduler',
      'aba',
      'abba',
      'abxba',
      'abc',
      'axbyc',
      'x.y/q',
      'xzy/q',
      '',
    ];
    for (const pattern of patterns)
      for (const path of paths)
        expect([pattern, path, patternMatcher(pattern)(path)]).toEqual([
          pattern,
          path,
          patternRegExp(pattern).test(path),
        ]);
  });
});

describe('alert lifecycle (pure, controlled clock)', () => {
  const backlog = [{ name: 'backlog', metric: 'waiting', above: 100, severity: 'critical' }];
  const series = (values: number[]) =>
    history(values.length, (t) => [system('pushizo', { queues: [queue('q', { waiting: values[t]! })] })]);

  it('fires once, updates as values change, reminds every renotifyMinutes, escalates once, resolves after clearAfterSamples', () => {
    const values = [0, 200, 300, 300, 300, 300, 300, 300, 300, 300, 50, 50, 50];
    const { log, resolved } = simulate(backlog, series(values), settings);
    expect(log.map((l) => [l.tick, kinds(l.effects)])).toEqual([
      [1, ['post']],
      [2, ['update']],
      // 2 minutes (4 ticks) after the post: a reminder in the thread.
      [5, ['thread:renotify']],
      // 3 minutes after opening: escalateTo is mentioned, once; the message shows it.
      [7, ['update', 'thread:escalate']],
      [9, ['thread:renotify']],
      // One sample back under: "clearing 1/2" shown; the second resolves it.
      [10, ['update']],
      [11, ['update']],
    ]);
    expect(resolved).toMatchObject({
      id: 'a-1',
      status: 'resolved',
      worst: 300,
      openedAt: new Date(at(1)).toISOString(),
    });
    const escalate = log.find((l) => l.tick === 7)!.effects[1];
    expect(escalate).toMatchObject({ mention: ['S0PLATFORM'] });
  });

  it('a value flapping at the threshold keeps one message: it never clears, and a re-breach soon after reopens it', () => {
    const flapping = Array.from({ length: 12 }, (_, t) => (t % 2 ? 101 : 99));
    const { log } = simulate(backlog, series([0, ...flapping]), { ...settings, renotifyMinutes: 30 });
    expect(log.filter((l) => l.effects.some((e) => e.kind === 'post'))).toHaveLength(1);
    // Slower flapping, crossing out and back within renotifyMinutes, reopens the same alert.
    const slow = [200, 50, 50, 200, 50, 50, 200];
    const again = simulate(backlog, series(slow), { ...settings, renotifyMinutes: 30 });
    expect(again.log.map((l) => kinds(l.effects))).toEqual([
      ['post'],
      ['update'],
      ['update'],
      ['update', 'thread:reopened'],
      ['update'],
      ['update'],
      ['update', 'thread:reopened'],
    ]);
    expect(new Set(again.log.map((l) => l.alert?.id))).toEqual(new Set(['a-1']));
  });

  it('an acknowledged alert neither reminds nor escalates, but still resolves', () => {
    const values = [200, 200, 200, 200, 200, 200, 200, 200, 200, 0, 0];
    const { log } = simulate(backlog, series(values), settings, (tick, alert) =>
      tick === 1 && alert ? ackAlert(alert, 'U0ALICE', at(1)).alert : alert,
    );
    // Post; then only the clearing and resolved updates (the ack's own update is the command's).
    expect(log.map((l) => [l.tick, kinds(l.effects)])).toEqual([
      [0, ['post']],
      [9, ['update']],
      [10, ['update']],
    ]);
  });

  it('a snooze silences reminders until it expires, then the thread hears it is still firing', () => {
    const values = Array.from({ length: 14 }, () => 200);
    const { log } = simulate(backlog, series(values), { ...settings, escalateTo: [] }, (tick, alert) =>
      tick === 1 && alert ? snoozeAlert(alert, 'U0ALICE', at(1) + 4 * 60_000, at(1)).alert : alert,
    );
    // Snoozed at tick 1 for 4 minutes (8 ticks; the snooze's own update is the command's): no
    // reminder at tick 4; at tick 9 the snooze ends, and reminders run from there.
    expect(log.map((l) => [l.tick, kinds(l.effects)])).toEqual([
      [0, ['post']],
      [9, ['update', 'thread:snooze-over']],
      [13, ['thread:renotify']],
    ]);
  });

  it('an unreachable system changes nothing: an open alert neither updates nor resolves', () => {
    const rules = [{ name: 'backlog', metric: 'waiting', above: 100 }];
    const samples = history(6, (t) => [
      t < 2
        ? system('pushizo', { queues: [queue('q', { waiting: 500 })] })
        : system('pushizo', { ok: false, queues: [] }),
    ]);
    const { log, open } = simulate(rules, samples, settings);
    expect(log.map((l) => kinds(l.effects))).toEqual([['post']]);
    expect(open?.status).toBe('firing');
  });
});
