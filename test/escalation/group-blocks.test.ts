import { describe, expect, it } from 'vitest';
import { validateMessage } from '../../src/blocks/validate.js';
import { groupMessage } from '../../src/escalation/blocks.js';
import { sampleAlert } from '../store/escalation-contract.js';

const now = new Date('2030-01-01T10:30:00.000Z');
const settings = { clearAfterSamples: 2, escalateTo: ['S0PLATFORM'], maxAlertsPerMessage: 20 };
const long = (n: number) => `${'q'.repeat(120)}-${n}`;

describe('a group message within Slack’s limits', () => {
  it('20 firing alerts with long names, their buttons and 10 resolved ones fit one valid message', () => {
    const firing = Array.from({ length: 20 }, (_, i) =>
      sampleAlert({
        id: `a-f${i}`,
        key: `k|${i}`,
        queue: long(i),
        subject: `pushizo/${long(i)}`,
        groupId: 'g-1',
      }),
    );
    const resolved = Array.from({ length: 10 }, (_, i) =>
      sampleAlert({
        id: `a-r${i}`,
        key: `r|${i}`,
        queue: long(i),
        subject: `pushizo/${long(i)}`,
        status: 'resolved',
        resolvedAt: '2030-01-01T10:20:00.000Z',
        groupId: 'g-1',
      }),
    );
    const message = groupMessage([...firing, ...resolved], 'en', now, settings);
    expect(validateMessage(message, 'message')).toEqual([]);
    expect(message.blocks.filter((b) => b.type === 'actions')).toHaveLength(20);
    // A 21st makes it a summary without buttons, still valid.
    const storm = groupMessage(
      [...firing, sampleAlert({ id: 'a-x', key: 'k|x', groupId: 'g-1' })],
      'tr',
      now,
      settings,
    );
    expect(validateMessage(storm, 'message')).toEqual([]);
    expect(storm.blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(JSON.stringify(storm.blocks)).toContain('`/queue alerts` hepsini');
  });

  it('with the longest job lists (the longest ids, names and errors) each alert keeps its jobs and stays valid', () => {
    const jobsOf = (count: number) =>
      new Map(
        Array.from({ length: count }, (_, i) => [
          `a-f${i}`,
          {
            kind: 'failed' as const,
            jobs: [0, 1, 2].map((k) => ({
              id: `${'9'.repeat(60)}${k}`,
              name: 'n'.repeat(200),
              error: `ProviderError: ${'e'.repeat(400)}`,
            })),
          },
        ]),
      );
    for (const count of [5, 20]) {
      const firing = Array.from({ length: count }, (_, i) =>
        sampleAlert({
          id: `a-f${i}`,
          key: `k|${i}`,
          metric: 'failedIncrease',
          queue: long(i),
          subject: `pushizo/${long(i)}`,
          groupId: 'g-1',
        }),
      );
      const message = groupMessage(firing, 'en', now, settings, [], jobsOf(count));
      expect(validateMessage(message, 'message'), `${count} alerts`).toEqual([]);
      const text = JSON.stringify(message.blocks);
      // Three jobs each, with their view's command, while five fire; past five the first job's id
      // each, its button being the link.
      const listed = count === 5 ? 3 : 1;
      expect(text.match(/\/queue job pushizo\//g) ?? []).toHaveLength(count === 5 ? count * listed : 0);
      expect(text.match(/`9{60}\d`/g)).toHaveLength(count * listed);
      const jobButtons = message.blocks
        .flatMap((b) => (b.type === 'actions' ? b.elements : []))
        .filter((e) => 'action_id' in e && e.action_id?.startsWith('queue_ops.job.refresh'));
      expect(jobButtons).toHaveLength(count * listed);
    }
  });
});
