import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { groupErrors } from '../../src/backends/error-groups.js';
import { whyMessage } from '../../src/diagnosis/blocks.js';
import { diagnose } from '../../src/diagnosis/engine.js';
import { errorKind, groupFailures } from '../../src/diagnosis/error-kind.js';
import { historyOf, pastOf } from '../../src/diagnosis/gather.js';
import { noteCause, notesAgainst } from '../../src/diagnosis/notes.js';
import { CAUSE_IDS, type Evidence, type QueueNow } from '../../src/diagnosis/types.js';
import { evidenceText } from '../../src/diagnosis/words.js';
import { encodeSample, type NetworkSample, type Sample } from '../../src/escalation/samples.js';
import { messages } from '../../src/i18n/index.js';

const NOW = Date.parse('2026-03-01T03:20:00Z');

function queue(name: string, more: Partial<QueueNow> = {}): QueueNow {
  return {
    name,
    waiting: 0,
    active: 0,
    delayed: 0,
    failed: 0,
    paused: false,
    workers: 1,
    oldestWaitingSeconds: null,
    completedPerMinute: 10,
    failedPerMinute: 0,
    runP95Seconds: null,
    ...more,
  };
}

/** What a Celery and a BullMQ backend offer as fixes (`fixOffersOf` of each). */
const CELERY_OFFERS: Evidence['offers'] = { stopStuck: 'revoke', limitTarget: 'task', expireResults: true };
const BULLMQ_OFFERS: Evidence['offers'] = { stopStuck: 'fail', limitTarget: 'queue', expireResults: false };

function evidence(more: Partial<Evidence> = {}): Evidence {
  return {
    system: 'zeus',
    type: 'celery',
    offers: CELERY_OFFERS,
    now: NOW,
    stuckAfterMinutes: 30,
    queues: [queue('celery:alarm_processing')],
    workers: [{ name: 'celery@w1', active: 1, concurrency: 4 }],
    running: [],
    retrying: { sampled: 10, tasks: [] },
    failures: [],
    waitingNames: [],
    redis: {
      usedBytes: 1e6,
      maxBytes: 1e9,
      policy: 'noeviction',
      uptimeSeconds: 86_400,
      evictedKeys: 0,
      oomRejections: 0,
      connectionsReceived: 10,
      rejectedConnections: 0,
      connectedClients: 5,
      loading: false,
      keysLoaded: null,
      roundTripMs: 1,
    },
    history: [],
    historyRead: true,
    groups: [],
    pauses: new Map(),
    escalateTo: [],
    owners: new Map(),
    ...more,
  };
}

