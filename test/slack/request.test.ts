import { describe, expect, it } from 'vitest';
import { ActionId, indexedActionId } from '../../src/blocks/action-ids.js';
import { isInPlaceAction, requestFromSlack } from '../../src/transports/slack/request.js';
import { buttonClick, slashCommand } from './harness.js';

describe('requestFromSlack', () => {
  it('turns a slash command into the words after /queue, with the user and channel', () => {
    expect(requestFromSlack(slashCommand('  dlq   pushizo/dispatch-ios 20 ', '/commands/x'))).toEqual({
      actor: { id: 'U0ALICE', name: 'alice' },
      via: 'slack',
      channel: 'C0INCIDENT',
      words: ['dlq', 'pushizo/dispatch-ios', '20'],
      locale: 'en',
    });
  });

  it('turns a button into the command it stands for, keeping the action id, value and message ts', () => {
    const request = requestFromSlack(
      buttonClick(indexedActionId(ActionId.OpenDlq, 3), 'zeus/celery:alarm_processing', '/a'),
    );
    expect(request).toMatchObject({
      actor: { id: 'U0ALICE' },
      channel: 'C0INCIDENT',
      words: ['dlq', 'zeus/celery:alarm_processing'],
      action: {
        actionId: 'queue_ops.dlq.open#3',
        value: 'zeus/celery:alarm_processing',
        messageTs: '1700000000.000100',
      },
    });
    expect(isInPlaceAction(request?.action?.actionId ?? '')).toBe(true);
  });

  it('treats approve and deny as answers of their own, not in-place refreshes', () => {
    expect(isInPlaceAction(ActionId.Approve)).toBe(false);
    expect(isInPlaceAction(ActionId.Deny)).toBe(false);
    expect(requestFromSlack(buttonClick(ActionId.Approve, 'r42', '/a'))?.words).toEqual(['approve', 'r42']);
  });

  it('refuses action ids and values queue-ops never issues', () => {
    expect(requestFromSlack(buttonClick('queue_ops.queue.purge', 'pushizo/x', '/a'))).toBeUndefined();
    expect(requestFromSlack(buttonClick('other_app.refresh', '', '/a'))).toBeUndefined();
    expect(requestFromSlack(buttonClick(ActionId.Approve, 'r42 --force', '/a'))).toBeUndefined();
    expect(requestFromSlack(buttonClick(ActionId.Approve, 'x'.repeat(300), '/a'))).toBeUndefined();
    expect(requestFromSlack({ type: 'view_submission' })).toBeUndefined();
    expect(requestFromSlack('payload')).toBeUndefined();
  });
});
