import type { Catalog } from '../catalog.js';

/**
 * `rate-limit` ve `concurrency` metinleri: argümanlar, önizlemeler ve sonuçlar (düz metin; istek
 * mesajı hepsini birden kaçışlar), status satırı ve `--for` süresi dolan sınırın bildirimi.
 */
const rate = (value: string | null) => value ?? 'yok';

export const limits: Catalog['limits'] = {
  usage: {
    rateLimit:
      '/queue rate-limit <sistem> <görev> <hız>|off [--for 30m] (Celery) · /queue rate-limit <sistem>/<kuyruk> <en-çok>/<süre>|off [--for 30m] (BullMQ)',
    concurrency: '/queue concurrency <sistem>/<kuyruk> <n>|off [--for 30m]',
  },
  summary: {
    rateLimit:
      'hız sınırı koyar ya da kaldırır: bir Celery görevinin bütün worker’larda (control rate_limit), ya da bir BullMQ kuyruğunun genel sınırı',
    concurrency:
      'bir BullMQ kuyruğunun genel eşzamanlılık sınırını koyar ya da kaldırır: bütün worker’larda aynı anda en çok kaç iş',
  },

  needsTask: 'Celery görevini ve hızı yazın.',
  needsRate: 'Hızı ya da `off` yazın.',
  needsQueue: 'BullMQ kuyruğunu sistem/kuyruk olarak yazın.',
  needsConcurrency: 'Aynı anda en çok kaç iş çalışacağını ya da `off` yazın.',
  celeryRateInvalid: (value: string) => `\`${value}\` bir Celery hızı değil.`,
  celeryRateValid:
    'Celery’nin yazdığı gibi saniye, dakika ya da saat başına görev: `10/s`, `100/m`, `500/h`; ya da `off`',
  bullmqRateInvalid: (value: string) => `\`${value}\` bir hız sınırı değil.`,
  bullmqRateValid:
    '`en-çok/süre`: süre (ms, s, m ya da h, en çok 1 gün) başına en çok iş (1 ile 1.000.000), ör. `100/1m`, `10/s`, `50/500ms`; ya da `off`',
  concurrencyInvalid: (value: string) => `\`${value}\` bir eşzamanlılık değeri değil.`,
  concurrencyValid: '1 ile 10000 arasında bir tam sayı, ya da `off`',
  forInvalid: (value: string) => `\`${value}\` bir sınırın ne kadar süreceği değil.`,
  forValid: '`--for` ile 30s, 30m, 2h ya da 1d, en çok 7d',
  forWithOff: '`--for` bir sınırı bir süre sonra kaldırır; `off` hemen kaldırır.',
  concurrencyOnCelery:
    'Celery’de kuyruk başına genel eşzamanlılık yoktur; havuzu `/queue scale <sistem>/<grup> <n>` ile boyutlandırın ya da bir göreve hız sınırı koyun',
  unknownTask: (system: string, task: string) =>
    `\`${system}\` worker’larından hiçbirinde \`${task}\` görevi kayıtlı değil.`,
  tasksValid: (tasks: string[]) =>
    tasks.length === 0
      ? 'canlı bir worker’ın kayıtlı görevlerinden biri (yanıt veren worker yok; bkz. `/queue workers`)'
      : tasks
          .slice(0, 20)
          .map((t) => `\`${t}\``)
          .join(', ') + (tasks.length > 20 ? ` ve ${tasks.length - 20} tane daha` : ''),
  nothingToLift: (target: string, kind: string) =>
    `\`${target}\` üzerinde kaldırılacak ${kind} yok; hiçbir şey değişmedi`,
  kindName: { 'rate-limit': 'hız sınırı', concurrency: 'eşzamanlılık sınırı' },

  previewCelery: (
    system: string,
    task: string,
    value: string | null,
    workers: { worker: string; rate: string | null }[],
  ) =>
    `${system} üzerinde ${task} görevinin hız sınırı ${value === null ? 'kaldırılır' : `${value} olur`}, ` +
    `${workers.length} worker’a gönderilir: ${workers.map((w) => `${w.worker} (şu an ${rate(w.rate)})`).join(', ')}`,
  previewCeleryEach: (inAll: string) =>
    `; her worker bu sınıra kendi başına uyar, yani toplamda en fazla ${inAll}`,
  previewCeleryRestore: (restores: string[]) =>
    `; her biri queue-ops’tan önceki değerine döner: ${restores.join(', ')}`,
  restoreTo: (worker: string, value: string | null) => `${worker} ${rate(value)}`,
  previewBullmq: (target: string, what: string, now: string, workers: number, version: string | null) =>
    `${target} için ${what} (şu an: ${now}); BullMQ worker’ları bunu kuyruğun meta’sından okur` +
    ` (şu an ${workers} worker bağlantısı${version ? `, yazan ${version}` : ''})`,
  previewFor: (duration: string) => `; uygulandıktan ${duration} sonra kendiliğinden kalkar`,
  previewUntilReplaced: (until: string) =>
    `; queue-ops’un koyduğu ve ${until} saatinde kalkacak olan sınırın yerine geçer`,
  setConcurrency: (n: number) => `genel eşzamanlılık ${n} (bütün worker’larda aynı anda en çok ${n} iş)`,
  setRate: (max: number, duration: string) => `genel hız sınırı ${duration} başına ${max}`,
  liftConcurrency: (back: string) => `genel eşzamanlılık sınırı kalkar (${back} değerine döner)`,
  liftRate: (back: string) => `genel hız sınırı kalkar (${back} değerine döner)`,
  none: 'yok',
  concurrencyValue: (n: number) => `eşzamanlılık ${n}`,
  rateValue: (max: number, duration: string) => `${duration} başına ${max}`,

  resultCelery: (system: string, task: string, answers: string[]) =>
    `${system} sisteminin ${task} görevi: ${answers.join('; ')}`,
  workerAnswer: (worker: string, answer: string, after: string | null | undefined) =>
    `${worker}: ${answer}${after === undefined ? ' (geri okunamadı)' : ` → ${rate(after)}`}`,
  resultBullmq: (target: string, before: string, after: string) => `${target}: ${before} → ${after}`,
  resultUntil: (until: string) => `, ${until} saatine kadar`,

  statusLine: (items: string[]) => `Sınırlar: ${items.join(' · ')}`,
  statusItem: (target: string, what: string, until: string | null) =>
    `\`${target}\` ${what}${until ? ` (${until} saatine kadar)` : ''}`,
  statusCeleryItem: (task: string, value: string, until: string | null) =>
    `\`${task}\` görevi ${value}${until ? ` (${until} saatine kadar)` : ''}`,

  expiredTitle: 'Sınır kalktı',
  expired: (target: string, what: string, back: string, by: string) =>
    `${target} üzerindeki ${what} süresi doldu ve kaldırıldı: ${back} değerine döndü (koyan: ${by}).`,
};
