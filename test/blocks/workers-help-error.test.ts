import { describe, expect, it } from 'vitest';
import type { WorkerInfo } from '../../src/backends/queue-backend.js';
import { ActionId } from '../../src/blocks/action-ids.js';
import { errorMessage } from '../../src/blocks/error.js';
import { helpMessage } from '../../src/blocks/help.js';
import { renderText } from '../../src/blocks/render-text.js';
import { validateMessage } from '../../src/blocks/validate.js';
import { workersMessage } from '../../src/blocks/workers.js';
import { NOW, PUSHIZO_QUEUES, zeusStatus } from './fixtures.js';

describe('workersMessage', () => {
  it('shows how many tasks a Celery worker reserved and which runs next, never their arguments', () => {
    const [first, ...rest] = zeusStatus().workers;
    const reserving = { ...first!, reserved: 3, reservedTasks: [{ id: 't-1', name: 'zeus.ota.push' }] };
    const out = renderText(
      workersMessage(
        {
          generatedAt: NOW,
          systems: [{ name: 'zeus', type: 'celery', ok: true, workers: [reserving, ...rest] }],
        },
        'en',
      ),
    ).text;
    expect(out).toContain('3 reserved (next: `zeus.ota.push`)');
  });

  it('lists each worker with its queues, running count and longest-running task, never its arguments', () => {
    const m = workersMessage(
      {
        generatedAt: NOW,
        systems: [
          { name: 'zeus', type: 'celery', ok: true, workers: zeusStatus().workers },
          {
            name: 'billing',
            type: 'bullmq',
            ok: false,
            error: 'Redis for `billing` is not answering (ECONNREFUSED)',
          },
        ],
      },
      'en',
    );
    expect(validateMessage(m)).toEqual([]);
    const out = renderText(m).text;
    expect(out).toContain('zeus · Celery · 2 workers · 2 tasks running');
    expect(out).toContain(
      '`celery@zeus-worker-1` · queues: celery, celery:default, celery:alarm_processing, celery:measurement_processing · 2 running · longest: `zeus.alarms.process_alarm` for 12m 34s',
    );
    expect(out).not.toContain('zeus.measurements.ingest');
    expect(out).toContain('✖ billing · BullMQ: Redis for `billing` is not answering (ECONNREFUSED)');
    expect(renderText(m).buttons).toEqual([
      { index: 1, label: 'Refresh', actionId: ActionId.WorkersRefresh, value: '' },
    ]);
  });

  it('stays inside Slack limits with 2,000 workers, busiest first and the rest counted', () => {
    const workers: WorkerInfo[] = Array.from({ length: 2000 }, (_, i) => ({
      name: `worker-dispatch-${i}`,
      queues: PUSHIZO_QUEUES,
      active: i === 1500 ? 9 : 0,
      activeTasks: i === 1500 ? [{ id: 't', name: 'send-push', startedAt: NOW.getTime() - 5000 }] : [],
    }));
    const m = workersMessage(
      {
        generatedAt: NOW,
        scope: 'pushizo',
        systems: [{ name: 'pushizo', type: 'bullmq', ok: true, workers }],
      },
      'en',
    );
    expect(validateMessage(m)).toEqual([]);
    const out = renderText(m).text;
    expect(out).toContain(
      '`worker-dispatch-1500` · queues: scheduler, audience, dispatch-ios, dispatch-android, dispatch-hms, dispatch-web, +6 more · 9 running',
    );
    expect(out).toMatch(/… and \d+ more workers, less busy\./);
    expect(renderText(m).buttons[0]?.value).toBe('pushizo');
  });

  it('says when a system has no workers connected', () => {
    const out = renderText(
      workersMessage(
        { generatedAt: NOW, systems: [{ name: 'zeus', type: 'celery', ok: true, workers: [] }] },
        'en',
      ),
    ).text;
    expect(out).toContain('No workers connected.');
  });
});

describe('helpMessage', () => {
  it('lists the read-path commands with their usage', () => {
    const m = helpMessage('en');
    expect(validateMessage(m)).toEqual([]);
    const out = renderText(m).text;
    expect(out).toContain('`/queue status [system[/queue]]`');
    expect(out).toContain(
      '`/queue dlq <system>/<queue> [limit]` — the newest failed jobs (default 10, at most 100)',
    );
    expect(out).toContain('`/queue workers [system]`');
    expect(out).toContain('`/queue help`');
  });

  it('adds later verbs and lets an entry replace a default one', () => {
    const m = helpMessage('en', [
      { verb: 'pause', usage: 'pause <system>/<queue>', summary: 'Stop workers picking up jobs.' },
      { verb: 'help', usage: 'help [verb]', summary: 'This list, or one command.' },
    ]);
    const out = renderText(m).text;
    expect(out).toContain('`/queue pause <system>/<queue>` — Stop workers picking up jobs.');
    expect(out).toContain('`/queue help [verb]`');
    expect(out).not.toContain('`/queue help` —');
    expect(m.text).toBe('/queue commands: status, dlq, workers, pause, help');
  });

  it('stays inside Slack limits with 200 verbs', () => {
    const verbs = Array.from({ length: 200 }, (_, i) => ({
      verb: `v${i}`,
      usage: `v${i} <x>`,
      summary: 's'.repeat(80),
    }));
    expect(validateMessage(helpMessage('en', verbs))).toEqual([]);
  });
});

describe('errorMessage', () => {
  it('is one warning section with the line escaped', () => {
    const m = errorMessage('There is no queue called `a<b>&c`.');
    expect(m.blocks).toEqual([
      {
        type: 'section',
        text: { type: 'mrkdwn', text: ':warning: There is no queue called `a&lt;b&gt;&amp;c`.' },
      },
    ]);
    expect(m.text).toBe('There is no queue called `a&lt;b&gt;&amp;c`.');
  });

  it('cuts a huge line to stay inside Slack limits', () => {
    expect(validateMessage(errorMessage('<'.repeat(5000)))).toEqual([]);
  });
});
