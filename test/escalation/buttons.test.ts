import { describe, expect, it } from 'vitest';
import { assertValidMessage } from '../../src/blocks/validate.js';
import { fixKey } from '../../src/diagnosis/fix-key.js';
import { alertMessage, groupMessage } from '../../src/escalation/blocks.js';
import { groupKeyOf } from '../../src/escalation/monitor.js';
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

describe('an alert carrying its cause (issue 36 §3)', () => {
  const cause = {
    id: 'no-workers',
    summary: '2 queues have no consumer: worker w1 stopped answering after 03:12 UTC',
    evidence: '40 waiting on 2 queues (dispatch-ios the deepest) with no worker consuming them',
    fixes: [{ command: 'restart pushizo/pool' }, { command: 'scale pushizo/pool 3' }],
    queues: 2,
  };

  it('shows the cause and its evidence; its fixes run `why --fix <key>` and Why? runs `why <queue>`', () => {
    const alert = sampleAlert({ id: 'a-1234abcd', cause });
    const message = alertMessage(alert, 'en', now, settings);
    const text = JSON.stringify(message.blocks);
    expect(text).toContain('*Cause:* 2 queues have no consumer: worker w1 stopped answering after 03:12 UTC');
    expect(text).toContain('40 waiting on 2 queues');
    const clicks = buttonsOf(alert).map(
      (b) => requestFromSlack(buttonClick(b.action_id, b.value, '/r'))?.words,
    );
    // Ack stays first; the cause's buttons follow the alert's own. Values are keys and scopes only.
    expect(clicks[0]).toEqual(['ack', 'a-1234abcd']);
    expect(clicks.slice(-3)).toEqual([
      ['why', 'pushizo', '--fix', fixKey({ words: ['restart', 'pushizo/pool'] })],
      ['why', 'pushizo', '--fix', fixKey({ words: ['scale', 'pushizo/pool', '3'] })],
      ['why', 'pushizo/dispatch-ios'],
    ]);
    expect(JSON.stringify(buttonsOf(alert).map((b) => b.value))).not.toContain('restart');
  });

  it('says it in Turkish too', () => {
    const message = alertMessage(sampleAlert({ cause }), 'tr', now, settings);
    assertValidMessage(message);
    const text = JSON.stringify(message.blocks);
    expect(text).toContain('*Sebep:*');
    expect(text).toContain('"Neden?"');
  });

  it('a group one cause explains leads with it; alerts of different causes do not share a lead', () => {
    const members = [
      sampleAlert({ id: 'a-00000001', key: 'k1', cause }),
      sampleAlert({
        id: 'a-00000002',
        key: 'k2',
        subject: 'pushizo/dispatch-android',
        queue: 'dispatch-android',
        cause,
      }),
    ];
    const group = groupMessage(members, 'en', now, { ...settings, maxAlertsPerMessage: 10 });
    assertValidMessage(group);
    expect((group.blocks[0] as { text: { text: string } }).text.text).toContain('2 queues have no consumer');
    const mixed = groupMessage(
      [members[0]!, { ...members[1]!, cause: { ...cause, id: 'paused', summary: 'The queue is paused' } }],
      'en',
      now,
      { ...settings, maxAlertsPerMessage: 10 },
    );
    expect((mixed.blocks[0] as { text: { text: string } }).text.text).toContain('2 alerts firing');
  });

  it('groupBy cause: alerts of one cause share a key, of another cause or none do not', () => {
    const key = (c?: { id: string }) =>
      groupKeyOf(
        ['cause', 'system'],
        { system: 'pushizo', severity: 'critical', rule: 'backlog', cause: c },
        'C1',
      );
    expect(key({ id: 'no-workers' })).toBe(key({ id: 'no-workers' }));
    expect(key({ id: 'no-workers' })).not.toBe(key({ id: 'paused' }));
    expect(key({ id: 'no-workers' })).not.toBe(key(undefined));
  });
});