describe('diagnose: the verdict follows the checks', () => {
  it('healthy when every check finds nothing, with every cause checked', () => {
    const d = diagnose(evidence());
    expect(d.verdict).toBe('healthy');
    expect(d.checked.map((c) => c.id).sort()).toEqual([...CAUSE_IDS].sort());
  });

  it('unclear when a check cannot run, and the check says why', () => {
    const d = diagnose(evidence({ workers: null }));
    expect(d.verdict).toBe('unclear');
    expect(d.checked.find((c) => c.id === 'no-workers')).toEqual({
      id: 'no-workers',
      result: 'unknown',
      reason: 'workersNotAsked',
    });
  });

  it('a cause with its queues, evidence, fixes; restart and scale offered only for a group that names the queue', () => {
    const e = evidence({
      queues: [queue('celery:alarm_processing', { waiting: 1500, workers: 0, oldestWaitingSeconds: 300 })],
      workers: [],
      groups: [
        { name: 'alarms', queues: ['celery:alarm_processing'], min: 1, max: 4, current: 2 },
        { name: 'ota', queues: ['celery:ota_processing'], min: 1, max: 4, current: 2 },
      ],
      escalateTo: ['S0ONCALL'],
    });
    const d = diagnose(e);
    expect(d.verdict).toBe('cause');
    expect(d.causes[0]).toMatchObject({
      id: 'no-workers',
      confidence: 'strong',
      queues: ['celery:alarm_processing'],
    });
    expect(d.causes[0]!.fixes.map((f) => f.words.join(' '))).toEqual([
      'restart zeus/alarms',
      'scale zeus/alarms 3',
    ]);
  });

  it('a backlog explained by a strong burst is not also strongly short of capacity', () => {
    const past = (at: number, waiting: number) => ({
      at,
      ok: true,
      workers: ['w1|127.0.0.1:5000'],
      queues: new Map([
        ['events', { waiting, active: 4, delayed: 0, failed: 0, workers: 1, completedPerMinute: 100 }],
      ]),
    });
    const e = evidence({
      type: 'bullmq',
      offers: BULLMQ_OFFERS,
      queues: [
        queue('events', { waiting: 9000, active: 4, completedPerMinute: 100, oldestWaitingSeconds: 40 }),
      ],
      workers: [{ name: 'w1', active: 4, concurrency: 4 }],
      history: [
        past(NOW - 240_000, 10),
        past(NOW - 180_000, 20),
        past(NOW - 120_000, 40),
        past(NOW - 60_000, 80),
      ],
      waitingNames: [{ queue: 'events', sampled: 10, names: [{ name: 'track', count: 10 }] }],
    });
    const d = diagnose(e);
    expect(d.causes.map((c) => [c.id, c.confidence])).toEqual([
      ['task-burst', 'strong'],
      ['no-capacity', 'possible'],
    ]);
  });

  it('no-workers tells a drop in workers as one, and as many as before not as a loss', () => {
    const past = (at: number, workers: string[]) => ({ at, ok: true, workers, queues: new Map() });
    const starving = [
      queue('celery:alarm_processing', { waiting: 1500, workers: 0, oldestWaitingSeconds: 300 }),
    ];
    const workersLine = (history: ReturnType<typeof past>[], now: string[]) => {
      const e = evidence({
        queues: starving,
        workers: now.map((name) => ({ name, active: 0, concurrency: 4 })),
        history,
      });
      const found = diagnose(e).causes.find((c) => c.id === 'no-workers')!;
      return found.evidence.map((l) => evidenceText(l, NOW, 'en', 'plain')).find((t) => t.includes('now'));
    };
    // The one worker (consuming other queues) was there all along.
    expect(
      workersLine([past(NOW - 60_000, ['celery@w1|1']), past(NOW - 30_000, ['celery@w1|1'])], ['celery@w1']),
    ).toBe('1 worker answers now, no fewer than in recent samples');
    // Two answered a minute ago; one does now.
    expect(
      workersLine(
        [past(NOW - 60_000, ['celery@w1|1', 'celery@w2|2']), past(NOW - 30_000, ['celery@w1|1'])],
        ['celery@w1'],
      ),
    ).toBe('1 worker answers now; recent samples had up to 2');
  });

  it('redis-network reads the samples: failed reads between good ones, slow round trips', () => {
    const good = (at: number) => ({ at, ok: true, workers: [], queues: new Map() });
    const bad = (at: number) => ({ at, ok: false, workers: null, queues: new Map() });
    const e = evidence({
      history: [
        good(NOW - 300_000),
        bad(NOW - 240_000),
        good(NOW - 180_000),
        bad(NOW - 120_000),
        bad(NOW - 90_000),
        good(NOW - 30_000),
      ],
      escalateTo: ['U0LEAD'],
    });
    const found = diagnose(e).causes.find((c) => c.id === 'redis-network')!;
    expect(found.confidence).toBe('strong');
    expect(found.fixes).toEqual([]);
    expect(found.evidence.map((l) => evidenceText(l, NOW, 'en', 'plain'))).toEqual([
      '3 of 6 monitor reads in the last 15 min could not reach Redis, between ones that did',
      'call U0LEAD',
    ]);
  });
});

