import type { Catalog } from '../catalog.js';

/** `/queue dlq` metinleri. Redis'ten gelen argümanlar mrkdwn için kaçışlanmış gelir. */
export const dlq: Catalog['dlq'] = {
  title: (target: string, total: string) => `DLQ ${target}: ${total} başarısız`,
  shown: (shown: number, total: string) =>
    shown === 0
      ? 'İş verisi asla gösterilmez.'
      : `${total} işin en yeni ${shown} tanesi. İş verisi asla gösterilmez.`,
  sameError: '(yukarıdakiyle aynı hata)',
  updated: (utc: string) => `Güncellendi: ${utc}`,
  topErrors: (over: string) => `*En sık hatalar* (en yeni ${over} başarısız iş içinde)`,
  topError: (count: string, error: string, example?: string) =>
    `• *${count}×* ${error}${example ? ` (örn. ${example})` : ''}`,
  jobsHeading: '*Başarısız işler*',
  attempts: (n: number) => `${n} deneme`,
  failedAtUnknown: 'ne zaman başarısız olduğu bilinmiyor',
  noError: '(hata mesajı yok)',
  empty: (target: string) => `:white_check_mark: \`${target}\` içinde başarısız iş yok.`,
  moreJobs: (n: number, hint: string) =>
    `… ve Slack'in sınırları içinde kalmak için burada gösterilmeyen ${n} eski iş daha; \`${hint}\` hepsini listeler.`,
  moreHint: (target: string, limit: number) => `queue-ops --json dlq ${target} ${limit}`,
  jobHint: (command) => `Tek bir işin tamamı (nerede, yığını, akışı): id’siyle \`${command}\`.`,
  refresh: 'Yenile',
  fallback: (target: string, total: string) => `DLQ ${target}: ${total} başarısız iş`,
};
