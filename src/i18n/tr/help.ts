import type { Catalog } from '../index.js';

/** `/queue help` metinleri. Komut adları İngilizce kalır (runbook'lar da öyle yazar). */
export const help: Catalog['help'] = {
  title: '/queue komutları',
  intro: 'Kuyruklar `system/queue` olarak yazılır; bir Celery kuyruk adı `:` içerebilir.',
  line: (usage: string, summary: string) => `\`/queue ${usage}\` — ${summary}`,
  more: (n: number) => `… ve ${n} komut daha.`,
  footer: 'Salt okunur komutlar botun olduğu her kanalda çalışır.',
  fallback: (verbs: string) => `/queue komutları: ${verbs}`,
  verbs: [
    {
      verb: 'status',
      usage: 'status [system[/queue]]',
      summary:
        'Duruma göre kuyruk derinlikleri, uyarılar (birikme, başarısız, duraklatılmış, worker yok), Redis belleği ve worker’lar.',
    },
    {
      verb: 'dlq',
      usage: 'dlq <sistem>/<kuyruk> [sınır]',
      summary:
        'En yeni başarısız işler (varsayılan 10, en fazla 100) ve en sık hatalar. İş verisi asla gösterilmez.',
    },
    {
      verb: 'workers',
      usage: 'workers [system]',
      summary: 'Worker’lar, dinledikleri kuyruklar ve en uzun süredir çalışan görevleri.',
    },
    { verb: 'help', usage: 'help', summary: 'Bu liste.' },
  ],
};
