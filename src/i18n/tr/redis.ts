import type { redis as english } from '../en/redis.js';

/** `/queue redis <system>` dizeleri. */
export const redis: typeof english = {
  usage: '/queue redis <sistem>',
  summary:
    'bir sistemin Redis’i: bellek, istemciler, slow log, anahtar alanı, en büyük anahtarlar, kalıcılık',
  title: (system) => `${system} Redis’i`,
  fallback: (system, used, clients) => `${system} Redis’i: ${used} kullanımda, ${clients} istemci`,
  server: (version, role, uptime) =>
    [version ? `Redis ${version}` : 'Redis', role, uptime ? `${uptime} süredir açık` : null]
      .filter(Boolean)
      .join(' · '),
  memoryTitle: '*Bellek*',
  memory: (used, peak, max, percent, policy) =>
    `kullanılan ${used} (zirve ${peak}) · ${max ? `sınır ${max}${percent !== null ? `, %${percent}` : ''}` : 'sınır yok'} · politika \`${policy}\``,
  memoryDetail: (dataset, overhead, rss, fragmentation) =>
    [
      dataset ? `veri ${dataset}` : null,
      overhead ? `ek yük ${overhead}` : null,
      rss ? `RSS ${rss}` : null,
      fragmentation ? `parçalanma ${fragmentation}` : null,
    ]
      .filter(Boolean)
      .join(' · '),
  fragmentationHigh: (ratio) =>
    `:warning: parçalanma ${ratio}: Redis verisinden çok daha fazla bellek tutuyor (\`MEMORY PURGE\` ya da yeniden başlatma geri verir).`,
  clientsTitle: '*İstemciler*',
  clients: (connected, blocked, max) =>
    `${connected} bağlı${max !== null ? ` / ${max}` : ''} · ${blocked} bekleyen (BRPOP/BZPOPMIN…)`,
  clientsNearLimit: (percent) =>
    `:warning: istemciler maxclients’ın %${percent}’inde: yeni bağlantılar yakında reddedilecek.`,
  slowlogTitle: '*Slow log* (en yeni önce; yalnızca komut ve ilk anahtar, diğer argümanlar asla)',
  slowlogLine: (at, duration, command, key) => `${at} · ${duration} · \`${command}\`${key ? ` ${key}` : ''}`,
  slowlogEmpty: 'boş',
  slowlogDenied: (reason) => `okunamıyor: ${reason}`,
  keyspaceTitle: '*Anahtar alanı*',
  keyspaceLine: (db, keys, noTtlPercent) => `db${db}: ${keys} anahtar, %${noTtlPercent} TTL’siz`,
  keyspaceEmpty: 'anahtar yok',
  bigKeysTitle: (scanned, total, complete, stoppedBy, queues, queueKeys) =>
    `*En büyük anahtarlar* (${queues > 0 ? `${queues} kuyruğun ${queueKeys} anahtarının tümü ve ` : ''}örneklem: ${complete ? `${total} anahtarın tümü` : `${total} anahtardan ${scanned}, ${stoppedBy} bütçesi doldu`}; değerler asla)`,
  explained: (listed, bytes, percent, used) =>
    `Yukarıdaki ${listed} anahtar ${bytes} tutuyor: kullanılan ${used} belleğin %${percent} kadarı.`,
  budget: { keys: 'anahtar', time: 'süre', done: 'hiçbir' },
  bigKeyLine: (key, type, bytes, length) =>
    `${key} · ${type} · ${bytes}${length !== null ? ` · ${length} ${type === 'string' ? 'bayt uzunluğunda' : 'öğe'}` : ''}`,
  bigKeysNone: 'örneklenen anahtar yok',
  persistenceTitle: '*Kalıcılık*',
  persistence: (rdb, aof, lastSave, changes) =>
    [
      `son RDB kaydı: ${rdb}`,
      aof === null ? 'AOF kapalı' : `AOF son yazma: ${aof}`,
      lastSave ? `son kayıt ${lastSave}` : null,
      changes !== null ? `o zamandan beri ${changes} değişiklik` : null,
    ]
      .filter(Boolean)
      .join(' · '),
  persistenceFailing:
    ':rotating_light: Redis verisini diske yazamadı: şu an tuttukları yeniden başlatmadan sağ çıkmayabilir.',
  loading: ':hourglass: Redis verisini diskten yüklüyor: bitene kadar LOADING yanıtı verir.',
  snapshotOnly:
    'Yalnızca anlık görüntü (AOF yok): bir çöküşten sonra Redis son kaydındaki haliyle döner; bunun bir purge’e etkisi için docs/purge-and-undo.md.',
};
