import { describe, expect, it } from 'vitest';
import { assertValidMessage } from '../../src/blocks/validate.js';
import { alertMessage } from '../../src/escalation/blocks.js';
import type { Alert } from '../../src/store/alert.js';
import { requestFromSlack } from '../../src/transports/slack/request.js';
import { sampleAlert } from '../store/escalation-contract.js';
import { buttonClick } from '../transports/slack/harness.js';

const now = new Date('2030-01-01T10:12:00.000Z');
const settings = { clearAfterSamples: 2, escalateTo: ['S0PLATFORM'] };

function buttonsOf(alert: Alert) {
  const message = alertMessage(alert, 'en', now, settings);
  assertValidMessage(message);
  const actions = message.blocks.find((b) => b.type === 'actions') as
    | { elements: { action_id: string; value: string }[] }
    | undefined;
  return actions?.elements ?? [];
}

describe('alert message buttons', () => {
  it('each button runs the words of an existing command, through the same parser and guards', () => {
    const alert = sampleAlert({ id: 'a-1234abcd' });
    const words = buttonsOf(alert).map(
      (b) => requestFromSlack(buttonClick(b.action_id, b.value, '/r'))?.words,
    );
    expect(words).toEqual([
      ['ack', 'a-1234abcd'],
      ['snooze', 'a-1234abcd', '30m'],
      ['snooze', 'a-1234abcd', '2h'],
      ['dlq', 'pushizo/dispatch-ios'],
      // Scale… shows the system's worker groups and their bounds: what `scale` then needs.
      ['workers', 'pushizo'],
    ]);
  });

  it('a system alert has no DLQ or Scale button', () => {
    const system = sampleAlert({ subject: 'pushizo', queue: undefined, metric: 'redisMemoryRatio' });
    expect(buttonsOf(system).map((b) => b.action_id)).toEqual([
      'queue_ops.alert.ack',
      'queue_ops.alert.snooze_half_hour',
      'queue_ops.alert.snooze_two_hours',
    ]);
  });

  it('a resolved alert has no buttons', () => {
    expect(buttonsOf(sampleAlert({ status: 'resolved', resolvedAt: now.toISOString() }))).toEqual([]);
  });

  it('names from Redis are escaped: a queue called <!channel> cannot ping the channel', () => {
    const alert = sampleAlert({ subject: 'pushizo/<!channel>', queue: '<!channel>', rule: 'back*log' });
    const message = alertMessage(alert, 'en', now, settings);
    // Header text is plain_text and button values are ids, neither is mrkdwn; everything else is.
    const sections =
      JSON.stringify(message.blocks.filter((b) => b.type !== 'header' && b.type !== 'actions')) +
      message.text;
    expect(sections).not.toContain('<!channel>');
    expect(message.text).toContain('&lt;!channel&gt;');
  });

  it('shows the value against the threshold, the sparkline and minutes to drain', () => {
    const text = JSON.stringify(
      alertMessage(
        sampleAlert({ value: 150234, threshold: 100000, series: [1, 5, 9], minutesToDrain: 45.2 }),
        'en',
        now,
        settings,
      ).blocks,
    );
    expect(text).toContain('*waiting*: *150,234 jobs* (above 100,000 jobs)');
    expect(text).toContain('Trend `▁▅█`');
    expect(text).toContain('45 min to drain at the current rate');
    expect(text).toContain('Firing since 2030-01-01 10:00 UTC (12m 0s)');
  });
});
