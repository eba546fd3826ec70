import type { Catalog } from '../catalog.js';

const n = (value: number) => value.toLocaleString('tr-TR');

/** Bir ondalıklı megabayt, altında kB (tr-TR: `3,1 MB`). */
const size = (bytes: number) =>
  bytes >= 1_000_000
    ? `${(bytes / 1_000_000).toLocaleString('tr-TR', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} MB`
    : bytes < 10_000
      ? `${Math.max(0.1, Math.round(bytes / 100) / 10).toLocaleString('tr-TR', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} kB`
      : `${Math.round(bytes / 1000)} kB`;

const age = (seconds: number | null) => {
  if (seconds === null) return 'yaşı bilinmiyor';
  if (seconds < 90) return `${seconds} sn önce eklendi`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} dk önce eklendi`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} sa önce eklendi`;
  return `${Math.round(seconds / 86_400)} gün önce eklendi`;
};

/** Durum adları İngilizce gelir (komut kelimeleri); okunurken Türkçesi. */
const stateNames: Record<string, string> = {
  waiting: 'bekleyen',
  failed: 'başarısız',
  delayed: 'gecikmeli',
  all: 'tüm',
};
const stateName = (state: string) =>
  state
    .split(/(,\s*|\s+ve\s+|\s+or\s+|\s+and\s+)/)
    .map((part) => stateNames[part] ?? part)
    .join('');

/** Purge, undo ve ilerlemeleri. */
export const purge: Catalog['purge'] = {
  purge: {
    usage:
      '/queue purge <sistem>/<kuyruk> [waiting|failed|delayed|all] [--error <metin>] [--name <ad>] [--older-than <süre>] [--newer-than <süre>] [--keep <n>]',
    summary:
      'bir kuyruğun tek bir durumdaki işlerini (ya da süzgeçlere uyanları) önce arşivle, sonra sil (varsayılan waiting); failed --keep n en yeni n tanesini tutar; geri alınabilir',
  },
  undo: {
    usage: '/queue undo <purge-istek-id>',
    summary: 'bir purge’ü arşivinden geri yükle (aynı id’ler, veri ve sıra)',
  },
  states: 'waiting, failed, delayed ya da all',
  badState: (value: string) => `\`${value}\` temizlenebilecek bir durum değil.`,
  nothingToPurge: (target: string, states: string) =>
    `${target} içinde ${stateName(states)} iş yok; temizlenecek bir şey yok.`,
  preview: (
    target: string,
    states: string,
    total: number,
    byState: string,
    sample: { name: string; ageSeconds: number | null }[],
    archivePath: string,
    estimatedBytes: number,
    id: string,
  ) =>
    `purge ${target} (${stateName(states)}): ${n(total)} iş önce arşivlenecek, sonra silinecek` +
    `${byState ? ` (${byState})` : ''}. Sıradakiler: ${
      sample.length ? sample.map((s) => `${s.name || '(adsız)'} (${age(s.ageSeconds)})`).join(', ') : 'yok'
    }. Arşiv: ${archivePath}, yaklaşık ${size(estimatedBytes)}. Geri almak için \`/queue undo ${id}\`.`,
  byState: (state: string, count: number) => `${stateName(state)} ${n(count)}`,
  unsupported: (state: string, why: string) => `${stateName(state)}: ${why}`,
  undoPreview: (id: string, target: string, purged: number, archivePath: string) =>
    `undo ${id}: ${target} kuyruğunun ${n(purged)} işi ${archivePath} arşivinden aynı id’ler ve sırayla geri yüklenecek. Id’si Redis’te yeniden bulunan bir iş (Celery’de: görev id’si kuyruğun herhangi bir öncelik listesinde ya da \`unacked\` içinde bir worker’da olan mesaj) olduğu gibi bırakılır ve sayılır, asla ikinci kez geri konmaz.`,
  undoUnknown: 'bu id’ye sahip bir purge yok',
  undoAlready: (by?: string) => `zaten geri alınmış${by ? ` (${by} tarafından)` : ''}`,
  undoRunning: 'hâlâ çalışıyor',
  undoInterrupted:
    'geri alma, süreciyle birlikte durdu; arşivin bir kısmı Redis’e dönmüş olabilir: yeniden geri almadan önce kuyruğu kontrol edin',
  undoResuming:
    'yarıda kalan bir geri alması var; Redis yeniden yanıt verince kaldığı yerden kendiliğinden sürer (bot 30 sn’de bir dener, komut satırı bir sonraki çalıştırmada)',
  undoArchiveGone: (at: string) => `arşivi ${at} tarihinde saklama süresi temizliğiyle silindi`,
  progress: (verb: string, done: number, total: number, secondsLeft: number | null) => {
    const percent = total > 0 ? Math.floor((done / total) * 100) : 100;
    return `${verb}… ${n(total)} işin ${n(done)} tanesi, %${percent}${secondsLeft === null ? '' : `, ~${Math.ceil(secondsLeft)} sn kaldı`}`;
  },
  stoppedForShutdown: 'bot kapanırken bu purge’ü bitirmek; bir sonraki başlangıç onu arşivinden tamamlar',
  purgingVerb: 'Temizleniyor',
  restoringVerb: 'Geri yükleniyor',
  expiringVerb: 'TTL veriliyor',
  previewExactly: (total: number) =>
    ` Çalışacak olan tam olarak budur: en çok bu ${n(total)} iş (her durum için gösterilen sayı kadar, en eskiden başlayarak) gider; bu önizlemeden sonra gelen işler kalır.`,
  resultPurged: (purged: number, archived: number, archivePath: string, id: string, newSincePreview = 0) =>
    `Arşivlenen ${n(archived)} işin ${n(purged)} tanesi silindi${
      archived > purged ? ` (${n(archived - purged)} tanesini worker’lar almıştı, dokunulmadı)` : ''
    }. Arşiv: ${archivePath}. Geri al: \`/queue undo ${id}\`.${
      newSincePreview > 0 ? ` Önizlemeden sonra gelen ${n(newSincePreview)} iş bırakıldı.` : ''
    }`,
  resultRestored: (restored: number, purgeId: string, alreadyThere = 0) =>
    `${purgeId} purge’ünün ${n(restored)} işi geri yüklendi.${
      alreadyThere > 0
        ? ` ${n(alreadyThere)} iş aynı id ile Redis’te zaten vardı; olduğu gibi bırakıldı, ikinci kez geri konmadı.`
        : ''
    }`,
  why: (code: string) =>
    code === 'EtaTasksLiveInWorkers'
      ? 'Celery ETA/countdown görevlerini bir Redis listesinde değil, onları önceden alan worker’ların içinde (ve `unacked` içinde) tutar; temizlenecek gecikmeli bir şey yok'
      : code,
};
