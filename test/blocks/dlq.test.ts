import type { SectionBlock } from '@slack/types';
import { describe, expect, it } from 'vitest';
import { ActionId } from '../../src/blocks/action-ids.js';
import { dlqMessage } from '../../src/blocks/dlq.js';
import type { Message } from '../../src/blocks/message.js';
import { renderText } from '../../src/blocks/render-text.js';
import { validateMessage } from '../../src/blocks/validate.js';
import { dlqSample, failedJobs, NOW } from './fixtures.js';

const texts = (m: Message) =>
  m.blocks
    .filter((b): b is SectionBlock => b.type === 'section')
    .map((b) => b.text?.text ?? '')
    .join('\n');

describe('dlqMessage', () => {
  it('says how to see one listed job in full: the job command, in its queue for BullMQ, by task id for Celery', () => {
    const view = { sample: dlqSample('dispatch-ios', failedJobs(3), 3), limit: 3, generatedAt: NOW };
    const bullmq = renderText(dlqMessage({ ...view, system: 'pushizo', type: 'bullmq' }, 'en')).text;
    const first = failedJobs(3)[0]!.id;
    expect(bullmq).toContain(`\`/queue job pushizo/dispatch-ios ${first}\` with its id`);
    const celery = renderText(dlqMessage({ ...view, system: 'zeus', type: 'celery' }, 'en')).text;
    expect(celery).toContain(`\`/queue job zeus ${first}\``);
  });

  it('shows the total, the top errors with counts and the jobs newest first with relative and UTC times', () => {
    const m = dlqMessage(
      {
        system: 'pushizo',
        type: 'bullmq',
        sample: dlqSample('dispatch-ios', failedJobs(10), 312),
        limit: 10,
        generatedAt: NOW,
      },
      'en',
    );
    expect(validateMessage(m)).toEqual([]);
    const out = renderText(m).text;
    expect(out).toContain('DLQ pushizo/dispatch-ios: 312 failed');
    expect(out).toContain('The newest 10 of 312');
    expect(out).toContain('212× ProviderError: APNs answered 429');
    expect(out).toContain('64× TimeoutError: provider did not answer within 10000 ms');
    expect(out).toContain('`183440` send-push · 3 attempts · 2m 2s ago · 2026-03-01 10:02 UTC');
    expect(out.indexOf('183442')).toBeLessThan(out.indexOf('183433'));
    expect(renderText(m).buttons).toEqual([
      { index: 1, label: 'Refresh', actionId: ActionId.DlqRefresh, value: 'pushizo/dispatch-ios' },
    ]);
  });

  it('shows only the first line of an error', () => {
    const jobs = failedJobs(1);
    jobs[0]!.error = 'ValueError: bad token\n  File "/app/tasks.py", line 12, in send\n    raise';
    const out = texts(
      dlqMessage(
        { system: 'zeus', type: 'celery', sample: dlqSample('celery', jobs), limit: 10, generatedAt: NOW },
        'en',
      ),
    );
    expect(out).toContain('ValueError: bad token');
    expect(out).not.toContain('tasks.py');
  });

  it('writes a run of the same error once', () => {
    const jobs = failedJobs(3).map((j) => ({ ...j, error: 'TimeoutError: provider did not answer' }));
    const out = texts(
      dlqMessage(
        {
          system: 'pushizo',
          type: 'bullmq',
          sample: dlqSample('webhooks', jobs),
          limit: 10,
          generatedAt: NOW,
        },
        'en',
      ),
    );
    expect(out.split('(same error as above)').length - 1).toBe(2);
  });

  it.each([
    ['BullMQ', false],
    ['Celery', true],
  ])(
    'keeps 100 %s jobs with 2000-character errors inside Slack limits, summarising what does not fit',
    (_, celery) => {
      const jobs = failedJobs(100, 2000, celery);
      const m = dlqMessage(
        {
          system: 'zeus',
          type: 'celery',
          sample: dlqSample('celery:alarm_processing', jobs, 4120),
          limit: 100,
          generatedAt: NOW,
        },
        'en',
      );
      expect(validateMessage(m)).toEqual([]);
      const out = renderText(m).text;
      expect(out).toContain(jobs[0]!.id);
      const shown = jobs.filter((j) => out.includes(j.id)).length;
      expect(shown).toBeGreaterThanOrEqual(40);
      if (shown < 100) {
        expect(out).toContain(`… and ${100 - shown} older jobs not shown here`);
        expect(out).toContain('queue-ops --json dlq zeus/celery:alarm_processing 100');
        // What is shown is the newest: a prefix of the sample.
        expect(jobs.slice(0, shown).every((j) => out.includes(j.id))).toBe(true);
      }
    },
  );

  it('says so when the queue has no failed jobs', () => {
    const m = dlqMessage(
      {
        system: 'pushizo',
        type: 'bullmq',
        sample: { queue: 'scheduler', total: 0, jobs: [], topErrors: [], groupedOver: 0 },
        limit: 10,
        generatedAt: NOW,
      },
      'en',
    );
    expect(validateMessage(m)).toEqual([]);
    expect(renderText(m).text).toContain('No failed jobs in `pushizo/scheduler`.');
  });

  it('says "failed at an unknown time" when a failure has no timestamp', () => {
    const jobs = failedJobs(1).map((j) => ({ ...j, failedAt: null }));
    const out = texts(
      dlqMessage(
        { system: 'pushizo', type: 'bullmq', sample: dlqSample('events', jobs), limit: 10, generatedAt: NOW },
        'en',
      ),
    );
    expect(out).toContain('failed at an unknown time');
  });
});
