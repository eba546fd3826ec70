import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertsListMessage } from '../../src/commands/alerts.js';
import type { Alert } from '../../src/store/alert.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import { jsonOf, runCliInProcess, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { sampleAlert } from '../store/escalation-contract.js';

/**
 * Issue 38 §2: `alerts` shows what is handled. Alerts the monitor stored (a real SQLite store),
 * then acknowledged, snoozed and silenced through the command line as an operator does: each line
 * says who has it in hand, unhandled come first and critical before warning (in `--json` too), and
 * a list longer than Slack holds says how many are left out, in whole lines, in Turkish too.
 */
describe('alerts: what is handled, in what order, and what is left out', () => {
  const temp = tempDir('alerts-list');
  const db = join(temp.dir, 'queue-ops.db');
  let config: string;
  let trConfig: string;
  const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
  const alertOn = (queue: string, severity: Alert['severity'], opened: number, rule = 'backlog') =>
    sampleAlert({
      id: `a-${queue.replace(/[^a-z0-9]/g, '').slice(0, 8)}`,
      key: `${rule}|pushizo/${queue}`,
      rule,
      severity,
      subject: `pushizo/${queue}`,
      queue,
      openedAt: minutesAgo(opened),
      updatedAt: minutesAgo(opened),
      lastNotifiedAt: minutesAgo(opened),
    });

  beforeAll(async () => {
    const system = bullmqSystem('pushizo', testRedisUrl(), 'alerts-list', {
      queues: ['acked', 'snoozed', 'silenced', 'open-warning', 'open-critical'],
    });
    const common = {
      store: `sqlite:${db}`,
      roles: { viewer: ['*'], operator: ['*'] },
      systems: [system],
    };
    config = writeConfigFile(temp.dir, common);
    trConfig = writeConfigFile(temp.dir, { ...common, locale: 'tr' }, 'queue-ops.tr.yml');
    const store = createSqliteStore(db);
    await store.migrate();
    // Opened oldest first in the order an id-ordered list would mix severities and states.
    await store.escalation.insertAlert(alertOn('acked', 'critical', 50), []);
    await store.escalation.insertAlert(alertOn('snoozed', 'critical', 40), []);
    await store.escalation.insertAlert(alertOn('silenced', 'warning', 30), []);
    await store.escalation.insertAlert(alertOn('open-warning', 'warning', 20), []);
    await store.escalation.insertAlert(alertOn('open-critical', 'critical', 10), []);
    await store.close();
  });

  afterAll(() => temp.remove());

  const cli = (...words: string[]) =>
    runCliInProcess(['--config', config, '--user', 'U0ALICE', ...words], { cwd: temp.dir });

  it('says on each line who has it in hand; unhandled first, critical first; --json in that order', async () => {
    expect((await cli('ack', 'a-acked')).code).toBe(0);
    expect((await cli('snooze', 'a-snoozed', '2h')).code).toBe(0);
    const silenced = await cli('silence', 'pushizo/silenced', '1h', 'provider', 'outage', '--json');
    expect(silenced.code, silenced.stderr).toBe(0);
    const silenceId = (jsonOf(silenced).data as { silence: { id: string } }).silence.id;

    const run = await cli('alerts');
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n').filter((l) => l.includes(' on pushizo/'));
    expect(lines.map((l) => /pushizo\/([a-z-]+)/.exec(l)?.[1])).toEqual([
      'open-critical',
      'open-warning',
      'acked',
      'snoozed',
      'silenced',
    ]);
    expect(lines[0]).not.toMatch(/acknowledged|snoozed|silenced/);
    expect(lines[2]).toContain('acknowledged by');
    expect(lines[2]).toContain('U0ALICE');
    expect(lines[3]).toMatch(/snoozed until \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(lines[4]).toContain(`silenced by \`${silenceId}\` (\`pushizo/silenced\`)`);
    expect(run.stdout).toContain('2 of 5 not handled');

    const json = await cli('alerts', '--json');
    const alerts = (jsonOf(json).data as { alerts: { id: string; silencedBy: string | null }[] }).alerts;
    expect(alerts.map((a) => a.id)).toEqual([
      'a-opencrit',
      'a-openwarn',
      'a-acked',
      'a-snoozed',
      'a-silenced',
    ]);
    expect(alerts.find((a) => a.id === 'a-silenced')!.silencedBy).toBe(silenceId);
    expect(alerts.find((a) => a.id === 'a-acked')!.silencedBy).toBeNull();

    const tr = await runCliInProcess(['--config', trConfig, 'alerts'], { cwd: temp.dir });
    expect(tr.stdout).toContain('U0ALICE üstlendi');
    expect(tr.stdout).toContain(`\`${silenceId}\` ile susturuldu`);
  });

  it('a list longer than Slack holds keeps whole lines and says how many more, in Turkish too', () => {
    const many = Array.from({ length: 120 }, (_, i) =>
      alertOn(`dispatch-${'x'.repeat(60)}-${i}`, i % 3 === 0 ? 'critical' : 'warning', 200 - i, 'dlq-growth'),
    ).map((a, i) => ({ ...a, id: `a-${String(i).padStart(7, '0')}` }));
    for (const locale of ['en', 'tr'] as const) {
      const message = alertsListMessage(many, locale, { now: new Date() });
      const sections = message.blocks.filter((b) => b.type === 'section') as { text: { text: string } }[];
      for (const s of sections) {
        expect(s.text.text.length).toBeLessThanOrEqual(3000);
        // Every line whole: it ends with the date it opened (no cut mid-date, no "…").
        for (const line of s.text.text.split('\n')) expect(line).toMatch(/\d\d:\d\d UTC$/);
      }
      const shown = sections.reduce((n, s) => n + s.text.text.split('\n').length, 0);
      expect(shown).toBeLessThan(120);
      const notes = JSON.stringify(message.blocks.filter((b) => b.type === 'context'));
      expect(notes).toContain(
        locale === 'en' ? `${120 - shown} more not shown` : `${120 - shown} alarm daha gösterilmedi`,
      );
      expect(notes).toContain('alerts --json');
    }
  });
});
