import type { job as english } from '../en/job.js';

/** `/queue job` dizeleri. */
export const job: typeof english = {
  usage: '/queue job <sistem>/<kuyruk> <iş-id>',
  summary:
    'id’siyle tek bir iş: nerede, denemeler, süreler, hatası ve yığını, üst ve alt işleri; verisi asla',
  needsId: 'Kuyruğu sistem/kuyruk olarak ve iş id’sini yazın.',
  title: (target, id) => `İş ${id} · ${target}`,
  fallback: (target, id, state) => `${target} içinde iş ${id}: ${state}`,
  notFound: (id, where) => `\`${id}\` diye bir iş yok: ${where} arandı.`,
  states: {
    waiting: 'bekliyor',
    paused: 'bekliyor (kuyruk duraklatıldı)',
    active: 'çalışıyor',
    delayed: 'gecikmeli',
    prioritized: 'öncelikli',
    failed: 'başarısız',
    completed: 'tamamlandı',
    'waiting-children': 'alt işlerini bekliyor',
    unknown: 'hiçbir liste ya da kümede değil (taşınıyor ya da arama sınırının ötesinde bekliyor)',
  },
  stateLine: (state, name) => `*${state}* · \`${name}\``,
  position: (ahead) => (ahead === '0' ? 'sıradaki iş' : `ondan önce ${ahead} iş alınacak`),
  searched: (n) => `worker’ların sıradaki ${n} işi arandı`,
  due: (at, inWords) => `zamanı ${at} (${inWords})`,
  priority: (p) => `öncelik ${p}`,
  attempts: (made, allowed) =>
    made === 0
      ? `henüz denenmedi${allowed !== null ? ` (${allowed} deneme hakkı)` : ''}`
      : allowed === null
        ? `${made} deneme yapıldı`
        : `deneme ${made} / ${allowed}`,
  lockHeld: (ttl) => `bir worker kilidini tutuyor${ttl ? ` (${ttl} kaldı)` : ''}`,
  lockLost:
    'hiçbir worker kilidini tutmuyor: takılmış (stalled), bir worker yeniden alacak ya da başarısız sayacak',
  timesTitle: '*Süreler*',
  added: (at) => `eklendi ${at}`,
  processed: (at, wait) => `başladı ${at}${wait ? `, ${wait} bekledikten sonra` : ''}`,
  finished: (at, run) => `bitti ${at}${run ? `, ${run} çalıştıktan sonra` : ''}`,
  errorTitle: '*Hata*',
  stackTitle: '*Yığın* (ilk satırlar)',
  progress: (text) => `ilerleme: ${text}`,
  parent: (queue, id) => `üst iş: \`${queue}\` içinde \`${id}\``,
  children: (pending, processed, failed) =>
    `alt işler: ${pending} bekleyen, ${processed} biten${failed ? `, ${failed} başarısız` : ''}`,
  childKeys: (list) => `bekleyenler: ${list}`,
  repeat: (key) => `tekrarlanır: \`${key}\``,
  dataNote: 'İş verisi ve dönüş değerleri asla gösterilmez.',
  retry: 'Yeniden dene',
  fail: 'Başarısız say',
  refresh: 'Yenile',
  view: (command) => `görüntüle: \`${command}\``,
};
