import { describe, expect, it } from 'vitest';
import { dlqMessage } from '../../src/blocks/dlq.js';
import { renderText } from '../../src/blocks/render-text.js';
import { statusMessage } from '../../src/blocks/status.js';
import { validateMessage } from '../../src/blocks/validate.js';
import type { QueueEntry } from '../../src/config/queue-context.js';
import { groupMessage } from '../../src/escalation/blocks.js';
import type { Alert } from '../../src/store/alert.js';
import { dlqSample, failedJobs, NOW, pushizoStatus } from './fixtures.js';

/** The longest context the schema accepts: 500-character links, 1,000 characters of notes. */
function longest(name: string, i: number): QueueEntry {
  const url = (kind: string) =>
    `https://${kind}.example.com/${String(i).padStart(4, '0')}/${'x'.repeat(460)}`;
  return {
    name,
    owner: `S0OWNER${i}`,
    runbook: url('runbook'),
    dashboard: url('grafana'),
    notes: `<!channel> & ${'n'.repeat(990)}`,
  };
}

/** `n` firing alerts on queues q0…q(n−1); the odd ones by a rule called `paging`. */
function firingAlerts(n: number): Alert[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `a-${i}`,
    version: 1,
    key: `r|pushizo/q${i}`,
    rule: i % 2 ? 'paging' : 'quiet',
    metric: 'failed',
    severity: 'critical',
    subject: `pushizo/q${i}`,
    system: 'pushizo',
    queue: `q${i}`,
    comparator: 'above',
    threshold: 0,
    status: 'firing',
    value: 3,
    worst: 3,
    series: [1, 2, 3],
    clearing: 0,
    openedAt: NOW.toISOString(),
    updatedAt: NOW.toISOString(),
    lastNotifiedAt: NOW.toISOString(),
  }));
}

describe('queue context within Slack’s limits', () => {
  it('a status of 1,000 flagged queues, each with its own longest context, stays valid and escaped', () => {
    const status = pushizoStatus(1000);
    const queueContext = [{ name: 'pushizo', queueContext: status.queues.map((q, i) => longest(q.name, i)) }];
    for (const locale of ['en', 'tr'] as const) {
      const message = statusMessage(
        {
          scope: '',
          generatedAt: NOW,
          systems: [{ name: 'pushizo', type: 'bullmq', ok: true, status }],
          queueContext,
        },
        locale,
      );
      expect(validateMessage(message)).toEqual([]);
      const text = JSON.stringify(message.blocks);
      // The table still comes first; the context lines are shortened to fit, links kept whole.
      expect(text).toContain('dispatch-ios   ');
      expect(text).toMatch(/`S0OWNER\d+` · <https:\/\/runbook\.example\.com\/\d{4}\/x{460}\|runbook>/);
      expect(text).not.toContain('<!channel>');
    }
  });

  it('notes on status are escaped: they cannot mention the channel or form a link', () => {
    const status = pushizoStatus(12);
    const message = statusMessage(
      {
        scope: '',
        generatedAt: NOW,
        systems: [{ name: 'pushizo', type: 'bullmq', ok: true, status }],
        queueContext: [
          {
            name: 'pushizo',
            queueContext: [{ name: 'dispatch-ios', notes: '<!channel> & <https://evil.example|click>' }],
          },
        ],
      },
      'en',
    );
    expect(validateMessage(message)).toEqual([]);
    const text = JSON.stringify(message.blocks);
    expect(text).toContain('`dispatch-ios` · &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;');
  });

  describe('a dlq with the longest context', () => {
    const message = () =>
      dlqMessage(
        {
          system: 'pushizo',
          type: 'bullmq',
          sample: dlqSample('webhooks', failedJobs(100, 300), 5000),
          limit: 100,
          generatedAt: NOW,
          context: longest('webhooks', 1),
        },
        'en',
      );

    it('stays valid', () => {
      expect(validateMessage(message())).toEqual([]);
    });

    it('shows the runbook link with its address in the terminal', () => {
      expect(renderText(message()).text).toContain(
        'Owner `S0OWNER1` · runbook (https://runbook.example.com/0001/',
      );
    });
  });

  it('a group of 20 alerts, each with the longest context, stays valid and names each owner', () => {
    const message = groupMessage(firingAlerts(20), 'en', NOW, {
      clearAfterSamples: 2,
      escalateTo: [],
      maxAlertsPerMessage: 20,
      ownerOf: (a) => ({ context: longest(a.queue!, Number(a.queue!.slice(1))), mention: false }),
    });
    expect(validateMessage(message)).toEqual([]);
    for (let i = 0; i < 20; i++) expect(JSON.stringify(message.blocks)).toContain(`Owner \`S0OWNER${i}\``);
  });

  it('a storm of alerts names the paged owners once each, and the message stays valid', () => {
    const alerts = firingAlerts(30);
    const message = groupMessage(alerts, 'en', NOW, {
      clearAfterSamples: 2,
      escalateTo: [],
      maxAlertsPerMessage: 10,
      // Every queue has its own owner; only the `paging` rule mentions them.
      ownerOf: (a) => ({ context: { owner: `S0${a.queue!.toUpperCase()}` }, mention: a.rule === 'paging' }),
    });
    expect(validateMessage(message)).toEqual([]);
    const mentioned = [...JSON.stringify(message.blocks).matchAll(/<!subteam\^(S0Q\d+)>/g)].map((m) => m[1]);
    expect(mentioned).toEqual([
      'S0Q1',
      'S0Q3',
      'S0Q5',
      'S0Q7',
      'S0Q9',
      'S0Q11',
      'S0Q13',
      'S0Q15',
      'S0Q17',
      'S0Q19',
    ]);
    expect(message.text).toContain('<!subteam^S0Q1>');
  });
});