describe("redis-network reads the monitor's network samples (SystemSample.network)", () => {
  const net = (more: Partial<NetworkSample> = {}): NetworkSample => ({
    rttP50Ms: 1,
    rttP95Ms: 2,
    rttMaxMs: 3,
    pings: 3,
    received: 100,
    rejected: 0,
    clients: 6,
    others: 4,
    signals: [],
    ...more,
  });
  const past = (at: number, network: NetworkSample) => ({
    at,
    ok: true,
    workers: [],
    queues: new Map(),
    network,
  });

  it("workers reconnecting and coming back in several samples are a strong cause, with the monitor's figures", () => {
    const dropping = net({ reconnects: 4, young: 4, oldestOtherSeconds: 2, signals: ['reconnects'] });
    const e = evidence({
      history: [
        past(NOW - 240_000, net()),
        past(NOW - 180_000, dropping),
        past(NOW - 120_000, { ...dropping, returned: 1, signals: ['reconnects', 'returned'] }),
        past(NOW - 60_000, dropping),
      ],
      escalateTo: ['U0LEAD'],
    });
    const found = diagnose(e).causes.find((c) => c.id === 'redis-network')!;
    expect(found.confidence).toBe('strong');
    expect(found.fixes).toEqual([]);
    expect(found.evidence.map((l) => evidenceText(l, NOW, 'en', 'plain'))).toEqual([
      '12 worker connections replaced ones that dropped, in 3 of 4 monitor samples of the last 15 min (newest: 4 of 4 connections new since the sample before)',
      'workers dropped out of the worker list and came back under the same name 1 time in the last 15 min',
      'the oldest worker connection now is 2s old',
      'call U0LEAD',
    ]);
    const tr = found.evidence.map((l) => evidenceText(l, NOW, 'tr', 'plain'));
    expect(tr[0]).toContain('12 worker bağlantısı');
  });

  it('slow PINGs and silent consumers alone only suggest it; a stable link finds nothing', () => {
    const slow = net({ rttP50Ms: 300, rttP95Ms: 420, rttMaxMs: 500, signals: ['rtt'] });
    const e = evidence({
      history: [past(NOW - 120_000, slow), past(NOW - 60_000, slow), past(NOW - 30_000, slow)],
    });
    const found = diagnose(e).causes.find((c) => c.id === 'redis-network')!;
    expect(found.confidence).toBe('possible');
    expect(evidenceText(found.evidence[0]!, NOW, 'en', 'plain')).toBe(
      'round trips to Redis reach 420 ms (above 250 ms in 3 of 3 monitor samples)',
    );
    const stable = evidence({ history: [past(NOW - 60_000, net()), past(NOW - 30_000, net())] });
    expect(diagnose(stable).causes.some((c) => c.id === 'redis-network')).toBe(false);
  });
});

