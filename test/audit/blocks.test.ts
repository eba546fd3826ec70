import { describe, expect, it } from 'vitest';
import { auditEntryMessage, auditMessage } from '../../src/audit/blocks.js';
import { validateMessage } from '../../src/blocks/validate.js';
import type { AuditEntry } from '../../src/store/store.js';

const hostile = '<!channel> *bold* `tick` <https://evil.example|click> & more';

function entry(seq: number, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    seq,
    at: new Date(Date.parse('2030-03-01T08:00:00.000Z') + seq * 3_600_000).toISOString(),
    actorId: 'U0AYSE',
    actorName: 'ayse',
    via: 'slack',
    channel: 'C0INCIDENT',
    action: 'action.pause',
    target: 'pushizo/dispatch-ios',
    params: { request: 'r-7f3k9q', count: 48211 },
    outcome: 'done',
    prevHash: 'a'.repeat(64),
    hash: 'b'.repeat(64),
    ...overrides,
  };
}

const allText = (value: unknown): string => JSON.stringify(value);

describe('auditMessage', () => {
  it('lists entries newest first as given, with seq, actor, action, target and outcome', () => {
    const message = auditMessage([entry(2, { outcome: 'failed', error: 'Redis timeout' }), entry(1)], 'en');
    expect(validateMessage(message)).toEqual([]);
    const text = allText(message.blocks);
    expect(text.indexOf('#2')).toBeLessThan(text.indexOf('#1'));
    for (const piece of [
      'ayse',
      'action.pause',
      'pushizo/dispatch-ios',
      'failed',
      'Redis timeout',
      '2030-03-01',
    ]) {
      expect(text).toContain(piece);
    }
    expect(message.text).toContain('2 entries');
  });

  it('escapes everything that came from users or errors, so nothing forms a mention or a link', () => {
    const message = auditMessage(
      [entry(1, { actorName: hostile, target: hostile, error: hostile, outcome: hostile, action: hostile })],
      'en',
    );
    const text = allText(message);
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<https://');
    expect(text).toContain('&lt;!channel&gt;');
  });

  it('a hundred entries with long names still fit Slack limits, counting what was left out', () => {
    const long = 'x'.repeat(500);
    const entries = Array.from({ length: 100 }, (_, i) =>
      entry(100 - i, { actorName: long, target: long, action: long, error: long }),
    );
    const message = auditMessage(entries, 'en');
    expect(validateMessage(message)).toEqual([]);
    const shown = (allText(message.blocks).match(/`#\d+`/g) ?? []).length;
    expect(shown).toBeGreaterThan(10);
    expect(shown).toBeLessThan(100);
    expect(allText(message.blocks)).toContain(`${100 - shown} older entries are not shown`);
  });

  it('a hundred ordinary entries are all shown', () => {
    const entries = Array.from({ length: 100 }, (_, i) =>
      entry(100 - i, {
        actorName: 'ayse',
        target: 'pushizo/dispatch-ios',
        action: 'command.status',
        outcome: 'ok',
      }),
    );
    const message = auditMessage(entries, 'en');
    expect(validateMessage(message)).toEqual([]);
    expect((allText(message.blocks).match(/`#\d+`/g) ?? []).length).toBe(100);
  });

  it('an empty trail says so', () => {
    const message = auditMessage([], 'en');
    expect(validateMessage(message)).toEqual([]);
    expect(message.text).toMatch(/empty/);
  });
});

describe('auditEntryMessage', () => {
  it('shows one entry with who, via, channel link, target, scalar parameters and the chain position', () => {
    const message = auditEntryMessage(
      entry(7, { params: { count: 3, payload: { secret: 'job data' } } }),
      'en',
    );
    expect(validateMessage(message)).toEqual([]);
    const text = allText(message.blocks);
    for (const piece of [
      'ayse',
      'U0AYSE',
      'Slack',
      '<#C0INCIDENT>',
      'pushizo/dispatch-ios',
      'count=3',
      '#7',
    ]) {
      expect(text).toContain(piece);
    }
    expect(text).not.toContain('job data');
    expect(message.text).toBe('Audit #7: action.pause → done');
  });

  it('escapes hostile values and never links a channel that is not a channel id', () => {
    const message = auditEntryMessage(
      entry(1, {
        channel: hostile,
        actorName: hostile,
        target: hostile,
        error: `${hostile}\nsecond line`,
        action: hostile,
      }),
      'en',
    );
    expect(validateMessage(message)).toEqual([]);
    const text = allText(message);
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<#');
    expect(text).not.toContain('second line');
  });
});
