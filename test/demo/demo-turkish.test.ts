import { describe, expect, it } from 'vitest';
import { runDemo } from './run-demo.js';

/** The answer to one scripted command: from its `> cmd` echo to the next echo. */
function answer(output: string, command: string): string {
  const start = output.indexOf(`> ${command}\n`);
  if (start === -1) return '';
  const rest = output.slice(start + command.length + 3);
  const next = rest.indexOf('\n> ');
  return next === -1 ? rest : rest.slice(0, next);
}

describe('npm run demo -- --locale tr', () => {
  it('runs in Turkish: banner, status, DLQ, a pause request approved by a second person, audit verify', async () => {
    const { code, stdout, stderr } = await runDemo([
      '--scale',
      'small',
      '--simulate-celery',
      '--locale',
      'tr',
      '--script',
      'status pushizo',
      '--script',
      'dlq pushizo/dispatch-ios',
      '--script',
      'pause pushizo/dispatch-ios',
      '--script',
      ':user U0BOB',
      '--script',
      '1',
      '--script',
      'audit verify',
      '--script',
      'nosuch',
    ]);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout).toContain('queue-ops demo: Pushizo ve Zeus runbook’larına benzeyen iki sistem.');
    expect(stdout).toMatch(/\d+ sn içinde [\d.]+ iş ve mesaj yüklendi\./);

    const status = answer(stdout, 'status pushizo');
    expect(status).toContain('Kuyruk durumu: pushizo');
    expect(status).toContain('bekleyen');
    expect(status).toContain('worker yok');

    const dlq = answer(stdout, 'dlq pushizo/dispatch-ios');
    expect(dlq).toContain('başarısız');
    expect(dlq).toContain('deneme');
    expect(dlq).toMatch(/(saniye|dakika) önce|az önce/);

    const requested = answer(stdout, 'pause pushizo/dispatch-ios');
    expect(requested).toContain('İstek: pause pushizo/dispatch-ios');
    expect(requested).toContain('Onay bekliyor');
    expect(requested).toContain('Onayla');

    expect(answer(stdout, ':user U0BOB')).toContain('Artık U0BOB olarak çalışıyorsunuz.');
    const approved = answer(stdout, '1');
    expect(approved).toMatch(/duraklatıldı|Tamamlandı/);

    expect(answer(stdout, 'audit verify')).toContain('Denetim zinciri doğrulandı');
    expect(answer(stdout, 'nosuch')).toContain('`nosuch` bir /queue komutu değil.');
    expect(stdout).not.toMatch(/Queue status|Waiting for approval|Approve\b/);
    expect(code).toBe(1);
  }, 60_000);
});
