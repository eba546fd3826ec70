import type { Catalog } from '../catalog.js';

/** `status` içinde işlem hızı ve süreler. Sayılar ve süreler yerel biçimde gelir. */
export const throughput: Catalog['throughput'] = {
  columns: { perMinute: 'biten/dk', waitP95: 'bekleme p95', runP95: 'çalışma p95' },
  line: (span: string, done: string, failed: string, source: string) =>
    `Son ${span} içinde işlem hızı: dakikada ${done} biten, ${failed} başarısız; kaynak: ${source}.`,
  source: {
    metrics: 'BullMQ’nun kendi metrikleri',
    jobs: 'kuyruğun tuttuğu biten işler',
    results: 'result backend’in `date_done` alanı',
  },
  estimated: ' (result backend’in bir kısmından tahmin)',
  unknownRate: '?',
  rateUnknown: {
    notKept: (outcome: 'completed' | 'failed') =>
      outcome === 'completed'
        ? 'Biten/dk bilinmiyor: kuyruk sayılacak tamamlanmış iş tutmuyor (`removeOnComplete: true` ya da henüz biten yok) ve worker’ları metrik toplamıyor.'
        : 'Başarısız/dk bilinmiyor: kuyruk sayılacak başarısız iş tutmuyor (`removeOnFail: true` ya da henüz başarısız olan yok) ve worker’ları metrik toplamıyor.',
    noResults: (outcome: 'completed' | 'failed') =>
      `${outcome === 'completed' ? 'Biten' : 'Başarısız'}/dk bilinmiyor: result backend’de hiç görev sonucu yok (uygulama sonuç saklamıyor ya da başka yerde tutuyor).`,
    unattributed: (outcome: 'completed' | 'failed') =>
      `${outcome === 'completed' ? 'Biten' : 'Başarısız'}/dk bilinmiyor: saklanan sonuçlar kuyruk adı taşımıyor (Celery uygulamasında \`result_extended=True\` ayarlayın).`,
  },
  durations: (wait: string, run: string, sampled: string) =>
    `Bekleme ${wait} · çalışma ${run} (en yeni ${sampled} biten iş).`,
  percentiles: (p50: string, p95: string) => `p50 ${p50}, p95 ${p95}`,
  unknown: {
    noEnqueueTime: 'bilinmiyor: Celery kuyruğa girme zamanını saklamaz',
    noStartTime: 'bilinmiyor: Celery başlama zamanını saklamaz',
    noFinishedJobs: 'ölçülecek biten iş yok',
    notSampled: 'tek kuyrukta ölçülür: `status <sistem>/<kuyruk>`',
  },
  unknownDurations: (wait: string, run: string) => `Bekleme ${wait} · çalışma ${run}.`,
  celeryNote:
    'Bekleme ve çalışma süreleri Celery’de bilinmiyor: görevin ne zaman gönderildiğini de ne zaman başladığını da saklamaz.',
  delayedDue: (next5m: string, hour: string, day: string, later: string) =>
    `Zamanı gelen gecikmeli işler: 5 dk içinde ${next5m} · 1 saat içinde ${hour} · 1 gün içinde ${day} · daha sonra ${later}.`,
  celeryRead: {
    all: (looked: string) => `${looked} kaydın hepsi okundu`,
    part: (looked: string, of: string) =>
      `${of} kaydın ${looked} tanesi okundu; okuma sınırlı, daha fazlası olabilir`,
  },
  celeryDelayed: (read: string) =>
    `Gecikmeli görevler \`unacked\` içinde sayılır; worker ETA / countdown görevini zamanı gelene kadar orada tutar (${read}). Yalnızca worker’ın belleğinde olup orada kaydı olmayan görev (Redis onu kaybederek yeniden başladıysa olduğu gibi) sayılmaz (\`inspect scheduled\` onları listeler).`,
  celeryNoDelayed: (read: string) =>
    `Bu kuyruğun \`unacked\` içinde gecikmeli (ETA / countdown) görevi yok; worker böyle bir görevi zamanı gelene kadar orada tutar (${read}). Yalnızca worker’ın belleğinde olup orada kaydı olmayan görev (Redis onu kaybederek yeniden başladıysa olduğu gibi) sayılmaz.`,
  seconds: (value: string) => `${value} sn`,
  millis: (value: string) => `${value} ms`,
};
