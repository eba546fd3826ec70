import { describe, expect, it } from 'vitest';
import { mrkdwnToText, renderText } from '../../src/blocks/render-text.js';
import { statusMessage } from '../../src/blocks/status.js';
import { NOW, systemsWithQueues } from './fixtures.js';

describe('renderText', () => {
  it('renders a status message as readable lines with the table intact and the buttons numbered', () => {
    const { text, buttons } = renderText(
      statusMessage({ scope: '', generatedAt: NOW, systems: systemsWithQueues(18) }, 'en'),
    );
    const lines = text.split('\n');
    expect(lines[0]).toBe('Queue status');
    expect(lines[1]).toBe('============');
    expect(text).toContain('pushizo · BullMQ · 12 queues · ⚠ 7 need attention');
    expect(lines.find((l) => l.startsWith('dispatch-ios'))).toMatch(
      /^dispatch-ios\s+48,211\s+4\s+120\s+0\s+312\s+3h 12m\s+backlog, failures$/,
    );
    expect(text).toContain('✖ billing · BullMQ: Redis for `billing` is not answering');
    expect(text).not.toMatch(/```|\*pushizo\*|:warning:/);
    expect(text).toContain('[1] Open DLQ pushizo/dispatch-ios');
    expect(text).toMatch(/\[\d+\] Refresh$/);
    expect(buttons[0]).toEqual({
      index: 1,
      label: 'Open DLQ pushizo/dispatch-ios',
      actionId: 'queue_ops.dlq.open',
      value: 'pushizo/dispatch-ios',
    });
    expect(buttons.map((b) => b.index)).toEqual(buttons.map((_, i) => i + 1));
  });

  it('turns Slack links, mentions and dates into text and keeps code blocks as written', () => {
    expect(mrkdwnToText('see <https://example.com|the docs> and <@U123>, <!here>')).toBe(
      'see the docs (https://example.com) and @U123, @here',
    );
    expect(mrkdwnToText('<!date^1700000000^{date}|Nov 14>')).toBe('Nov 14');
    expect(mrkdwnToText('*a\u200b*\u200bb* and *bold*')).toBe('a*b and bold');
    expect(mrkdwnToText('```\n*x*  &lt;q&gt;\n```')).toBe('*x*  <q>');
  });

  it('renders headers, fields, context, dividers and section accessories', () => {
    const { text, buttons } = renderText({
      text: 'x',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Approve?' } },
        {
          type: 'section',
          fields: [
            { type: 'mrkdwn', text: '*Who*' },
            { type: 'plain_text', text: 'U1' },
          ],
        },
        { type: 'divider' },
        {
          type: 'context',
          elements: [
            { type: 'mrkdwn', text: 'a' },
            { type: 'mrkdwn', text: 'b' },
          ],
        },
        {
          type: 'section',
          text: { type: 'mrkdwn', text: 'req' },
          accessory: {
            type: 'button',
            text: { type: 'plain_text', text: 'Approve' },
            action_id: 'queue_ops.request.approve',
            value: 'r1',
          },
        },
      ],
    });
    expect(text).toBe(`Approve?\n========\n\nWho\nU1\n\n${'─'.repeat(40)}\n\na · b\n\nreq\n[1] Approve`);
    expect(buttons).toEqual([
      { index: 1, label: 'Approve', actionId: 'queue_ops.request.approve', value: 'r1' },
    ]);
  });
});
