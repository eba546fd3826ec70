import type { SectionBlock } from '@slack/types';
import { describe, expect, it } from 'vitest';
import { ActionId, ActionIdPattern, baseActionId, wordsForAction } from '../../src/blocks/action-ids.js';
import type { Message } from '../../src/blocks/message.js';
import { renderText } from '../../src/blocks/render-text.js';
import { type StatusView, statusMessage } from '../../src/blocks/status.js';
import { validateMessage } from '../../src/blocks/validate.js';
import { NOW, pushizoNames, pushizoStatus, queue, systemsWithQueues, zeusStatus } from './fixtures.js';

const view = (systems: StatusView['systems'], scope = ''): StatusView => ({
  scope,
  generatedAt: NOW,
  systems,
});
const sectionTexts = (m: Message) =>
  m.blocks.filter((b): b is SectionBlock => b.type === 'section').map((b) => b.text?.text ?? '');
const allText = (m: Message) => sectionTexts(m).join('\n');
const buttons = (m: Message) =>
  m.blocks.flatMap((b) => (b.type === 'actions' ? b.elements : [])) as Array<{
    action_id: string;
    value: string;
    text: { text: string };
  }>;

describe('statusMessage', () => {
  it.each([0, 1, 12, 300])('stays inside Slack limits with %i queues across three systems', (n) => {
    const message = statusMessage(view(systemsWithQueues(n)), 'en');
    expect(validateMessage(message)).toEqual([]);
  });

  it('stays inside Slack limits for 1,000 queues in each of 40 systems', () => {
    const systems = Array.from({ length: 40 }, (_, i) => ({
      name: `system-${i}`,
      type: 'bullmq' as const,
      ok: true as const,
      status: { ...pushizoStatus(1000), name: `system-${i}` },
    }));
    const message = statusMessage(view(systems), 'en');
    expect(validateMessage(message)).toEqual([]);
    expect(renderText(message).text).toMatch(/… and \d+ more systems/);
  });

  it('shows every queue of the two seed systems with thousands separators, in name order', () => {
    const message = statusMessage(
      view([
        { name: 'pushizo', type: 'bullmq', ok: true, status: pushizoStatus(12) },
        { name: 'zeus', type: 'celery', ok: true, status: zeusStatus() },
      ]),
      'en',
    );
    const text = allText(message);
    for (const q of [
      'scheduler',
      'dispatch-ios',
      'maintenance',
      'celery:alarm_processing',
      'celery:default',
    ]) {
      expect(text).toContain(q);
    }
    expect(text).toContain('1,204,332');
    expect(text).toContain('48,211');
    expect(text).not.toContain('more queues');
    const rows = text.split('\n');
    expect(rows.findIndex((r) => r.startsWith('scheduler'))).toBeLessThan(
      rows.findIndex((r) => r.startsWith('audience')),
    );
  });

  it('flags the backlog, failing, paused and unconsumed queues in their rows', () => {
    const text = allText(
      statusMessage(view([{ name: 'pushizo', type: 'bullmq', ok: true, status: pushizoStatus(12) }]), 'en'),
    );
    const row = (name: string) => text.split('\n').find((r) => r.startsWith(`${name} `)) ?? '';
    expect(row('dispatch-ios')).toMatch(/backlog, failures$/);
    expect(row('audience')).toMatch(/backlog$/);
    expect(row('maintenance')).toMatch(/paused$/);
    expect(row('dispatch-hms')).toMatch(/no workers$/);
    expect(row('scheduler')).not.toMatch(/backlog|failures|paused|no workers/);
  });

  it('puts the worst queues first and summarises the rest when 300 queues do not fit', () => {
    const message = statusMessage(view(systemsWithQueues(300)), 'en');
    const text = allText(message);
    const rows = text.split('\n');
    const first = rows.find((r) => /^[a-z]/.test(r) && !r.startsWith('queue') && r.includes('  ')) ?? '';
    // dispatch-hms waits with nobody consuming it: the most severe flag of all.
    expect(first.startsWith('dispatch-hms')).toBe(true);
    expect(text.indexOf('audience')).toBeLessThan(text.indexOf('dispatch-tenant-'));
    expect(text).toMatch(
      /… and \d+ more queues: \d+ with failures.*; use `\/queue status pushizo\/&lt;queue&gt;`/,
    );
    const names = pushizoNames(294);
    const shown = rows.filter((r) => names.some((name) => r.startsWith(`${name} `))).length;
    const summarised = Number(/… and (\d+) more queues/.exec(text)?.[1]);
    expect(shown).toBeGreaterThan(40);
    expect(shown + summarised).toBe(294);
  });

  it('shows the Redis memory line with the limit, or "no limit", and the eviction warning', () => {
    const text = allText(
      statusMessage(
        view([
          { name: 'pushizo', type: 'bullmq', ok: true, status: pushizoStatus(3) },
          { name: 'zeus', type: 'celery', ok: true, status: zeusStatus() },
        ]),
        'en',
      ),
    );
    expect(text).toContain('Redis memory: 1.2 GB of 4 GB (30%) · policy `noeviction`');
    expect(text).toContain('Redis memory: 812 MB, no limit · policy `allkeys-lru`');
    expect(text).toContain('maxmemory-policy is `allkeys-lru`');
    expect(text).toContain('Workers: 2 · 2 tasks running · 9 unacked');
  });

  it('renders a system that failed as one error line while the others still report', () => {
    const message = statusMessage(view(systemsWithQueues(12)), 'en');
    const text = allText(message);
    expect(text).toContain(
      ':x: *billing* · BullMQ: Redis for `billing` is not answering (connect ETIMEDOUT)',
    );
    expect(text).toContain('dispatch-ios');
    expect(message.text).toContain('1 not answering');
  });

  it('offers Open DLQ for failing queues, most failures first, and a Refresh carrying the scope', () => {
    const message = statusMessage(view(systemsWithQueues(12), 'pushizo'), 'en');
    const b = buttons(message);
    const dlq = b.filter((x) => baseActionId(x.action_id) === ActionId.OpenDlq);
    expect(dlq[0]).toMatchObject({
      value: 'pushizo/dispatch-ios',
      text: { text: 'Open DLQ pushizo/dispatch-ios' },
    });
    expect(dlq.map((x) => x.value)).toContain('zeus/celery:alarm_processing');
    expect(dlq.map((x) => x.value)).not.toContain('pushizo/scheduler');
    for (const x of b) expect(x.action_id).toMatch(ActionIdPattern);
    expect(wordsForAction(dlq[1]!.action_id, dlq[1]!.value)).toEqual(['dlq', dlq[1]!.value]);
    const refresh = b.find((x) => x.action_id === ActionId.StatusRefresh);
    expect(refresh?.value).toBe('pushizo');
  });

  it('hides columns that are empty for every queue so the table stays narrow', () => {
    const status = {
      ...pushizoStatus(0),
      queues: [queue('scheduler', { waiting: 0 }), queue('events', { active: 2 })],
    };
    const text = allText(statusMessage(view([{ name: 'pushizo', type: 'bullmq', ok: true, status }]), 'en'));
    const heading = text.split('\n').find((r) => r.startsWith('queue')) ?? '';
    // Nothing waits: no oldest column either (a queue where jobs wait shows its age, or "unknown").
    expect(heading).toMatch(/^queue\s+waiting\s+active\s+failed$/);
    expect(
      Math.max(
        ...text
          .split('\n')
          .filter((r) => /^(queue|scheduler|events)/.test(r))
          .map((r) => r.length),
      ),
    ).toBeLessThan(50);
  });

  it('does not claim "no workers" when the workers could not be inspected', () => {
    const status = {
      ...zeusStatus(),
      workers: [],
      warnings: [{ code: 'WorkerInspectFailed' as const, params: { reason: 'pidbox timeout' } }],
    };
    const text = allText(statusMessage(view([{ name: 'zeus', type: 'celery', ok: true, status }]), 'en'));
    expect(text).not.toContain('no workers');
    expect(text).toContain('Workers could not be inspected (pidbox timeout)');
  });
});

describe('statusMessage warnings', () => {
  it('tells a result backend that is down apart from one that is not configured', () => {
    const render = (params?: Record<string, string>) =>
      allText(
        statusMessage(
          view([
            {
              name: 'zeus',
              type: 'celery',
              ok: true,
              status: { ...zeusStatus(), warnings: [{ code: 'ResultBackendMissing', params }] },
            },
          ]),
          'en',
        ),
      );
    expect(render({ reason: 'connect ETIMEDOUT' })).toContain(
      'The result backend is not answering (connect ETIMEDOUT): failures are not counted.',
    );
    expect(render()).toContain('No result backend configured: failures are not counted.');
  });
});
