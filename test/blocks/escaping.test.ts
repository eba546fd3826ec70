import { describe, expect, it } from 'vitest';
import type { SystemStatus } from '../../src/backends/queue-backend.js';
import { dlqMessage } from '../../src/blocks/dlq.js';
import { errorMessage } from '../../src/blocks/error.js';
import { helpMessage } from '../../src/blocks/help.js';
import { fitEscaped, header } from '../../src/blocks/kit.js';
import type { Message } from '../../src/blocks/message.js';
import { escapeMrkdwn } from '../../src/blocks/mrkdwn.js';
import { renderText } from '../../src/blocks/render-text.js';
import { statusMessage } from '../../src/blocks/status.js';
import { validateMessage } from '../../src/blocks/validate.js';
import { workersMessage } from '../../src/blocks/workers.js';
import { NOW, queue, renderedStrings } from './fixtures.js';

const EVIL = ['<!channel>', '<@U123>', '<http://x|y>', 'a & b', '*bold*', '`tick`', '<!subteam^S1>'];
const evil = (i: number) => `${EVIL[i % EVIL.length]} ${EVIL[(i + 1) % EVIL.length]}`;

/** No raw `<` (Slack's link and mention syntax) and every `&` an entity, in everything Slack renders. */
function expectSafe(m: Message): void {
  for (const s of [...renderedStrings(m.blocks), m.text]) {
    expect(s).not.toContain('<!channel>');
    expect(s).not.toContain('<@U123>');
    expect(s).not.toContain('<http://x|y>');
    expect(s).not.toContain('<');
    expect(s).not.toMatch(/&(?!amp;|lt;|gt;)/);
  }
}

const evilStatus = (): SystemStatus => ({
  name: evil(0),
  type: 'bullmq',
  redis: { usedMemoryBytes: 10, maxMemoryBytes: 100, maxMemoryPolicy: evil(1) },
  queues: Array.from({ length: 30 }, (_, i) =>
    queue(evil(i) + i, {
      waiting: i * 100,
      failed: i % 2,
      isPaused: i % 5 === 0,
      oldestWaitingSeconds: i * 20,
    }),
  ),
  workers: [
    {
      name: evil(2),
      queues: [evil(3)],
      activeTasks: [{ id: evil(4), name: evil(5), startedAt: NOW.getTime() - 1000 }],
    },
  ],
  warnings: [
    { code: 'EvictionPolicy', params: { policy: evil(3) } },
    { code: 'WorkerInspectFailed', params: { reason: evil(4) } },
  ],
});

describe('escaping of names, errors and job fields', () => {
  it('status never lets a queue, system, policy, warning or error text form a mention or link', () => {
    const m = statusMessage(
      {
        scope: evil(6),
        generatedAt: NOW,
        systems: [
          { name: evil(0), type: 'bullmq', ok: true, status: evilStatus() },
          { name: evil(1), type: 'celery', ok: false, error: `Redis for ${evil(2)} said ${evil(3)}` },
        ],
      },
      'en',
    );
    expect(validateMessage(m)).toEqual([]);
    expectSafe(m);
  });

  it('dlq never lets a job id, name or error form a mention or link', () => {
    const jobs = Array.from({ length: 30 }, (_, i) => ({
      id: evil(i),
      name: evil(i + 1),
      error: `${evil(i + 2)}\nsecond line ${evil(i + 3)}`,
      attempts: 1,
      failedAt: NOW.getTime() - i * 1000,
    }));
    const m = dlqMessage(
      {
        system: evil(0),
        type: 'bullmq',
        sample: {
          queue: evil(1),
          total: 30,
          jobs,
          topErrors: [{ error: evil(2), count: 3 }],
          groupedOver: 30,
        },
        limit: 30,
        generatedAt: NOW,
      },
      'en',
    );
    expect(validateMessage(m)).toEqual([]);
    expectSafe(m);
  });

  it('workers never lets a worker, queue, task name or detail form a mention or link', () => {
    const m = workersMessage(
      {
        generatedAt: NOW,
        scope: evil(0),
        systems: [
          {
            name: evil(0),
            type: 'celery',
            ok: true,
            workers: [...evilStatus().workers, { name: 'w', details: { [evil(1)]: evil(2) } }],
          },
          { name: evil(3), type: 'celery', ok: false, error: evil(4) },
        ],
      },
      'en',
    );
    expectSafe(m);
  });

  it('help and error messages escape what they are given', () => {
    expectSafe(helpMessage('en', [{ verb: evil(0), usage: evil(1), summary: evil(2) }]));
    expectSafe(errorMessage(`No queue ${evil(3)}; ${evil(4)}`));
  });

  it('the text renderer turns the escaped names back into what Redis holds', () => {
    const m = statusMessage(
      {
        scope: '',
        generatedAt: NOW,
        systems: [
          { name: 'pushizo', type: 'bullmq', ok: true, status: { ...evilStatus(), name: 'pushizo' } },
        ],
      },
      'en',
    );
    const { text, buttons } = renderText(m);
    expect(text).toContain('<!channel> <@U123>');
    expect(text).toContain('a & b');
    expect(text).not.toContain('&lt;');
    expect(text).not.toContain('&amp;');
    expect(buttons.some((b) => b.label.startsWith('Open DLQ pushizo/<@U123>'))).toBe(true);
  });
});

describe('cutting long names', () => {
  it('never cuts an emoji in half when a name is too long for its place', () => {
    const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    for (let pad = 0; pad < 4; pad++) {
      const longName = `${'q'.repeat(60 + pad)}${'🚀'.repeat(80)}`;
      const m = statusMessage(
        {
          scope: longName,
          generatedAt: NOW,
          systems: [{ name: longName, type: 'bullmq', ok: false, error: longName.repeat(10) }],
        },
        'en',
      );
      for (const s of [...renderedStrings(m.blocks), m.text]) expect(s).not.toMatch(loneSurrogate);
    }
  });
});

describe('characters that hide or reorder text', () => {
  it('shows zero-width and bidi characters as code points, keeping emoji sequences joined', () => {
    expect(escapeMrkdwn('dispatch\u200b-ios')).toBe('dispatch[U+200B]-ios');
    expect(escapeMrkdwn('exe.\u202egpj')).toBe('exe.[U+202E]gpj');
    expect(escapeMrkdwn('a\u200db \u2066x\u2069 \ufeff')).toBe('a[U+200D]b [U+2066]x[U+2069] [U+FEFF]');
    // A joiner inside an emoji sequence is what draws one emoji (👩‍💻, 👍🏽‍…): kept.
    expect(escapeMrkdwn('👩\u200d💻')).toBe('👩\u200d💻');
    expect(header('q\u202e').text.text).toBe('q[U+202E]');
  });

  it('turns a run of two or more backticks into quotes, so it cannot open a code block', () => {
    expect(escapeMrkdwn('a ``` b `` c ` d')).toBe("a ''' b '' c ` d");
  });

  it('cuts a name that escapes long to the longest start that fits, not to a bare ellipsis', () => {
    const out = fitEscaped(`w${'<>&'.repeat(40)}`, 80);
    expect(out.length).toBeLessThanOrEqual(80);
    expect(out.startsWith('w&lt;&gt;&amp;')).toBe(true);
    expect(out.endsWith('…')).toBe(true);
  });
});
