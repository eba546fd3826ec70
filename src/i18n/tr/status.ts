import type { Catalog } from '../catalog.js';

/**
 * `/queue status` metinleri ve her okuma mesajının kullandığı birimler. Redis'ten ya da
 * config'ten gelen argümanlar mrkdwn için kaçışlanmış gelir.
 */
export const status: Catalog['status'] = {
  title: 'Kuyruk durumu',
  titleScoped: (scope: string) => `Kuyruk durumu: ${scope}`,
  updated: (utc: string) => `Güncellendi: ${utc}`,
  columns: {
    queue: 'kuyruk',
    waiting: 'bekleyen',
    active: 'aktif',
    delayed: 'gecikmeli',
    prioritized: 'içinde öncelikli',
    failed: 'başarısız',
    oldest: 'en eski',
    flags: 'uyarılar',
  },
  flags: {
    backlog: 'birikme',
    failures: 'başarısız',
    paused: 'duraklatıldı',
    noWorkers: 'worker yok',
  },
  typeLabel: { bullmq: 'BullMQ', celery: 'Celery' },
  systemLine: (name: string, type: string, queues: number, flagged: number) =>
    `*${name}* · ${type} · ${queues} kuyruk` +
    (flagged > 0 ? ` · :warning: ${flagged} kuyruk dikkat gerektiriyor` : ''),
  noQueues: 'Kuyruk bulunamadı.',
  atLeast: (duration: string) => `≥ ${duration}`,
  oldestUnknown: 'bilinmiyor',
  oldestSeenSince: (items: string[], more: number) =>
    `≥: en az bu kadar bekliyor: monitör baştaki mesajı ilk kez gördü: ${items.join(', ')}${more > 0 ? ` ve ${more} kuyruk daha` : ''} (Celery mesajları kuyruğa giriş zamanı taşımaz).`,
  oldestSeenItem: (queue: string, since: string) => `${queue} ${since}`,
  oldestNeverSeen: (n: number) =>
    `${n} kuyrukta en eski bekleme bilinmiyor: baştaki mesajı henüz hiçbir monitör örneği görmedi (monitör botta ya da \`monitor --once\` ile çalışır).`,
  memory: (used: string, max: string | null, percent: number | null, policy: string, system: string) =>
    `Redis belleği: ${used}${max ? ` / ${max}${percent !== null ? ` (%${percent})` : ''}` : ', limit yok'} · politika \`${policy}\` · ayrıntı: \`/queue redis ${system}\``,
  warnings: {
    EvictionPolicy: (p: Record<string, string | number>) =>
      `:warning: maxmemory-policy \`${p.policy ?? 'noeviction değil'}\`: bellek sıkışınca Redis işleri silebilir. BullMQ \`noeviction\` ister.`,
    MemoryHigh: (p: Record<string, string | number>) =>
      `:warning: Redis belleği ${p.percent !== undefined ? `maxmemory'nin %${p.percent} seviyesinde` : "maxmemory'ye yakın"}.`,
    WorkerInspectFailed: (p: Record<string, string | number>) =>
      `:warning: Worker’lar sorgulanamadı${p.reason ? ` (${p.reason})` : ''}; worker sayıları eksik olabilir.`,
    ResultBackendMissing: (p: Record<string, string | number>) =>
      p.reason
        ? `:warning: Result backend yanıt vermiyor (${p.reason}): başarısız görevler sayılmıyor.`
        : ':information_source: Result backend tanımlı değil: başarısız görevler sayılmıyor.',
    ThroughputUnattributed: (p: Record<string, string | number>) =>
      `:information_source: Son biten ${p.results ?? 'bazı'} sonuç kuyruk adı taşımıyor (Celery'de \`result_extended\` kapalı); kuyruk başına hız bilinemiyor.`,
    PausedButConsumed: (p: Record<string, string | number>) =>
      `:warning: ${p.queue ?? 'Bir kuyruk'} queue-ops ile duraklatıldı, ama ${p.consumers ?? 'bazı'} worker onu yeniden dinliyor (bir worker yeniden mi başladı?), yani işleri çalışıyor. Duraklatmayı temizlemek için devam ettirin, duraklı kalması gerekiyorsa yeniden duraklatın.`,
  },
  unknownWarning: (code: string) => `:warning: ${code}`,
  workers: (count: number, running: number | null) =>
    `Worker’lar: ${count === 0 ? 'bağlı worker yok' : count}${running !== null && count > 0 ? ` · ${running} görev çalışıyor` : ''}`,
  unacked: (n: string) => `${n} alındısız (unacked)`,
  retryLoop: (retrying, tasks, sampled) =>
    `:repeat: Retry döngüsü: yeniden denendikten sonra tekrar çalışmayı bekleyen ${retrying} görev: ${tasks}` +
    (sampled ? ` (${sampled} mesajlık örneklemde)` : ''),
  retryTask: (name, count, maxRetries) => `${name} ×${count} (en çok ${maxRetries} deneme)`,
  systemError: (name: string, type: string, error: string) => `:x: *${name}* · ${type}: ${error}`,
  moreQueues: (
    n: number,
    counts: { failures: number; backlog: number; paused: number; noWorkers: number },
    hint: string,
  ) => {
    const parts = [
      counts.failures ? `${counts.failures} tanesinde başarısız iş` : '',
      counts.backlog ? `${counts.backlog} tanesinde birikme` : '',
      counts.paused ? `${counts.paused} tanesi duraklatılmış` : '',
      counts.noWorkers ? `${counts.noWorkers} tanesinde worker yok` : '',
    ].filter(Boolean);
    return `… ve ${n} kuyruk daha: ${parts.length ? parts.join(', ') : 'hiçbirinde uyarı yok'}; \`${hint}\` kullanın`;
  },
  queueHint: (system: string) => `/queue status ${system}/<kuyruk>`,
  moreSystems: (n: number, failing: number, flagged: number) =>
    `… ve ${n} sistem daha` +
    (failing || flagged
      ? `: ${[failing ? `${failing} tanesi yanıt vermiyor` : '', flagged ? `${flagged} tanesinde uyarılı kuyruk var` : ''].filter(Boolean).join(', ')}`
      : '') +
    '; `/queue status <sistem>` kullanın',
  openDlq: (target: string) => `DLQ’yu aç: ${target}`,
  refresh: 'Yenile',
  fallback: (scope: string, systems: number, flagged: number, failing: number) =>
    `Kuyruk durumu${scope ? ` (${scope})` : ''}: ${systems} sistem, ${flagged} kuyruk dikkat gerektiriyor` +
    (failing ? `, ${failing} sistem yanıt vermiyor` : '') +
    '.',
  units: {
    bytes: ['B', 'KB', 'MB', 'GB', 'TB'],
    // The runbooks' own abbreviations: "10 sn", "15 dk", "24 sa".
    duration: (d: number, h: number, m: number, s: number) =>
      d > 0 ? `${d} g ${h} sa` : h > 0 ? `${h} sa ${m} dk` : m > 0 ? `${m} dk ${s} sn` : `${s} sn`,
    ago: (duration: string) => `${duration} önce`,
    justNow: 'az önce',
    inFuture: (duration: string) => `${duration} sonra`,
    utc: (iso: string) => `${iso} UTC`,
  },
};