describe("why's history read from the stored samples", () => {
  const queueAt = (name: string, waiting: number, more: object = {}) => ({
    name,
    waiting,
    active: 2,
    delayed: 1,
    failed: 3,
    oldestWaitingSeconds: 60,
    workers: 1,
    ...more,
  });
  const sample = (at: number): Sample => ({
    at,
    systems: [
      { name: 'zeus', type: 'celery', ok: false, error: 'Redis unreachable', workers: null, queues: [] },
      {
        name: 'pushizo',
        type: 'bullmq',
        ok: true,
        workers: ['w1|127.0.0.1:5000'],
        network: {
          rttP50Ms: 1,
          rttP95Ms: 2,
          rttMaxMs: 3,
          pings: 3,
          received: 9,
          rejected: 0,
          clients: 4,
          signals: [],
        },
        queues: [
          queueAt('events', at / 1000, { throughput: 12, failedNew: 1, head: { id: 'm', firstSeen: 1 } }),
          queueAt('webhooks', 0, { runP95Seconds: 0.4, paused: true }),
          queueAt('dispatch-ios', 7, { throughput: 0, workers: null }),
        ],
      },
    ],
  });
  /** Each queue as the causes see it, through the names they ask for (and one that is not there). */
  const seen = (past: ReturnType<typeof historyOf>) =>
    past.map((p) => ({
      ...p,
      queues: ['events', 'webhooks', 'dispatch-ios', 'gone'].map((name) => p.queues.get(name)),
    }));

  it('answers every queue a cause asks for as the decoded sample does, in both stored versions', () => {
    const samples = [sample(60_000), sample(90_000), sample(120_000)];
    const rows = [
      { data: JSON.stringify(samples[0]) }, // stored before columns
      { data: 'not json' },
      { data: encodeSample(samples[1]!) },
      { data: encodeSample({ at: 100_000, systems: [] }) },
      { data: encodeSample(samples[2]!) },
    ];
    const expected = samples.map((s) => pastOf(s, 'pushizo')!);
    expect(seen(historyOf(rows, 'pushizo'))).toEqual(seen(expected));
    expect(seen(expected)[0]!.queues).toEqual([
      { waiting: 60, active: 2, delayed: 1, failed: 3, workers: 1, completedPerMinute: 12 },
      { waiting: 0, active: 2, delayed: 1, failed: 3, workers: 1, runP95Seconds: 0.4 },
      { waiting: 7, active: 2, delayed: 1, failed: 3, workers: null, completedPerMinute: 0 },
      undefined,
    ]);
    expect(historyOf(rows, 'zeus').map((p) => [p.at, p.ok, p.workers])).toEqual([
      [60_000, false, null],
      [90_000, false, null],
      [120_000, false, null],
    ]);
  });

  it('finds each queue by its name when the queues change between samples', () => {
    const before = sample(60_000);
    const after = sample(90_000);
    after.systems[1]!.queues.reverse();
    after.systems[1]!.queues.push(queueAt('new', 5));
    const [a, b] = historyOf([{ data: encodeSample(before) }, { data: encodeSample(after) }], 'pushizo');
    expect(a!.queues.get('new')).toBeUndefined();
    expect(b!.queues.get('new')).toMatchObject({ waiting: 5 });
    expect(b!.queues.get('webhooks')).toEqual(pastOf(after, 'pushizo')!.queues.get('webhooks'));
    expect(b!.queues.get('events')).toMatchObject({ waiting: 90, completedPerMinute: 12 });
  });
});

describe('the runbook notes against the live evidence', () => {
  it('reads the cause a note names, in the runbooks’ Turkish too', () => {
    expect(noteCause('büyük kampanya, sağlayıcı yavaş/rate limit (`delayed` artar)')).toBe('slow-dependency');
    expect(noteCause('SDK/API olay patlaması')).toBe('task-burst');
    expect(noteCause('bekleme düğümleri aynı anda doluyor → replika artır')).toBe('no-capacity');
  });

  it('says whether the evidence agrees or points elsewhere', () => {
    const d = diagnose(
      evidence({ queues: [queue('dispatch-ios', { waiting: 500, workers: 0 })], workers: [] }),
    );
    const [note] = notesAgainst([{ queue: 'dispatch-ios', note: 'provider slow → raise replicas' }], d);
    expect(note).toMatchObject({ agrees: 'elsewhere', instead: 'no-workers', cause: 'slow-dependency' });
    const text = JSON.stringify(
      whyMessage({ system: 'pushizo', diagnosis: d, notes: [note!], now: NOW }, 'en'),
    );
    expect(text).toContain('The runbook’s usual cause for');
    expect(text).toContain('live evidence points elsewhere');
  });
});

