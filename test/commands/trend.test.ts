import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueueOps, type QueueOps } from '../../src/app.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Alert } from '../../src/store/alert.js';
import { openStore } from '../../src/store/open.js';
import { fakeSlack } from '../escalation/fake-slack.js';
import { appendDispatchIosSample } from '../escalation/sample-fixture.js';
import { jsonOf, runCli, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, TEST_ROLES, writeConfigFile } from '../helpers/config-file.js';
import { decodePng } from '../helpers/png.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import {
  captureResponses,
  type Harness,
  randomId,
  slackAround,
  slashCommand,
} from '../transports/slack/harness.js';

/**
 * `trend` over a real SQLite store holding an hour of the monitor's samples and an open alert:
 * the built command line (`--out`, sparklines, bad words) and Slack (the answer, then the chart
 * uploaded with files.uploadV2 into the alert's thread), with Slack's HTTP side nock'd.
 */
const redisUrl = testRedisUrl();
const SLACK = 'https://slack.trend.test';
const MINUTE = 60_000;
const logger = createLogger({ level: 'silent' });

describe('trend', () => {
  const dir = tempDir('trend');
  let config: string;
  const now = Date.now();
  const ALERT_TS = '1700000300.000100';

  beforeAll(async () => {
    config = writeConfigFile(dir.dir, {
      store: `sqlite:${join(dir.dir, 'queue-ops.db')}`,
      roles: TEST_ROLES,
      slack: { incidentChannel: 'C0INCIDENT' },
      systems: [bullmqSystem('pushizo', redisUrl, 'trend-test', { queues: ['dispatch-ios', 'webhooks'] })],
      escalation: {
        rules: [{ name: 'backlog', queues: ['pushizo/dispatch-*'], metric: 'waiting', above: 100 }],
      },
    });
    const store = await openStore(`sqlite:${join(dir.dir, 'queue-ops.db')}`);
    await store.migrate();
    // Fifty minutes of samples, the newest a minute ago: a backlog rises to 140 and is worked off.
    for (let i = 0; i < 50; i++) {
      const at = now - (51 - i) * MINUTE;
      const waiting = i < 30 ? i * 5 - Math.max(0, i - 25) * 3 : Math.max(0, 140 - (i - 30) * 6);
      await appendDispatchIosSample(store, at, { waiting, delayed: i % 7, failed: i < 35 ? 1 : 3 });
    }
    const opened = new Date(now - 40 * MINUTE).toISOString();
    const alert: Alert = {
      id: 'a-00c0ffee',
      key: 'backlog|pushizo/dispatch-ios',
      rule: 'backlog',
      metric: 'waiting',
      severity: 'critical',
      subject: 'pushizo/dispatch-ios',
      system: 'pushizo',
      queue: 'dispatch-ios',
      comparator: 'above',
      threshold: 100,
      status: 'firing',
      value: 120,
      worst: 140,
      series: [],
      clearing: 0,
      openedAt: opened,
      updatedAt: opened,
      lastNotifiedAt: opened,
      version: 0,
    };
    const stored = await store.escalation.insertAlert(alert, []);
    await store.escalation.writeAlert({ ...stored!, channel: 'C0INCIDENT', messageTs: ALERT_TS }, []);
    await store.close();
  });

  afterAll(() => dir.remove());

  it('--out writes the chart as a PNG and says where', async () => {
    const run = await runCli(['--config', config, 'trend', 'pushizo/dispatch-ios', '--out', 'chart.png'], {
      cwd: dir.dir,
    });
    expect(run.code, run.stderr).toBe(0);
    const path = join(dir.dir, 'chart.png');
    expect(existsSync(path)).toBe(true);
    const png = decodePng(readFileSync(path));
    expect([png.width, png.height]).toEqual([960, 420]);
    expect(run.stdout).toContain(`Wrote ${path} (`);
    expect(run.stdout).toContain('Trend pushizo/dispatch-ios · last 1h');
  });

  it('without --out it prints a sparkline per state, and --json gives the numbers', async () => {
    const run = await runCli(['--config', config, 'trend', 'pushizo/dispatch-ios', '6h'], { cwd: dir.dir });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    for (const state of ['waiting', 'active', 'delayed', 'failed']) {
      const line = lines.find((l) => l.startsWith(state));
      expect(line, run.stdout).toMatch(new RegExp(`^${state}\\s+[▁▂▃▄▅▆▇█·]{40} \\d+$`));
    }
    // The waiting line rises and falls back: its highest bar is somewhere in the middle.
    const waiting = lines.find((l) => l.startsWith('waiting'))!;
    expect(waiting).toContain('█');
    expect(run.stdout).toContain('Thresholds: backlog (waiting above 100)');
    expect(run.stdout).not.toContain('Wrote');

    const json = jsonOf(
      await runCli(['--config', config, '--json', 'trend', 'pushizo/dispatch-ios'], { cwd: dir.dir }),
    );
    expect(json.ok).toBe(true);
    expect(json.data).toMatchObject({
      system: 'pushizo',
      queue: 'dispatch-ios',
      window: '1h',
      samples: 50,
      latest: { waiting: 26, active: 8, failed: 3 },
      thresholds: [{ rule: 'backlog', state: 'waiting', comparator: 'above', value: 100 }],
      alerts: [{ id: 'a-00c0ffee', rule: 'backlog', end: null }],
      file: null,
    });
  });

  it('bad words get one line naming what is valid', async () => {
    const window = await runCli(['--config', config, 'trend', 'pushizo/dispatch-ios', '2h'], {
      cwd: dir.dir,
    });
    expect(window.code).toBe(2);
    expect(window.stdout.trim().split('\n')).toHaveLength(1);
    expect(window.stdout).toContain('1h, 6h, 24h');
    const queue = await runCli(['--config', config, 'trend', 'pushizo/dispatch-iso'], { cwd: dir.dir });
    // An unknown name is not a usage error (exit 1, as for `dlq`), and names the valid queues.
    expect(queue.code, queue.stdout + queue.stderr).toBe(1);
    expect(queue.stdout.trim().split('\n')).toHaveLength(1);
    expect(queue.stdout).toContain('dispatch-ios');
    const out = await runCli(['--config', config, 'trend', 'pushizo/dispatch-ios', '--out'], {
      cwd: dir.dir,
    });
    expect(out.code).toBe(2);
    expect(out.stdout).toContain('--out chart.png');
    expect(`${window.stdout}${queue.stdout}${out.stdout}`).not.toMatch(/\bat .*\.js:\d+/);
  });

  describe('in Slack', () => {
    let runtime: QueueOps;
    let slack: ReturnType<typeof fakeSlack>;
    let app: Harness['app'];

    beforeAll(async () => {
      nock.disableNetConnect();
      slack = fakeSlack(SLACK);
      runtime = await createQueueOps({ config: loadConfigFile(config, {}), env: {}, logger });
      app = slackAround(runtime.dispatcher, { logger, apiUrl: `${SLACK}/api` }).app;
    });

    afterAll(async () => {
      await runtime?.close();
      nock.cleanAll();
      nock.enableNetConnect();
    });

    async function ask(text: string, channel: string) {
      const path = `/commands/T0TEAM/${randomId('')}/trend`;
      const { bodies } = captureResponses(path);
      await app.processEvent({
        body: slashCommand(text, path, { channel_id: channel }),
        ack: async () => {},
      });
      return bodies;
    }

    it('answers with the sparklines, then uploads the chart into the open alert’s thread', async () => {
      const before = slack.uploads.length;
      const bodies = await ask('trend pushizo/dispatch-ios', 'C0INCIDENT');
      expect(bodies).toHaveLength(1);
      expect(bodies[0]!.response_type).toBe('in_channel');
      expect(JSON.stringify(bodies[0])).toContain('Chart attached in the alert’s thread.');
      const [upload] = slack.uploads.slice(before);
      // files.getUploadURLExternal: the name and the exact byte length of what is then POSTed.
      expect(upload!.requested).toMatchObject({ filename: 'trend-pushizo-dispatch-ios-1h.png' });
      expect(Number(upload!.requested.length)).toBe(upload!.png!.length);
      expect(decodePng(upload!.png!).width).toBe(960);
      // files.completeUploadExternal: shared into the channel, in the alert's thread.
      expect(upload!.completed).toMatchObject({ channel_id: 'C0INCIDENT', thread_ts: ALERT_TS });
      expect(JSON.parse(upload!.completed!.files!)).toEqual([
        { id: upload!.fileId, title: 'Trend pushizo/dispatch-ios · last 1h' },
      ]);
    });

    it('elsewhere the chart goes to the channel itself', async () => {
      const before = slack.uploads.length;
      await ask('trend pushizo/dispatch-ios 24h', 'C0OTHER');
      const [upload] = slack.uploads.slice(before);
      expect(slack.uploads.length).toBe(before + 1);
      expect(upload!.requested.filename).toBe('trend-pushizo-dispatch-ios-24h.png');
      expect(upload!.completed!.channel_id).toBe('C0OTHER');
      expect(upload!.completed!.thread_ts).toBeUndefined();
    });

    it('refuses --out, which is for the command line, and uploads nothing', async () => {
      const before = slack.uploads.length;
      const refused = await ask('trend pushizo/dispatch-ios --out /tmp/x.png', 'C0OTHER');
      expect(refused[0]!.response_type).toBe('ephemeral');
      expect(JSON.stringify(refused[0])).toContain('in Slack the chart is uploaded');
      expect(slack.uploads.length).toBe(before);
    });
  });
});
