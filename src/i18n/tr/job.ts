import type { job as english } from '../en/job.js';

/** `/queue job` dizeleri. */
export const job: typeof english = {
  usage: '/queue job <sistem>/<kuyruk> <iş-id>  (Celery: /queue job <sistem> <görev-id>)',
  summary:
    'id’siyle tek bir iş: nerede, denemeler, süreler, hatası ve yığını, üst ve alt işleri; verisi asla',
  needsId: 'Kuyruğu sistem/kuyruk olarak ve iş id’sini yazın (Celery görevi: sistem ve görev id’si).',
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
  taskTitle: (system, id) => `Görev ${id} · ${system}`,
  taskStates: {
    queued: 'kuyrukta',
    unacked: 'teslim edildi, henüz onaylanmadı (bir worker tutuyor ya da ETA’sını bekliyor)',
    active: 'çalışıyor',
    reserved: 'bir worker ayırdı, başlamadı',
    scheduled: 'bir worker’da zamanlanmış (ETA)',
    SUCCESS: 'başarılı',
    FAILURE: 'başarısız',
    RETRY: 'başarısız, yeniden denenecek',
    REVOKED: 'iptal edildi',
    STARTED: 'başladı',
  },
  queuedAt: (queue, priority, ahead) =>
    `\`${queue}\` içinde (öncelik ${priority}): ${ahead === '0' ? 'sıradaki' : `ondan önce ${ahead} mesaj alınacak`}`,
  onWorker: (worker) => `worker: \`${worker}\``,
  resultLine: (status, done, retries) =>
    `sonuç: ${status}${done ? ` · bitti ${done}` : ''}${retries ? ` · ${retries} yeniden deneme` : ''}`,
  tracebackTitle: '*Traceback* (son satırlar)',
  taskSearched: (n, complete) =>
    complete ? `kuyruklarının ${n} mesajının tümü arandı` : `kuyruklarının ${n} mesajı arandı, tümü değil`,
  argsNote: 'Görev argümanları ve sonuçları asla gösterilmez.',
  revoke: 'İptal et (revoke)',
  retry: 'Yeniden dene',
  fail: 'Başarısız say',
  refresh: 'Yenile',
  view: (command) => `görüntüle: \`${command}\``,
};