describe("error groups for slow-dependency are dlq's error groups (one normalizer)", () => {
  it('puts failures that differ only in numbers, ids and tokens in one group, and reads what they say', () => {
    const groups = groupFailures([
      'FCM 503 Unavailable (token 17)',
      'FCM 503 Unavailable (token 18)',
      'POST https://hooks.example.com/a/b/123 timed out after 10000 ms',
      'POST https://hooks.example.com/a/b/124 timed out after 10000 ms',
    ]);
    expect(groups).toEqual([
      { error: 'FCM 503 Unavailable (token <n>)', count: 2, kind: 'unavailable' },
      { error: 'POST https://hooks.example.com/<path> timed out after <n> ms', count: 2, kind: 'timeout' },
    ]);
    expect(errorKind('HTTP 429 Too Many Requests')).toBe('rate-limited');
    expect(errorKind('job stalled more than allowable limit')).toBe('stalled');
  });

  it('groups exactly as dlq does, so request ids do not split a timeout into groups of one', () => {
    const errors = Array.from(
      { length: 12 },
      (_, i) => `upstream request ${(0x9f3a1c20 + i).toString(16)} timed out`,
    );
    const groups = groupFailures(errors);
    expect(groups.map(({ error, count }) => ({ error, count }))).toEqual(
      groupErrors(errors).map(({ error, count }) => ({ error, count })),
    );
    expect(groups).toEqual([{ error: 'upstream request <hex> timed out', count: 12, kind: 'timeout' }]);
    const d = diagnose(
      evidence({
        type: 'bullmq',
        offers: BULLMQ_OFFERS,
        queues: [queue('webhooks', { failed: 12, failedPerMinute: 3 })],
        failures: [{ queue: 'webhooks', groupedOver: 12, groups, maxAttempts: 3 }],
      }),
    );
    const slow = d.causes.find((c) => c.id === 'slow-dependency');
    expect(slow?.confidence).toBe('strong');
    expect(slow!.evidence.map((l) => evidenceText(l, NOW, 'en', 'plain')).join('\n')).toContain(
      'upstream request <hex> timed out',
    );
  });
});

