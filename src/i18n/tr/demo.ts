import type { Catalog } from '../catalog.js';

/** Çevrimdışı demo ve konsolu (`npm run demo`). */
export const demo: Catalog['demo'] = {
  usage: [
    'Kullanım: npm run demo -- [--scale full|small] [--user U0ALICE] [--db N] [--locale en|tr] [--script "status" …]',
    '',
    '  --scale    full (yaklaşık 100k BullMQ işi ve 50k Celery mesajı, varsayılan) ya da small',
    '  --user     konsolun hangi Slack kullanıcısı olarak çalışacağı (varsayılan U0ALICE, operatör;',
    '             U0BOB ve U0CAROL admin)',
    '  --db       REDIS_URL ile: kullanılacak veritabanı numarası (varsayılan: en yüksek boş olan)',
    '  --locale   mesajların dili: en ya da tr (config’teki `locale:`)',
    '  --script   konsolu açmak yerine bu komutları çalıştır, her yanıtı yaz, çık',
    '',
    '--script yoksa ve stdin bir terminal değilse, komutlar stdin’den satır satır okunur.',
    'REDIS_URL: kullanılacak mevcut bir Redis (yalnızca kendine ait boş bir veritabanına dokunulur);',
    'yoksa özel bir redis-server başlatılır ve çıkışta durdurulur.',
  ].join('\n'),
  badOption: (detail: string) => `queue-ops demo: ${detail} (bkz. --help)`,
  options: {
    unknown: (option: string) => `bilinmeyen seçenek ${option}`,
    scale: (value: string) => `--scale full ya da small olmalı, "${value}" değil`,
    user: (value: string) => `--user bir Slack kullanıcı kimliği (U…) olmalı, "${value}" değil`,
    db: '--db 0 ile 15 arasında bir sayı olmalı',
    locale: (value: string, valid: readonly string[]) =>
      `--locale şunlardan biri olmalı: ${valid.join(', ')}; "${value}" değil`,
  },
  noRedis: (reason: string) =>
    `queue-ops demo: çalışacak Redis yok: ${reason}. Debian’ın redis-server paketini kurun (apt-get install redis-server) ya da REDIS_URL’i PING’e yanıt veren bir Redis’e ayarlayın.`,
  redisUrlUnusable: (url: string, reason: string) => `REDIS_URL ${url} kullanılamıyor: ${reason}`,
  noFreeDb: 'demonun alabileceği boş bir veritabanı (1–15) yok',
  dbNotEmpty: (db: number) =>
    `${db} numaralı veritabanı boş değil, demo yalnızca boş bir veritabanı kullanır`,
  startingRedis: 'Özel bir redis-server başlatıldı.',
  seedingBullmq: (system: string) =>
    `${system} dolduruluyor (BullMQ, gerçek Queue.addBulk ve başarısız olan bir Worker)…`,
  seedingCeleryReal: (system: string) =>
    `${system} dolduruluyor (Celery: python3-celery’den gerçek bir worker, başarısız görevler, sonra birikme)…`,
  seedingCelerySimulated: (system: string) =>
    `${system} dolduruluyor (Celery wire formatı, doğrudan yazılıyor)…`,
  seeded: (jobs: string, seconds: string) => `${seconds} sn içinde ${jobs} iş ve mesaj yüklendi.`,
  bannerTitle: 'queue-ops demo: Pushizo ve Zeus runbook’larına benzeyen iki sistem.',
  bannerRedisPrivate: (url: string) => `Redis:   ${url} adresinde özel redis-server (çıkışta durur)`,
  bannerRedisShared: (url: string, db: number) =>
    `Redis:   ${url}, veritabanı ${db} (çıkışta yalnızca demonun kendi key’leri silinir)`,
  bannerConfig: (path: string) => `Config:  ${path}`,
  bannerCli: (path: string) =>
    `         CLI’yi buna karşı deneyin: node bin/queue-ops.js --config ${path} --json status`,
  bannerPeople: (operator: string, admin1: string, admin2: string, you: string) =>
    `Kişiler: ${operator} operatör · ${admin1} admin · ${admin2} admin. Siz ${you} olarak çalışıyorsunuz; :user <id> kim olduğunuzu değiştirir.`,
  bannerApprovals: (operator: string, admin1: string, admin2: string) =>
    `Onaylar: pause, scale ve restart: ${operator} ister, ${admin1} ya da ${admin2} onaylar (ör. pause pushizo/dispatch-ios,`,
  bannerApprovalsThen: (admin1: string, admin2: string) =>
    `           sonra :user ${admin1} ve Onayla’ya basın). purge ve undo: bir admin ister (${admin1}), öbürü (${admin2}) onaylar.`,
  bannerScaleCompose: (group: string, service: string, log: string) =>
    `Scale:   ${group} bir Compose servisi (${service}): demonun PATH’indeki yedek docker her çağrıyı ${log} dosyasına yazar`,
  bannerScalePool: (group: string, worker: string) =>
    `         ${group}, gerçek Celery worker’ı ${worker} için havuz; pidbox üzerinden büyütülür ya da küçültülür.`,
  bannerScalePoolSimulated: (group: string) =>
    `         ${group} bir Celery havuzu: Celery simüle edildiğinden hiçbir worker yanıt vermez, ölçekleme reddedilir.`,
  bannerRestartCompose: (group: string, service: string) =>
    `Restart: restart ${group}, aynı yedek docker ile docker compose restart ${service} çalıştırır (kaydedilir; container çalışmadığından sonrasında worker denetlenmez).`,
  bannerRestartPool: (group: string, worker: string) =>
    `         restart ${group}, ${worker} worker’ına pool_restart gönderir (worker_pool_restarts=True ile çalışır) ve ping’e yeniden yanıt verdiğini denetler.`,
  bannerRestartPoolSimulated: (group: string) =>
    `         restart ${group}: Celery simüle edildiğinden hiçbir worker yanıt vermez, reddedilir.`,
  bannerMonitor: (seconds: number, hours: number) =>
    `İzleme:  demonun içinde ${seconds} sn’de bir çalışır, geriye dönük doldurulmuş ${hours} saatlik örneklerle: alerts, trend, timeline deneyin.`,
  bannerTrend: (path: string) => `Grafik:  trend pushizo/dispatch-ios grafiğini ${path} dosyasına yazar`,
  bannerFiles: (dir: string) => `Dosyalar: demonun yazdığı her şey ${dir} altında, çıkışta silinir.`,
  bannerCeleryReal:
    'Celery:  gerçek bir Celery worker’ı (zeus-worker-1@demo) celery:notification_sending kuyruğunu dinliyor.',
  bannerCelerySimulated:
    'Celery:  SİMÜLE: python3-celery kurulu değil, bu yüzden zeus mesajları ve hataları Celery’nin wire formatında yazıldı ve hiçbir Celery worker’ı çalışmıyor.',
  bannerHint: '/queue status (ya da sadece: status) yazın, sonra basmak için bir buton numarası. help, quit.',
  consoleHelp: [
    'Konsol:',
    '  status | dlq pushizo/dispatch-ios | workers zeus | help   /queue’dan sonraki kelimeler ("/queue" isteğe bağlı)',
    '  pause pushizo/dispatch-ios | pending | approve <kimlik> | audit | audit verify',
    '  purge pushizo/dispatch-ios failed | undo <kimlik> | scale pushizo/dispatch 3 | scale zeus/pool 4',
    '  alerts | trend pushizo/dispatch-ios | timeline | why pushizo | why zeus/celery:alarm_processing',
    '  1, 2, …        son mesajın o butonuna bas',
    '  :user U0BOB    başka bir Slack kullanıcısı olarak çalış (onaylar iki kişi ister;',
    '                 U0ALICE operatör, U0BOB ve U0CAROL admin)',
    '  quit           çık (Ctrl-D de olur)',
  ].join('\n'),
  prompt: (user: string) => `${user} /queue> `,
  noButtons: 'Son mesajda buton yok. Önce bir komut yazın, ör. status.',
  noSuchButton: (index: number, max: number) => `${index} numaralı buton yok; son mesajda 1–${max} var.`,
  unknownButton: (label: string) => `"${label}" butonu konsolda bir şey yapmaz.`,
  userSwitched: (user: string) => `Artık ${user} olarak çalışıyorsunuz.`,
  badUser: (text: string) => `"${text}" bir Slack kullanıcı id’si değil (U… ya da W…), ör. :user U0BOB.`,
  stopping: 'Demo durduruluyor…',
  monitoring: 'İzleme örnekleri geriye dönük dolduruluyor ve izleme başlatılıyor…',
  fileWritten: (path: string) => `Grafik ${path} dosyasına yazıldı`,
};
