import type { results as english } from '../en/results.js';

/** `/queue results <sistem>` dizeleri. */
export const results: typeof english = {
  usage: '/queue results <sistem>',
  summary:
    'sonuç deposundaki Celery sonuçları (celery-task-meta-*): kaç tane, kaçı hiç silinmeyecek, bellek, en eskisi',
  title: (system) => `${system} Celery sonuçları`,
  fallback: (system, count, withoutTtl) => `${system}: ${count} sonuç, ${withoutTtl} TTL’siz`,
  counts: (count, withoutTtl, percent) =>
    `*${count}* sonuç · *${withoutTtl}* TTL’siz (%${percent}): Redis bunları hiç silmez`,
  memory: (bytes) => `bellek: ${bytes}`,
  oldest: (age, at, id) => `en eski: ${age} önce bitti (${at}), görev \`${id}\``,
  none: 'Kayıtlı sonuç yok.',
  complete: (total) => `Sonuç deposunun ${total} anahtarının tümü sayıldı.`,
  sampled: (scanned, total, stoppedBy) =>
    `Örneklem: ${stoppedBy} bütçesi dolmadan ${total} anahtardan ${scanned} tanesi tarandı; sayılar o kısma ait.`,
  estimate: (count, withoutTtl, bytes) =>
    `Tüm anahtar alanına oranlanırsa: yaklaşık ${count} sonuç, ${withoutTtl} TTL’siz, ${bytes}.`,
  budget: { keys: 'anahtar', time: 'süre', done: 'hiçbir' },
  hint: (system: string) =>
    `TTL’siz sonuçlar silinene kadar kalır: Celery’nin \`result_expires\` ayarını verin, kayıtlı olanlara \`/queue expire-results ${system}\` ile TTL verin (runbook’taki KEYS üzerinde EXPIRE döngüsü Redis’i kilitler).`,
  expire: {
    usage: '/queue expire-results <sistem> [süre]',
    summary: 'TTL’siz Celery sonuçlarına TTL verir (varsayılan 1d), sınırlı gruplar halinde; onay ister',
  },
  badTtl: (text) => `\`${text}\` bir TTL değil.`,
  ttlValid: '1m ile 365d arası bir süre: 30m, 12h, 1d, 7d',
  expirePreview: (system, withoutTtl, complete, ttl, results) =>
    `expire-results ${system}: ${results} Celery sonucundan ${complete ? '' : 'en az '}${withoutTtl} tanesinin TTL’si yok ve ${ttl} alacak; ` +
    'TTL’si olanlar kendi TTL’lerini korur. Süre dolunca Redis onları siler.' +
    (complete ? '' : ' (Sayım süre bütçesinde durdu; çalıştırma tüm anahtarları dolaşır.)'),
  nothingToExpire: 'süreli (her sonucun bir TTL’si var)',
  expired: (system, expired, ttl, results) =>
    `${system} sisteminin ${expired} Celery sonucuna ${ttl} TTL verildi (dolaşılan ${results} sonuçtan; diğerlerinin zaten vardı)`,
};
