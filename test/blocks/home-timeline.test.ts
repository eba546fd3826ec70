import { describe, expect, it } from 'vitest';
import { ActionId } from '../../src/blocks/action-ids.js';
import { homeView } from '../../src/blocks/home.js';
import { describeEvent, timelineMessage } from '../../src/blocks/timeline.js';
import { validateMessage } from '../../src/blocks/validate.js';
import type { ActionRequest } from '../../src/store/store.js';
import { eventFromAudit, type TimelineEvent } from '../../src/timeline/events.js';
import { sampleAlert } from '../store/escalation-contract.js';
import { pushizoStatus, queue } from './fixtures.js';

const now = new Date('2030-01-01T12:00:00Z');

function request(n: number): ActionRequest {
  return {
    id: `r-${String(n).padStart(8, 'a')}`,
    action: 'pause',
    target: `pushizo/q<${n}>`,
    params: { system: 'pushizo', queue: `q${n}` },
    status: 'pending',
    requestedBy: 'U0ALICE',
    requestedByName: '*alice*',
    via: 'slack',
    channel: 'C0INCIDENT',
    requiredApprovals: 1,
    approvals: [],
    preview: 'would pause <!channel> &',
    createdAt: now.toISOString(),
    expiresAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
}

const look = (n: number): TimelineEvent => ({
  at: new Date(now.getTime() + n * 1000).toISOString(),
  kind: 'look',
  seq: n,
  who: 'alice',
  verb: 'dlq',
  target: 'pushizo/q',
});

describe('the Home view and the timeline message stay inside Slack limits, escaped', () => {
  it('a Home tab with 200 waiting requests and 50 alerts is valid for a view, buttons carry only ids, text is escaped', () => {
    const view = homeView(
      {
        systems: [{ name: 'zeus', error: 'RedisUnavailable' }],
        alerts: Array.from({ length: 50 }, () => sampleAlert({ subject: 'pushizo/<q>' })),
        waiting: Array.from({ length: 200 }, (_, i) => request(i)),
        recent: [look(1)],
        now,
      },
      'en',
    );
    expect(view.type).toBe('home');
    expect(validateMessage({ text: 'home', blocks: view.blocks }, 'modal')).toEqual([]);
    const text = JSON.stringify(view.blocks);
    expect(text).not.toContain('<!channel>');
    expect(text).toContain('185 more requests wait');
    expect(text).toContain('40 more: `/queue alerts`');
    expect(text).toContain('zeus: unreachable (Redis did not answer)');
    const buttons = view.blocks
      .filter((b) => b.type === 'actions')
      .flatMap((b) => (b as { elements: { action_id: string; value: string }[] }).elements);
    expect(new Set(buttons.map((b) => b.action_id))).toEqual(new Set([ActionId.Approve, ActionId.Deny]));
    for (const b of buttons) expect(b.value).toMatch(/^r-[a-z0-9]+$/);
  });

  it('counts waiting on the Home tab as status does: prioritized jobs included', () => {
    const status = {
      ...pushizoStatus(2),
      queues: [queue('dispatch-ios', { waiting: 480, prioritized: 5 }), queue('events', { waiting: 15 })],
    };
    const view = homeView(
      { systems: [{ name: 'pushizo', status }], alerts: [], waiting: [], recent: [], now },
      'en',
    );
    expect(JSON.stringify(view.blocks)).toContain('2 queues, 500 waiting');
  });

  it('a long timeline is one message: the first 40 events, then the command that prints the rest', () => {
    const message = timelineMessage(
      {
        since: '2030-01-01T11:00:00.000Z',
        until: '2030-01-01T13:00:00.000Z',
        system: 'pushizo',
        events: Array.from({ length: 300 }, (_, i) => look(i)),
        verification: { result: { ok: true, count: 400 }, firstSeq: 1, lastSeq: 300 },
        capped: false,
        capLimit: 5000,
      },
      'en',
    );
    expect(validateMessage(message)).toEqual([]);
    const text = JSON.stringify(message.blocks);
    expect(text).toContain(
      'Only the first 40 of 300 events fit here; the whole timeline is in your direct messages with queue-ops, as a Markdown file only you can see.',
    );
    expect(text).toContain(
      'queue-ops timeline --since 2030-01-01T11:00:00.000Z --until 2030-01-01T13:00:00.000Z pushizo',
    );
    expect(text).toContain("Audit chain verified: 400 entries unbroken, including this span's #1–#300.");
  });
});

describe('an action outcome in the timeline', () => {
  // As the audit trail holds a purge's outcome, read back the way the timeline reads it.
  const purge = () =>
    eventFromAudit({
      seq: 7,
      at: '2030-01-01T10:00:00.000Z',
      action: 'action.purge',
      actorId: 'U0BOB',
      outcome: 'done',
      target: 'pushizo/dispatch-ios',
      params: {
        result: { purged: 2000, archived: 2000, purgeId: 'r-abc123', archivePath: '/data/archive/r-abc123' },
      },
    } as never)!;

  it('is worded in the locale, with its numbers grouped the locale’s way', () => {
    expect(describeEvent(purge(), 'en').what).toBe(
      'purge pushizo/dispatch-ios done: purged 2,000 · archived 2,000 · undo: /queue undo r-abc123',
    );
    expect(describeEvent(purge(), 'tr').what).toBe(
      'purge pushizo/dispatch-ios tamamlandı: 2.000 iş silindi · 2.000 iş arşivlendi · geri almak için: /queue undo r-abc123',
    );
  });

  // Each action's outcome as its executor stores it (PauseOutcome, ScaleReport, RevokeOutcome…).
  const done = (action: string, target: string, result: Record<string, unknown>) =>
    eventFromAudit({
      seq: 8,
      at: '2030-01-01T10:00:00.000Z',
      action: `action.${action}`,
      actorId: 'U0BOB',
      outcome: 'done',
      target,
      params: { result },
    } as never)!;
  const both = (event: TimelineEvent) => [describeEvent(event, 'en').what, describeEvent(event, 'tr').what];

  it('every other action is worded whole, never as raw field names', () => {
    expect(
      both(done('pause', 'zeus/celery', { queue: 'celery', isPaused: true, workersAnswered: ['w1', 'w2'] })),
    ).toEqual([
      'pause zeus/celery done: paused, 2 workers acknowledged',
      'pause zeus/celery tamamlandı: duraklatıldı, 2 worker yanıt verdi',
    ]);
    // One worker is one worker, not "1 workers".
    expect(
      describeEvent(done('pause', 'zeus/celery', { queue: 'celery', workersAnswered: ['w1'] }), 'en').what,
    ).toBe('pause zeus/celery done: paused, 1 worker acknowledged');
    expect(both(done('resume', 'pushizo/dispatch-ios', { queue: 'dispatch-ios', isPaused: false }))).toEqual([
      'resume pushizo/dispatch-ios done: resumed',
      'resume pushizo/dispatch-ios tamamlandı: devam ettirildi',
    ]);
    const scale = done('scale', 'pushizo/dispatch', {
      system: 'pushizo',
      group: 'dispatch',
      type: 'kubernetes',
      replicas: 4,
      targets: [{ name: 'pushizo/worker-dispatch', before: 2, after: 4 }],
      autoscaler: {
        kind: 'HorizontalPodAutoscaler',
        name: 'worker-dispatch',
        before: { min: 2, max: 3 },
        after: { min: 4, max: 4 },
      },
    });
    expect(both(scale)).toEqual([
      'scale pushizo/dispatch done: scaled to 4 (pushizo/worker-dispatch 2 → 4, HorizontalPodAutoscaler worker-dispatch now min 4, max 4)',
      'scale pushizo/dispatch tamamlandı: ölçek 4 oldu (pushizo/worker-dispatch 2 → 4, HorizontalPodAutoscaler worker-dispatch artık en az 4, en çok 4)',
    ]);
    const revoke = done('revoke', 'zeus', {
      ids: ['t-1', 't-2'],
      terminate: true,
      signal: 'KILL',
      answers: [{ worker: 'celery@a', answer: 'terminate: t-1' }],
      stillRunning: ['t-2'],
    });
    expect(both(revoke)).toEqual([
      'revoke zeus done: revoked 2 tasks, terminated with SIGKILL · 1 worker answered · still running: t-2',
      'revoke zeus tamamlandı: 2 görev iptal edildi, SIGKILL ile sonlandırıldı · 1 worker yanıt verdi · hâlâ çalışıyor: t-2',
    ]);
    const fail = done('fail', 'pushizo/dispatch-ios', {
      queue: 'dispatch-ios',
      id: '812',
      name: 'deliver.apns',
      state: 'failed',
      before: 'active',
      reason: 'stuck',
      lockWasHeld: true,
      lockTtlMs: null,
    });
    expect(both(fail)).toEqual([
      'fail pushizo/dispatch-ios done: moved job 812 from active to failed · a live worker still held its lock',
      'fail pushizo/dispatch-ios tamamlandı: 812 işi active durumundan başarısıza taşındı · kilidi hâlâ canlı bir worker’daydı',
    ]);
    const retry = done('retry', 'zeus/celery', {
      queue: 'celery',
      retried: 1200,
      skipped: 3,
      ids: { a: 'b' },
    });
    expect(both(retry)).toEqual([
      'retry zeus/celery done: retried 1,200 · skipped 3 no longer failed',
      'retry zeus/celery tamamlandı: 1.200 iş yeniden denendi · artık başarısız olmayan 3 iş atlandı',
    ]);
    for (const event of [scale, revoke, fail, retry])
      expect(both(event).join('\n')).not.toMatch(/\b(queue|isPaused|targets|lockWasHeld|ids) /);
  });

  it('a retry and a purge say what arrived after the preview (only when something did); an undo names the purge it restored, never a raw field', () => {
    const retry = done('retry', 'pushizo/dispatch-test', {
      queue: 'dispatch-test',
      retried: 5,
      ids: { 1: '1' },
      skipped: 0,
      newSincePreview: 340,
    });
    expect(both(retry)).toEqual([
      'retry pushizo/dispatch-test done: retried 5 · 340 arrived after the preview, left',
      'retry pushizo/dispatch-test tamamlandı: 5 iş yeniden denendi · önizlemeden sonra gelen 340 bırakıldı',
    ]);
    const purge = done('purge', 'pushizo/webhooks', {
      purged: 72,
      archived: 72,
      purgeId: 'r-rzabcykw',
      archivePath: '/data/archive/r-rzabcykw',
      newSincePreview: 0,
    });
    expect(describeEvent(purge, 'en').what).toBe(
      'purge pushizo/webhooks done: purged 72 · archived 72 · undo: /queue undo r-rzabcykw',
    );
    const undo = done('undo', 'pushizo/webhooks', {
      restored: 70,
      alreadyThere: 2,
      purgeId: 'r-rzabcykw',
      archivePath: '/data/archive/r-rzabcykw',
    });
    expect(both(undo)).toEqual([
      'undo pushizo/webhooks done: restored 70 (2 already there) from purge r-rzabcykw',
      'undo pushizo/webhooks tamamlandı: r-rzabcykw silmesinden 70 iş geri yüklendi (2 iş zaten oradaydı)',
    ]);
    expect(both(undo).join('\n')).not.toMatch(/alreadyThere|undo with/);
  });
});

describe('alert handling in the timeline', () => {
  const handled = (outcome: string) =>
    eventFromAudit({
      seq: 9,
      at: '2030-01-01T10:00:00.000Z',
      action: 'command.ack',
      actorId: 'U0ALICE',
      outcome,
      target: 'a-12345678',
      params: {},
    } as never);

  it('an ack that went through is an event', () => {
    expect(handled('ok')).toMatchObject({ kind: 'alert.handled', verb: 'ack', target: 'a-12345678' });
  });

  it('an ack refused (no such alert) is not part of the story', () => {
    expect(handled('error')).toBeUndefined();
  });
});

describe('an alert in the timeline', () => {
  const fired: TimelineEvent = {
    at: '2030-01-01T10:00:00.000Z',
    kind: 'alert.fired',
    alert: 'a-1',
    rule: 'backlog',
    subject: 'pushizo/dispatch-ios',
    severity: 'critical',
    threshold: 30_000,
    system: 'pushizo',
  };

  it('names its severity and threshold the locale’s way', () => {
    expect(describeEvent(fired, 'en').what).toBe(
      'alert backlog fired on pushizo/dispatch-ios (CRITICAL, threshold 30,000)',
    );
    expect(describeEvent(fired, 'tr').what).toBe(
      'pushizo/dispatch-ios üzerinde backlog alarmı tetiklendi (KRİTİK, eşik 30.000)',
    );
  });
});

describe('who looked at what, in the timeline', () => {
  const command = (verb: string, target?: string) =>
    eventFromAudit({
      seq: 9,
      at: '2030-01-01T10:00:00.000Z',
      action: `command.${verb}`,
      actorId: 'U0ALICE',
      outcome: 'ok',
      ...(target ? { target } : {}),
    } as never);

  // The read verbs added after the timeline were left out of its own list of looks; each verb's
  // descriptor now says it, so `redis`, `results` and `job` are looks like `status`.
  it.each([
    ['status', 'pushizo'],
    ['redis', 'pushizo'],
    ['results', 'zeus'],
    ['job', 'pushizo/dispatch-ios'],
  ])('`%s` is a look: "looked at" its target', (verb, target) => {
    const event = command(verb, target);
    expect(event).toMatchObject({ kind: 'look', verb, target });
    expect(describeEvent(event!, 'en').what).toContain(target);
  });

  it('a command that changes something is not a look, and an ack that ran is an alert handled', () => {
    expect(command('pause', 'pushizo/q1')).toBeUndefined();
    expect(command('ack', 'a-1')).toMatchObject({ kind: 'alert.handled', verb: 'ack' });
  });
});
