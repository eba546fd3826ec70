import type { Catalog } from '../catalog.js';

/** `/queue help` metinleri. Komut adları İngilizce kalır (runbook'lar da öyle yazar). */
export const help: Catalog['help'] = {
  title: '/queue komutları',
  intro:
    'Kuyruklar `sistem/kuyruk` olarak yazılır; bir Celery kuyruk adı `:` içerebilir. *Bekleyen*, çalışmaya hazır her iştir, öncelikliler (prioritized) dahil: status, pause önizlemesi, trend ve alarmlar aynı sayıyı söyler; status bunların kaçının öncelikli olduğunu ayrıca gösterir.',
  line: (usage: string, summary: string) => `\`/queue ${usage}\` — ${summary}`,
  more: (n: number) => `… ve ${n} komut daha.`,
  footer: (shared: string, own: string) =>
    `Salt okunur komutlar botun olduğu her kanalda çalışır. Kanalda herkes görür: ${shared}. Yalnızca siz görürsünüz: ${own}, hatalar ve retler.`,
  fallback: (verbs: string) => `/queue komutları: ${verbs}`,
  verbs: [
    {
      verb: 'status',
      usage: 'status [sistem[/kuyruk]]',
      summary:
        'duruma göre kuyruk derinlikleri, uyarılar (birikme, başarısız, duraklatılmış, worker yok), Redis belleği ve worker’lar',
    },
    {
      verb: 'dlq',
      usage: 'dlq <sistem>/<kuyruk> [sınır]',
      summary:
        'en yeni başarısız işler (varsayılan 10, en fazla 100) ve en sık hatalar; iş verisi asla gösterilmez',
    },
    {
      verb: 'workers',
      usage: 'workers [sistem]',
      summary: 'worker’lar, dinledikleri kuyruklar ve en uzun süredir çalışan görevleri',
    },
    { verb: 'help', usage: 'help', summary: 'bu liste' },
  ],
};
