import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestMessage } from '../../src/approvals/blocks.js';
import { dlqMessage } from '../../src/blocks/dlq.js';
import { formatDuration, formatDurationCompact, formatUtc } from '../../src/blocks/format.js';
import { renderText } from '../../src/blocks/render-text.js';
import { statusMessage } from '../../src/blocks/status.js';
import { validateMessage } from '../../src/blocks/validate.js';
import { alertsListMessage } from '../../src/commands/alerts.js';
import { alertMessage } from '../../src/escalation/blocks.js';
import type { ActionRequest } from '../../src/store/store.js';
import { runCli } from '../../src/transports/cli/run.js';
import { dlqSample, failedJobs, NOW, pushizoStatus, queue } from '../blocks/fixtures.js';
import { BullmqScene } from '../commands/fixture.js';
import { bullmqSystem, configYaml, envRef } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { sampleAlert } from '../store/escalation-contract.js';

const redisUrl = testRedisUrl();

describe('locale: tr, the message builders', () => {
  const status = () => {
    const base = pushizoStatus(3);
    return {
      ...base,
      queues: [queue('audience', { waiting: 48_000, failed: 1_250 }), ...base.queues.slice(1)],
    };
  };

  it('status: Turkish headings and columns, tr-TR thousands (48.000), English stays 48,000', () => {
    const view = {
      scope: '',
      generatedAt: NOW,
      systems: [{ name: 'pushizo', type: 'bullmq' as const, ok: true as const, status: status() }],
    };
    const tr = statusMessage(view, 'tr');
    expect(validateMessage(tr)).toEqual([]);
    const out = renderText(tr).text;
    expect(out).toContain('Kuyruk durumu');
    expect(out).toContain('bekleyen');
    expect(out).toContain('başarısız');
    expect(out).toContain('48.000');
    expect(out).toContain('1.250');
    expect(out).not.toContain('48,000');
    expect(renderText(tr).buttons.map((b) => b.label)).toContain('Yenile');
    expect(renderText(statusMessage(view, 'en')).text).toContain('48,000');
  });

  it('dlq: failed "5 dakika önce" through date-fns’ Turkish locale, attempts and heading in Turkish', () => {
    const jobs = failedJobs(3).map((j, i) => ({ ...j, failedAt: NOW.getTime() - (5 + i) * 60_000 }));
    const m = dlqMessage(
      {
        system: 'pushizo',
        type: 'bullmq',
        sample: dlqSample('dispatch-ios', jobs, 48_000),
        limit: 10,
        generatedAt: NOW,
      },
      'tr',
    );
    expect(validateMessage(m)).toEqual([]);
    const out = renderText(m).text;
    expect(out).toContain('DLQ pushizo/dispatch-ios: 48.000 başarısız');
    expect(out).toContain('5 dakika önce');
    expect(out).toContain('6 dakika önce');
    expect(out).toContain('deneme');
    expect(out).toContain('Başarısız işler');
    expect(out).not.toMatch(/\bago\b|attempts?\b/);
  });

  it('approval: the request reads in Turkish, expiry "15 dakika sonra", Onayla/Reddet buttons', () => {
    const request: ActionRequest = {
      id: 'r-7f3k9qab',
      action: 'pause',
      target: 'pushizo/dispatch-ios',
      params: {},
      status: 'pending',
      requestedBy: 'U0ALICE',
      requestedByName: 'alice',
      via: 'slack',
      requiredApprovals: 1,
      approvals: [],
      preview:
        'pause pushizo/dispatch-ios: bekleyen 48.000 iş artık alınmayacak; çalışmakta olan işler tamamlanır.',
      createdAt: NOW.toISOString(),
      expiresAt: new Date(NOW.getTime() + 15 * 60_000).toISOString(),
      updatedAt: NOW.toISOString(),
    };
    const m = requestMessage(request, 'tr', NOW);
    expect(validateMessage(m)).toEqual([]);
    const out = renderText(m);
    expect(out.text).toContain('İstek: pause pushizo/dispatch-ios');
    expect(out.text).toContain('Onay bekliyor');
    expect(out.text).toContain('15 dakika sonra');
    expect(out.text).toContain('Onaylar: 0 / 1');
    expect(out.buttons.map((b) => b.label)).toEqual(['Onayla', 'Reddet']);
  });
});

