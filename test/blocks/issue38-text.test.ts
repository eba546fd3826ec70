import { describe, expect, it } from 'vitest';
import { renderText } from '../../src/blocks/render-text.js';
import { resultsMessage } from '../../src/blocks/results.js';
import { workersMessage } from '../../src/blocks/workers.js';
import { parseTrendArgs } from '../../src/commands/trend.js';
import { isOpsError } from '../../src/errors.js';
import { messages } from '../../src/i18n/index.js';

/** issue 38 §6, the text items that are pure builders: each as a person reads it, in both locales. */
const now = new Date('2026-12-07T04:30:00Z');

describe('workers after a scale', () => {
  const text = (locale: 'en' | 'tr') =>
    renderText(
      workersMessage(
        {
          generatedAt: now,
          systems: [
            {
              name: 'zeus',
              type: 'celery',
              ok: true,
              workers: [
                { name: 'w1@zeus', queues: ['celery'], details: { concurrency: 2, processes: 3, pid: 41 } },
              ],
            },
          ],
        },
        locale,
      ),
    ).text;

  it('names the pool’s processes and the concurrency it started with, not two numbers that disagree', () => {
    expect(text('en')).toContain('3 pool processes (started with concurrency 2) · pid 41');
    expect(text('en')).not.toContain('concurrency 2 ·');
    expect(text('tr')).toContain('3 havuz süreci (eşzamanlılık 2 ile başladı) · pid 41');
  });
});

describe('trend’s usage line', () => {
  const usageOf = (via: 'slack' | 'cli', locale: 'en' | 'tr') => {
    try {
      parseTrendArgs([], locale, via);
    } catch (error) {
      if (isOpsError(error)) return messages(locale).errors.describe(error);
    }
    throw new Error('no usage error');
  };

  it('starts with /queue, and offers --out only on the command line', () => {
    expect(usageOf('slack', 'en')).toContain('Usage: `/queue trend <system>/<queue> [1h|6h|24h]`');
    expect(usageOf('slack', 'en')).not.toContain('--out');
    expect(usageOf('cli', 'en')).toContain('`/queue trend <system>/<queue> [1h|6h|24h] [--out file.png]`');
    expect(usageOf('slack', 'tr')).toContain('`/queue trend <sistem>/<kuyruk> [1h|6h|24h]`');
    expect(usageOf('slack', 'tr')).not.toContain('--out');
  });
});

describe('results’ hint', () => {
  it('names the system in the command to run', () => {
    const reading = {
      count: 12,
      withoutTtl: 3,
      bytes: 4096,
      oldest: null,
      sample: { scanned: 40, total: 40, complete: true, stoppedBy: 'done' as const },
      estimate: null,
    };
    for (const locale of ['en', 'tr'] as const) {
      const text = renderText(resultsMessage({ system: 'zeus', reading, generatedAt: now }, locale)).text;
      expect(text).toContain('/queue expire-results zeus');
      expect(text).not.toMatch(/<system>|<sistem>/);
    }
  });
});

describe('a long stack frame', () => {
  it('is cut in the middle of its path, keeping the function, the file and its line', async () => {
    const { shortFrame } = await import('../../src/blocks/job.js');
    const deep = `/srv/app/${'node_modules/some-package/'.repeat(10)}lib/send.js`;
    const cut = shortFrame(`    at sendPush (${deep}:42:7)`, 200);
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut).toMatch(/^at sendPush \(\/srv\/app\/.*….*\/lib\/send\.js:42:7\)$/);
    expect(shortFrame('at short (/a/b.js:1:2)', 200)).toBe('at short (/a/b.js:1:2)');
  });
});
