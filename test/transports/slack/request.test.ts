import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ActionId, indexedActionId } from '../../../src/blocks/action-ids.js';
import { parseTarget, parseWords } from '../../../src/pipeline/parse.js';
import { isInPlaceAction, requestFromSlack } from '../../../src/transports/slack/request.js';
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

  it('groups quoted words the way the CLI does, so a deny reason can hold spaces', () => {
    const words = (text: string) => requestFromSlack(slashCommand(text, '/c'))?.words;
    expect(words('deny r-abc "wrong queue"')).toEqual(['deny', 'r-abc', 'wrong queue']);
    // Slack on macOS turns straight quotes into curly ones.
    expect(words('deny r-abc “wrong queue, see #inc-42”')).toEqual([
      'deny',
      'r-abc',
      'wrong queue, see #inc-42',
    ]);
    expect(parseWords(words('Deny r-abc "wrong   queue"') ?? [])).toEqual({
      verb: 'deny',
      args: ['r-abc', 'wrong   queue'],
    });
  });

  it('keeps the typed words on an unclosed quote, so no name is guessed into a real target', () => {
    const words = (text: string) => requestFromSlack(slashCommand(text, '/c'))?.words ?? [];
    expect(words('deny r-abc "wrong queue')).toEqual(['deny', 'r-abc', '"wrong', 'queue']);
    // A lone apostrophe is the common case in a free-text reason.
    expect(parseWords(words("deny r-abc it's the wrong queue")).args.slice(1).join(' ')).toBe(
      "it's the wrong queue",
    );
    const pause = parseWords(words('pause "pushizo/dispatch-ios'));
    expect(pause.verb).toBe('pause');
    // Not `pushizo`: the command answers "no system called…, did you mean pushizo" instead of acting.
    expect(parseTarget(pause.args[0]!)).toEqual({ system: '"pushizo', queue: 'dispatch-ios' });
  });

  it('never throws for any slash command text, since it runs after ack()', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', ' ', '"', "'", '“', '”', '‘', '’', '„', '\\', '\t') }),
        (text) => {
          const request = requestFromSlack(slashCommand(text, '/c'));
          expect(request?.via).toBe('slack');
          expect(Array.isArray(request?.words)).toBe(true);
        },
      ),
    );
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
