import type { Catalog } from '../catalog.js';

/** "bekleyen > 100": Turkish would need a suffix after the number (100’ün üstünde). */
const signs: Record<string, string> = { above: '>', below: '<' };

/** `1h` → "1 saat": the window as Turkish writes it (the command word stays `1h`). */
const span = (window: string) => `${window}`.replace(/^(\d+)h$/, '$1 saat');

/** `/queue trend` ve alarm thread'lerindeki grafiklerin metinleri. Adlar mrkdwn için kaçışlanmış gelir. */
export const trend: Catalog['trend'] = {
  describe: {
    usage: 'trend <sistem>/<kuyruk> [1h|6h|24h]',
    summary:
      'kuyruğun duruma göre derinliğinin ve dakikada biten ve başarısız işlerinin zaman içindeki grafiği, alarm eşikleri ve alarmlarla',
  },
  usage: '/queue trend <sistem>/<kuyruk> [1h|6h|24h]',
  cliUsage: '/queue trend <sistem>/<kuyruk> [1h|6h|24h] [--out dosya.png]',
  needsQueue: 'Bir kuyruk yazın: `/queue trend <sistem>/<kuyruk>`.',
  badWindow: (text: string) => `\`${text}\` bir zaman aralığı değil.`,
  validWindow: 'aralık 1h, 6h ya da 24h olabilir (varsayılan 1h)',
  outNeedsPath: '`--out` bir dosya adı ister, ör. `--out chart.png`.',
  outOnlyCli: '`--out` komut satırında dosya yazar; Slack’te grafik yüklenir.',
  needsStore: 'monitörün örnekleri (botun deposu açılamadı)',
  title: (target: string, window: string) => `Eğilim ${target} · son ${span(window)}`,
  chartTitle: (target: string, window: string) => `${target} · son ${span(window)} (UTC)`,
  states: {
    waiting: 'bekleyen',
    active: 'aktif',
    delayed: 'gecikmeli',
    failed: 'başarısız',
    throughput: 'biten/dk',
    failedPerMinute: 'başarısız/dk',
  },
  rateAxis: 'dakikada',
  line: (state: string, spark: string, latest: string) => `${state.padEnd(10)} ${spark} ${latest}`,
  unknown: '?',
  samples: (n: number, from: string, to: string) => `${from} ile ${to} arasında ${n} örnek`,
  noSamples: (target: string, window: string) =>
    `Son ${span(window)} içinde \`${target}\` için örnek yok. Monitör bunları bot çalışırken kaydeder (ya da cron’dan \`monitor --once\`).`,
  rates: (source: string) =>
    `biten/dk ve başarısız/dk: her örnekten önceki 5 dakikada biten işler, ${source}.`,
  rateSource: {
    jobs: 'kuyruğun tamamlanmış ve başarısız kümelerinde bitiş zamanına göre sayılır',
    metrics: 'BullMQ’nun kendi dakikalık metriklerinden',
    results: 'result backend’in `date_done` alanından (`ignore_result` olan görevler sayılmaz)',
  },
  rateEstimated: ' (result backend’in bir kısmından tahmin)',
  noRates: 'biten/dk ve başarısız/dk: bu aralığın hiçbir örneğinde yok.',
  thresholds: (list: string) => `Eşikler: ${list}`,
  threshold: (rule: string, value: string) => `${rule} ${value}`,
  thresholdItem: (rule: string, state: string, comparator: string, value: string) =>
    `${rule} (${state} ${signs[comparator] ?? comparator} ${value})`,
  alerts: (list: string) => `Alarmlar: ${list}`,
  alertItem: (id: string, from: string, to: string) => `${id} ${from}–${to}`,
  stillFiring: 'şimdi',
  alertBand: (rule: string) => `alarm: ${rule}`,
  chartAttached: 'Grafik ekte.',
  inThread: 'Grafik alarmın thread’inde.',
  wrote: (path: string, bytes: string) => `${path} yazıldı (${bytes} bayt).`,
  writeFailed: (path: string, reason: string) => `${path} yazılamadı: ${reason}`,
  alertChartTitle: (target: string) => `${target} derinliği`,
};
