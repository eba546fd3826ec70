import type { KnownBlock } from '@slack/types';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/blocks/message.js';
import { assertValidMessage, validateMessage } from '../../src/blocks/validate.js';

const s = (n: number) => 'x'.repeat(n);
const section = (text: string): KnownBlock => ({ type: 'section', text: { type: 'mrkdwn', text } });
const btn = (over: Record<string, unknown> = {}) => ({
  type: 'button',
  text: { type: 'plain_text', text: 'Go' },
  action_id: 'a',
  value: 'v',
  ...over,
});
const msg = (...blocks: unknown[]): Message => ({ text: 'fallback', blocks: blocks as KnownBlock[] });
const confirm = (over: Record<string, unknown> = {}) => ({
  title: { type: 'plain_text', text: 'Sure?' },
  text: { type: 'mrkdwn', text: 'Really' },
  confirm: { type: 'plain_text', text: 'Yes' },
  deny: { type: 'plain_text', text: 'No' },
  ...over,
});

describe('validateMessage', () => {
  it('accepts a message at every limit exactly', () => {
    const message = msg(
      { type: 'header', text: { type: 'plain_text', text: s(150) } },
      section(s(3000)),
      { type: 'section', fields: Array.from({ length: 10 }, () => ({ type: 'mrkdwn', text: s(200) })) },
      {
        type: 'actions',
        elements: Array.from({ length: 25 }, (_, i) =>
          btn({ action_id: `a${i}`, text: { type: 'plain_text', text: s(75) }, value: s(20) }),
        ),
      },
      { type: 'context', elements: Array.from({ length: 10 }, () => ({ type: 'mrkdwn', text: 'c' })) },
      { type: 'actions', elements: [btn({ confirm: confirm() })] },
    );
    expect(validateMessage({ ...message, text: s(4000) })).toEqual([]);
  });

  const cases: Array<{ name: string; message: Message; surface?: 'message' | 'modal'; expected: string }> = [
    {
      name: 'a section text over 3000 characters',
      message: msg(section('a'), section('b'), section('c'), section(s(3012))),
      expected: '/blocks/3/text/text: 3012 characters, at most 3000',
    },
    {
      name: 'an empty section text',
      message: msg(section('')),
      expected: '/blocks/0/text/text: empty, at least 1 character',
    },
    {
      name: 'a section with neither text nor fields',
      message: msg({ type: 'section' }),
      expected: '/blocks/0: needs text or fields',
    },
    {
      name: 'more than 10 section fields',
      message: msg({
        type: 'section',
        fields: Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'f' })),
      }),
      expected: '/blocks/0/fields: 11 fields, at most 10',
    },
    {
      name: 'a section field over 2000 characters',
      message: msg({ type: 'section', fields: [{ type: 'mrkdwn', text: s(2001) }] }),
      expected: '/blocks/0/fields/0/text: 2001 characters, at most 2000',
    },
    {
      name: 'a header over 150 characters',
      message: msg({ type: 'header', text: { type: 'plain_text', text: s(151) } }),
      expected: '/blocks/0/text/text: 151 characters, at most 150',
    },
    {
      name: 'a header in mrkdwn',
      message: msg({ type: 'header', text: { type: 'mrkdwn', text: 'h' } }),
      expected: '/blocks/0/text/type: "mrkdwn", expected plain_text',
    },
    {
      name: 'more than 50 blocks in a message',
      message: msg(...Array.from({ length: 51 }, () => ({ type: 'divider' }))),
      expected: '/blocks: 51 blocks, at most 50',
    },
    {
      name: 'more than 100 blocks in a modal',
      message: msg(...Array.from({ length: 101 }, () => ({ type: 'divider' }))),
      surface: 'modal',
      expected: '/blocks: 101 blocks, at most 100',
    },
    {
      name: 'more than 25 elements in an actions block',
      message: msg({
        type: 'actions',
        elements: Array.from({ length: 26 }, (_, i) => btn({ action_id: `a${i}` })),
      }),
      expected: '/blocks/0/elements: 26 elements, at most 25',
    },
    {
      name: 'an empty actions block',
      message: msg({ type: 'actions', elements: [] }),
      expected: '/blocks/0/elements: needs 1 to 25 elements',
    },
    {
      name: 'more than 10 context elements',
      message: msg({
        type: 'context',
        elements: Array.from({ length: 11 }, () => ({ type: 'mrkdwn', text: 'c' })),
      }),
      expected: '/blocks/0/elements: 11 elements, at most 10',
    },
    {
      name: 'a button label over 75 characters',
      message: msg({ type: 'actions', elements: [btn({ text: { type: 'plain_text', text: s(76) } })] }),
      expected: '/blocks/0/elements/0/text/text: 76 characters, at most 75',
    },
    {
      name: 'a button value over 2000 characters',
      message: msg({ type: 'actions', elements: [btn({ value: s(2001) })] }),
      expected: '/blocks/0/elements/0/value: 2001 characters, at most 2000',
    },
    {
      name: 'a button url over 3000 characters',
      message: msg({ type: 'actions', elements: [btn({ url: `https://x/${s(3000)}` })] }),
      expected: '/blocks/0/elements/0/url: 3010 characters, at most 3000',
    },
    {
      name: 'an action_id over 255 characters',
      message: msg({ type: 'actions', elements: [btn({ action_id: s(256) })] }),
      expected: '/blocks/0/elements/0/action_id: 256 characters, at most 255',
    },
    {
      name: 'two buttons with one action_id in a block',
      message: msg({ type: 'actions', elements: [btn(), btn()] }),
      expected: '/blocks/0/elements/1/action_id: "a" is already used by /blocks/0/elements/0',
    },
    {
      name: 'a block_id over 255 characters',
      message: msg({ type: 'divider', block_id: s(256) }),
      expected: '/blocks/0/block_id: 256 characters, at most 255',
    },
    {
      name: 'a block_id used twice',
      message: msg({ type: 'divider', block_id: 'b' }, { type: 'divider', block_id: 'b' }),
      expected: '/blocks/1/block_id: "b" is already used by /blocks/0',
    },
    {
      name: 'a confirm title over 100 characters',
      message: msg({
        type: 'actions',
        elements: [btn({ confirm: confirm({ title: { type: 'plain_text', text: s(101) } }) })],
      }),
      expected: '/blocks/0/elements/0/confirm/title/text: 101 characters, at most 100',
    },
    {
      name: 'a confirm text over 300 characters',
      message: msg({
        type: 'actions',
        elements: [btn({ confirm: confirm({ text: { type: 'mrkdwn', text: s(301) } }) })],
      }),
      expected: '/blocks/0/elements/0/confirm/text/text: 301 characters, at most 300',
    },
    {
      name: 'a confirm button over 30 characters',
      message: msg({
        type: 'actions',
        elements: [btn({ confirm: confirm({ deny: { type: 'plain_text', text: s(31) } }) })],
      }),
      expected: '/blocks/0/elements/0/confirm/deny/text: 31 characters, at most 30',
    },
    {
      name: 'a section accessory button over its limits',
      message: msg({
        type: 'section',
        text: { type: 'mrkdwn', text: 't' },
        accessory: btn({ value: s(2001) }),
      }),
      expected: '/blocks/0/accessory/value: 2001 characters, at most 2000',
    },
    {
      name: 'a top-level text over 4000 characters',
      message: { text: s(4001), blocks: [] },
      expected: '/text: 4001 characters, at most 4000',
    },
    {
      name: 'a table over 100 rows',
      message: msg({
        type: 'table',
        rows: Array.from({ length: 101 }, () => [{ type: 'raw_text', text: 'r' }]),
      }),
      expected: '/blocks/0/rows: 101 rows, at most 100',
    },
    {
      name: 'a table row over 20 cells',
      message: msg({
        type: 'table',
        rows: [Array.from({ length: 21 }, () => ({ type: 'raw_text', text: 'c' }))],
      }),
      expected: '/blocks/0/rows/0: 21 cells, at most 20',
    },
    {
      name: 'a markdown block over 12000 characters',
      message: msg({ type: 'markdown', text: s(12_001) }),
      expected: '/blocks/0/text: 12001 characters, at most 12000',
    },
    {
      name: "text across all blocks past Slack's cumulative cap",
      message: msg(section(s(2900)), section(s(2900)), section(s(2900)), section(s(2900))),
      expected: '/blocks: 11600 characters of text in all blocks, at most 10000',
    },
  ];

  it.each(cases)('reports $name', ({ message, surface, expected }) => {
    expect(validateMessage(message, surface)).toContain(expected);
  });

  it('lists every violation, not only the first', () => {
    const problems = validateMessage(
      msg(section(s(3001)), { type: 'header', text: { type: 'plain_text', text: s(151) } }),
    );
    expect(problems).toEqual([
      '/blocks/0/text/text: 3001 characters, at most 3000',
      '/blocks/1/text/text: 151 characters, at most 150',
    ]);
  });

  it('assertValidMessage throws an error naming each violation and passes a valid message', () => {
    expect(() => assertValidMessage(msg(section('fine')))).not.toThrow();
    expect(() => assertValidMessage(msg(section(s(3001)), section('')))).toThrow(
      /\/blocks\/0\/text\/text: 3001 characters[\s\S]*\/blocks\/1\/text\/text: empty/,
    );
  });
});