describe('locale: tr, an escalation alert', () => {
  it('reads in Turkish with tr-TR numbers and decimals, Üstlen/Ertele buttons', () => {
    const now = new Date('2030-01-01T10:12:00.000Z');
    const settings = { clearAfterSamples: 2, escalateTo: ['S0PLATFORM'] };
    const m = alertMessage(
      sampleAlert({ value: 150_234, threshold: 100_000, series: [1, 5, 9], minutesToDrain: 45.2 }),
      'tr',
      now,
      settings,
    );
    expect(validateMessage(m)).toEqual([]);
    const out = renderText(m);
    expect(out.text).toContain('150.234');
    expect(out.text).toContain('100.000');
    expect(out.text).toContain('üstünde');
    expect(out.text).toContain('bu hızla boşalması 45 dk sürer');
    expect(out.buttons.map((b) => b.label)).toEqual([
      'Üstlen',
      '30 dk ertele',
      '2 sa ertele',
      'DLQ’yu göster',
      'Ölçekle…',
    ]);
    const ratio = renderText(
      alertMessage(
        sampleAlert({
          subject: 'pushizo',
          queue: undefined,
          metric: 'redisMemoryRatio',
          value: 0.93,
          threshold: 0.85,
        }),
        'tr',
        now,
        settings,
      ),
    ).text;
    // A ratio of maxmemory reads as a percentage, the Turkish way round.
    expect(ratio).toContain('%93');
    expect(ratio).toContain('%85');
    const rate = renderText(
      alertMessage(
        sampleAlert({ metric: 'drainRate', comparator: 'below', value: 12.5, threshold: 100 }),
        'tr',
        now,
        settings,
      ),
    ).text;
    expect(rate).toContain('12,5/dk');
  });

  describe('its times and durations', () => {
    const now = new Date('2030-01-01T10:12:00.000Z');
    const settings = { clearAfterSamples: 2, escalateTo: [] };

    it('go through date-fns’ Turkish words', () => {
      const firing = renderText(alertMessage(sampleAlert({}), 'tr', now, settings)).text;
      expect(firing).toContain('1 Ocak 2030 10:00 UTC itibarıyla aktif (12 dakika)');
      const resolved = renderText(
        alertMessage(
          sampleAlert({ status: 'resolved', resolvedAt: '2030-01-01T13:20:30.000Z' }),
          'tr',
          now,
          settings,
        ),
      ).text;
      expect(resolved).toContain('3 saat 20 dakika sürdü');
      expect(resolved).toContain('Çözüldü: 1 Ocak 2030 13:20 UTC');
    });

    it('in English keep ISO dates and 12m 0s', () => {
      const english = renderText(alertMessage(sampleAlert({}), 'en', now, settings)).text;
      expect(english).toContain('Firing since 2030-01-01 10:00 UTC (12m 0s)');
    });
  });

  it('formatDuration and formatUtc: Turkish words in two units at most, UTC whatever the time zone', () => {
    expect(formatDuration(0, 'tr')).toBe('0 saniye');
    expect(formatDuration(45, 'tr')).toBe('45 saniye');
    expect(formatDuration(3 * 3600 + 12 * 60 + 5, 'tr')).toBe('3 saat 12 dakika');
    expect(formatDuration(2 * 86_400 + 30, 'tr')).toBe('2 gün');
    expect(formatDuration(3 * 3600 + 12 * 60 + 5, 'en')).toBe('3h 12m');
    // the status table's narrow column keeps the runbooks' abbreviations
    expect(formatDurationCompact(3 * 3600 + 12 * 60, 'tr')).toBe('3 sa 12 dk');
    expect(formatUtc(Date.parse('2026-08-31T23:59:58Z'), 'tr')).toBe('31 Ağustos 2026 23:59:58 UTC');
    expect(formatUtc(Date.parse('2026-08-31T23:59:58Z'), 'en', false)).toBe('2026-08-31 23:59 UTC');
  });

  it('the alerts list shows values with tr-TR grouping, as the alert itself does', () => {
    const list = renderText(
      alertsListMessage([sampleAlert({ value: 150_234, threshold: 100_000 })], 'tr'),
    ).text;
    expect(list).toContain('150.234');
    expect(list).not.toContain('150234');
  });
});

describe('locale: tr in the config, end to end on real BullMQ queues', () => {
  let scene: BullmqScene;
  let config: string;

  beforeEach(async () => {
    scene = new BullmqScene(redisUrl);
    config = scene.writeConfig(
      configYaml({
        locale: 'tr',
        systems: [bullmqSystem('pushizo', envRef('PUSHIZO_REDIS_URL'), scene.prefix)],
        roles: { viewer: ['*'], operator: ['U0ALICE'] },
        policies: { pause: { role: 'operator', approvals: 1 } },
      }),
    );
  });
  afterEach(async () => {
    await scene.cleanup();
  });

  const cli = async (...words: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli({
      argv: ['--config', config, ...words],
      env: { PUSHIZO_REDIS_URL: redisUrl },
      cwd: scene.dir,
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
      osUser: 'alice',
      osHost: 'laptop',
    });
    return { code, stdout, stderr };
  };

  it('status, dlq, pause request and a bad command all answer in Turkish with tr-TR numbers', async () => {
    await scene.everyState('dispatch-ios');
    await scene.paused('maintenance', 2);
    await scene.queue('events').addBulk(Array.from({ length: 1_500 }, () => ({ name: 'event', data: {} })));

    const status = await cli('status');
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('Kuyruk durumu');
    expect(status.stdout).toContain('bekleyen');
    expect(status.stdout).toContain('1.500');
    expect(status.stdout).toContain('duraklatıldı');

    const dlq = await cli('dlq', 'pushizo/dispatch-ios');
    expect(dlq.code).toBe(0);
    expect(dlq.stdout).toContain('DLQ pushizo/dispatch-ios: 3 başarısız');
    expect(dlq.stdout).toMatch(/\d+ saniye önce|az önce/);
    expect(dlq.stdout).toContain('RenderError');

    const pause = await cli('--user', 'U0ALICE', 'pause', 'pushizo/events');
    expect(pause.stdout).toContain('İstek: pause pushizo/events');
    expect(pause.stdout).toContain('bekleyen 1.500 iş');
    expect(pause.stdout).toContain('Onay bekliyor');
    // A terminal cannot click: what each button runs is said in Turkish too.
    expect(pause.stdout).toContain('Bir butona basmak için şunu çalıştırın:');
    expect(pause.stdout).not.toContain('To press a button');

    const unknown = await cli('status', 'nosuch');
    expect(unknown.code).not.toBe(0);
    expect(`${unknown.stdout}${unknown.stderr}`).toContain('`nosuch` adında bir sistem yok.');
  });
});
