import type { Catalog } from '../catalog.js';

/** `/queue workers` metinleri. Redis'ten gelen argümanlar mrkdwn için kaçışlanmış gelir. */
export const workers: Catalog['workers'] = {
  details: {
    addr: (address: string) => `${address} adresinden`,
    connectedFor: (duration: string) => `${duration} süredir bağlı`,
    concurrency: (n: string) => `eşzamanlılık ${n}`,
    processes: (n: string) => `${n} havuz süreci`,
    resized: (processes: string, started: string) =>
      `${processes} havuz süreci (eşzamanlılık ${started} ile başladı)`,
    pid: (pid: string) => `pid ${pid}`,
  },
  uptime: (duration: string) => `${duration} süredir açık`,
  title: 'Worker’lar',
  updated: (utc: string) => `Güncellendi: ${utc}`,
  argsNote: 'Görev argümanları asla gösterilmez.',
  systemLine: (name: string, type: string, count: number, running: number | null) =>
    `*${name}* · ${type} · ${count} worker${running !== null ? ` · ${running} görev çalışıyor` : ''}`,
  none: 'Bağlı worker yok.',
  queues: (list: string) => `kuyruklar: ${list}`,
  allQueues: 'tüm kuyruklar',
  moreQueues: (n: number) => `+${n} tane daha`,
  reserved: (n: number, next: string | null) => `${n} ayrılmış${next ? ` (sıradaki: ${next})` : ''}`,
  running: (n: number) => `${n} çalışıyor`,
  idle: (duration: string) => `${duration} boşta`,
  longest: (task: string, duration: string | null) =>
    duration ? `en uzun: ${task}, ${duration} süredir` : `çalışıyor: ${task}`,
  moreWorkers: (n: number) => `… ve daha az meşgul ${n} worker daha.`,
  systemError: (name: string, type: string, error: string) => `:x: *${name}* · ${type}: ${error}`,
  moreSystems: (n: number) => `… ve ${n} sistem daha; \`/queue workers <sistem>\` kullanın`,
  refresh: 'Yenile',
  fallback: (systems: number, workers: number) => `Worker’lar: ${systems} sistemde ${workers} worker.`,
};