describe('slow-dependency offers a limit Celery takes: the rate of the task the failures name', () => {
  const timeouts = (names: string[]) =>
    groupFailures(
      names.map((name, i) => ({ error: `TimeoutError: FCM provider timed out (token ${i})`, name })),
    );

  it('each group names the task most of its failures carry, names only', () => {
    const [group] = timeouts([...Array(7).fill('app.tasks.notification.send_push'), 'app.tasks.other']);
    expect(group).toEqual({
      error: 'TimeoutError: FCM provider timed out (token <n>)',
      count: 8,
      kind: 'timeout',
      topName: { name: 'app.tasks.notification.send_push', count: 7 },
    });
    expect(groupFailures(['TimeoutError: timed out'])[0]).not.toHaveProperty('topName');
  });

  it('rate-limit <system> <task> <rate>: half of what the queue tries, shared by its workers, in steps, at least 1/m', () => {
    const slow = (more: Partial<QueueNow>, names = Array(18).fill('app.tasks.notification.send_push')) =>
      diagnose(
        evidence({
          queues: [queue('celery:notification_sending', { failed: 18, workers: 1, ...more })],
          failures: [
            {
              queue: 'celery:notification_sending',
              groupedOver: 18,
              groups: timeouts(names),
              maxAttempts: 1,
            },
          ],
        }),
      ).causes.find((c) => c.id === 'slow-dependency');
    const commands = (c: ReturnType<typeof slow>) => c!.fixes.map((f) => f.words.join(' '));
    const lead = slow({ completedPerMinute: 30, failedPerMinute: 10 });
    expect(lead?.confidence).toBe('strong');
    expect(commands(lead)).toEqual(['rate-limit zeus app.tasks.notification.send_push 20/m']);
    // Celery keeps the rate per worker: two workers share the 20 a minute.
    expect(commands(slow({ completedPerMinute: 30, failedPerMinute: 10, workers: 2 }))).toEqual([
      'rate-limit zeus app.tasks.notification.send_push 10/m',
    ]);
    // 17 a minute tried, 8.5 half of it: a step of 5, so a click a few seconds later finds the same command.
    expect(commands(slow({ completedPerMinute: 13, failedPerMinute: 4 }))).toEqual([
      'rate-limit zeus app.tasks.notification.send_push 5/m',
    ]);
    expect(commands(slow({ completedPerMinute: 12.4, failedPerMinute: 4.3 }))).toEqual([
      'rate-limit zeus app.tasks.notification.send_push 5/m',
    ]);
    expect(commands(slow({ completedPerMinute: 0, failedPerMinute: 0.4 }))).toEqual([
      'rate-limit zeus app.tasks.notification.send_push 1/m',
    ]);
    // No rates, or no task dominating the failures: nothing to click rather than a guess.
    expect(commands(slow({ completedPerMinute: null, failedPerMinute: null }))).toEqual([]);
    const mixed = [...Array(9).fill('app.tasks.a'), ...Array(9).fill('app.tasks.b')];
    expect(commands(slow({ completedPerMinute: 30, failedPerMinute: 10 }, mixed))).toEqual([]);
  });

  it('BullMQ keeps its queue limits; a system without limits gets none', () => {
    const e = (offers: Evidence['offers']) =>
      evidence({
        type: 'bullmq',
        offers,
        queues: [queue('webhooks', { failed: 12, failedPerMinute: 3, active: 6, completedPerMinute: 40 })],
        failures: [
          { queue: 'webhooks', groupedOver: 12, groups: timeouts(Array(12).fill('deliver')), maxAttempts: 3 },
        ],
      });
    const fixes = (offers: Evidence['offers']) =>
      diagnose(e(offers))
        .causes.find((c) => c.id === 'slow-dependency')!
        .fixes.map((f) => f.words.join(' '));
    // Half of 6 running and what it completes (40/min), each rounded down to a step (1, 2, 5, 10,
    // 20…), so a click a few seconds later, on moved rates, still finds the same fix.
    expect(fixes(BULLMQ_OFFERS)).toEqual(['concurrency zeus/webhooks 2', 'rate-limit zeus/webhooks 20/1m']);
    expect(fixes({ stopStuck: null, limitTarget: 'none', expireResults: false })).toEqual([]);
  });

  it('task-burst and retry-loop offer rate-limit only where limits name what they name', () => {
    const e = evidence({
      retrying: { sampled: 10, tasks: [{ name: 'tasks.retrying', count: 6, maxRetries: 4 }] },
    });
    const retry = (offers: Evidence['offers']) =>
      diagnose({ ...e, offers })
        .causes.find((c) => c.id === 'retry-loop')!
        .fixes.map((f) => f.words.join(' '));
    expect(retry(CELERY_OFFERS)).toEqual(['rate-limit zeus tasks.retrying 10/m']);
    expect(retry({ ...CELERY_OFFERS, limitTarget: 'none' })).toEqual([]);
    const past = (at: number, waiting: number) => ({
      at,
      ok: true,
      workers: ['celery@w1|1', 'celery@w2|2'],
      queues: new Map([
        [
          'celery:alarm_processing',
          { waiting, active: 4, delayed: 0, failed: 0, workers: 2, completedPerMinute: 100 },
        ],
      ]),
    });
    const burst = diagnose(
      evidence({
        queues: [
          queue('celery:alarm_processing', {
            waiting: 9000,
            active: 4,
            workers: 2,
            completedPerMinute: 100,
            oldestWaitingSeconds: 40,
          }),
        ],
        history: [
          past(NOW - 240_000, 10),
          past(NOW - 180_000, 20),
          past(NOW - 120_000, 40),
          past(NOW - 60_000, 80),
        ],
        waitingNames: [
          {
            queue: 'celery:alarm_processing',
            sampled: 10,
            names: [{ name: 'app.tasks.alarm.check_alarms', count: 10 }],
          },
        ],
      }),
    ).causes.find((c) => c.id === 'task-burst');
    // Twice the usual 120 a minute, shared by the two workers that each keep the rate: 120, a step of 100.
    expect(burst!.fixes.map((f) => f.words.join(' '))).toEqual([
      'rate-limit zeus app.tasks.alarm.check_alarms 100/m',
    ]);
  });
});

describe('every evidence line is worded in English and Turkish', () => {
  const dir = join(import.meta.dirname, '../../src/diagnosis/causes');
  const codes = new Set(
    readdirSync(dir).flatMap((f) =>
      [...readFileSync(join(dir, f), 'utf8').matchAll(/line\('([A-Za-z]+)'/g)].map((m) => m[1]!),
    ),
  );

  it.each(['en', 'tr'] as const)('%s', (locale) => {
    expect(codes.size).toBeGreaterThan(30);
    for (const code of codes) expect(messages(locale).why.evidence[code], code).toBeTypeOf('function');
    for (const id of CAUSE_IDS) expect(messages(locale).why.cause[id]).toBeTruthy();
  });
});
