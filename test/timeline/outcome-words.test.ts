import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../src/blocks/timeline.js';
import type { AuditEntry } from '../../src/store/store.js';
import { eventFromAudit, type TimelineEvent } from '../../src/timeline/events.js';

/**
 * issue 38 §6: a timeline row puts an action's outcome into words. The program's field names
 * (`alreadyThere 0`, `ttlSeconds 604,800`) and an undo row's "undo with" (it names the purge it
 * undid) leaked into rows; `--json`'s `outcome` is the audited result, untouched by this.
 */
const done = (action: string, target: string, result: Record<string, unknown>): TimelineEvent => ({
  at: '2026-12-07T04:30:00.000Z',
  kind: 'action.done',
  seq: 7,
  who: 'U0BOB',
  action,
  target,
  outcome: 'done',
  result,
});

const purge = done('purge', 'pushizo/dispatch-ios', {
  purged: 12,
  archived: 12,
  purgeId: 'r-1a2b3c4d',
  archivePath: '/app/data/archive/r-1a2b3c4d',
});
const undo = done('undo', 'pushizo/dispatch-ios', {
  restored: 12,
  alreadyThere: 0,
  purgeId: 'r-1a2b3c4d',
  archivePath: '/app/data/archive/r-1a2b3c4d',
});
const expire = done('expire-results', 'zeus', { expired: 300, results: 1200, ttlSeconds: 604_800 });

describe('timeline rows word an action’s outcome', () => {
  it('in English', () => {
    expect(describeEvent(purge, 'en').what).toBe(
      'purge pushizo/dispatch-ios done: purged 12 · archived 12 · undo: /queue undo r-1a2b3c4d',
    );
    expect(describeEvent(undo, 'en').what).toBe(
      'undo pushizo/dispatch-ios done: restored 12 from purge r-1a2b3c4d',
    );
    expect(describeEvent(expire, 'en').what).toBe(
      'expire-results zeus done: gave 300 of 1,200 results a TTL of 7d',
    );
  });

  it('in Turkish', () => {
    expect(describeEvent(undo, 'tr').what).toContain('r-1a2b3c4d silmesinden 12 iş geri yüklendi');
    expect(describeEvent(expire, 'tr').what).toContain('1.200 sonuçtan 300 tanesine 7d TTL verildi');
  });

  it('never with a field’s own name', () => {
    for (const locale of ['en', 'tr'] as const)
      for (const event of [
        purge,
        undo,
        expire,
        done('purge', 'x/y', { purged: 1, archived: 1, someInternal: 5 }),
      ])
        expect(describeEvent(event, locale).what).not.toMatch(/alreadyThere|ttlSeconds|someInternal|604/);
  });
});

describe('timeline rows of alert handling (issue 38 §6)', () => {
  const entry = (action: string, args: string[], result?: Record<string, unknown>): AuditEntry => ({
    at: '2026-12-07T04:31:00.000Z',
    seq: 9,
    prevHash: '',
    hash: '',
    actorId: 'U0ALICE',
    via: 'slack',
    action,
    target: args[0],
    params: { args, ...(result ? { result } : {}) },
    outcome: 'ok',
  });

  it('ack all names the system and how many; a silence is a row, with what it muted', () => {
    const ackAll = eventFromAudit(entry('command.ack', ['all', 'zeus'], { system: 'zeus', count: 14 }))!;
    expect(describeEvent(ackAll, 'en').what).toBe('acknowledged 14 open alerts of zeus');
    expect(describeEvent(ackAll, 'tr').what).toBe('zeus sisteminin 14 açık alarmı onaylandı');
    const silence = eventFromAudit(
      entry('command.silence', ['pushizo/dispatch-*', '1h'], { silence: 's-1', count: 14 }),
    )!;
    expect(describeEvent(silence, 'en').what).toBe('silenced pushizo/dispatch-* (14 open alerts muted)');
    expect(describeEvent(silence, 'tr').what).toBe(
      'pushizo/dispatch-* susturuldu (14 açık alarm susturuldu)',
    );
    const lifted = eventFromAudit(entry('command.unsilence', ['s-1']))!;
    expect(describeEvent(lifted, 'en').what).toBe('lifted silence s-1');
  });
});

describe('a Celery rate limit is named as its task’s (issue 38 §6)', () => {
  const rate = done('rate-limit', 'zeus', {
    system: 'zeus',
    target: 'tasks.send_push',
    kind: 'rate',
    value: '10/m',
    previous: {},
    answers: [{ worker: 'w1@zeus', answer: 'new rate limit set successfully', after: '10/m' }],
  });

  it('not as if it were a queue of the system', () => {
    expect(describeEvent(rate, 'en').what).toContain('task tasks.send_push of zeus: w1@zeus');
    expect(describeEvent(rate, 'en').what).not.toContain('zeus/tasks.send_push');
    expect(describeEvent(rate, 'tr').what).toContain('zeus sisteminin tasks.send_push görevi');
  });
});
