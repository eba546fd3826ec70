import { describe, expect, it } from 'vitest';
import { validateMessage } from '../../src/blocks/validate.js';
import { groupMessage } from '../../src/escalation/blocks.js';
import { sampleAlert } from '../store/escalation-contract.js';

const now = new Date('2030-01-01T10:30:00.000Z');
const settings = { clearAfterSamples: 2, escalateTo: ['S0PLATFORM'], maxAlertsPerMessage: 20 };
const long = (n: number) => `${'q'.repeat(120)}-${n}`;

describe('a group message within Slack’s limits', () => {
  it('20 firing alerts with long names, their buttons and 10 resolved ones fit one valid message', () => {
    const firing = Array.from({ length: 20 }, (_, i) =>
      sampleAlert({
        id: `a-f${i}`,
        key: `k|${i}`,
        queue: long(i),
        subject: `pushizo/${long(i)}`,
        groupId: 'g-1',
      }),
    );
    const resolved = Array.from({ length: 10 }, (_, i) =>
      sampleAlert({
        id: `a-r${i}`,
        key: `r|${i}`,
        queue: long(i),
        subject: `pushizo/${long(i)}`,
        status: 'resolved',
        resolvedAt: '2030-01-01T10:20:00.000Z',
        groupId: 'g-1',
      }),
    );
    const message = groupMessage([...firing, ...resolved], 'en', now, settings);
    expect(validateMessage(message, 'message')).toEqual([]);
    expect(message.blocks.filter((b) => b.type === 'actions')).toHaveLength(20);
    // A 21st makes it a summary without buttons, still valid.
    const storm = groupMessage(
      [...firing, sampleAlert({ id: 'a-x', key: 'k|x', groupId: 'g-1' })],
      'tr',
      now,
      settings,
    );
    expect(validateMessage(storm, 'message')).toEqual([]);
    expect(storm.blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(JSON.stringify(storm.blocks)).toContain('`/queue alerts` hepsini');
  });
});
