import type { why as english } from '../en/why.js';

/** `/queue why` dizeleri. */
type P = Record<string, string>;

export const why: typeof english = {
  usage: '/queue why <sistem>[/<kuyruk>]',
  summary: 'iş neden birikiyor: kanıtın desteklediği runbook sebepleri, her biri kanıtı ve çözümüyle',
  title: (target) => `Neden: ${target}`,
  verdict: {
    cause: 'Sebep bulundu',
    unclear: 'Net bir sebep yok: kanıt karar verdirmiyor',
    healthy: 'Bir sorun yok',
  },
  healthyLine: 'Hiçbir kontrol sorun bulmadı:',
  unclearLine: 'Burada kesin bir şey yok; her kontrolün bulduğu:',
  confidence: { strong: 'güçlü', possible: 'olası' },
  cause: {
    'no-workers': 'Worker yok',
    'no-capacity': 'Kapasite yetersiz',
    'stuck-tasks': 'Takılı görevler slotları tutuyor',
    'redis-memory': 'Redis belleği dolu',
    'task-burst': 'Görev patlaması',
    'retry-loop': 'Retry döngüsü',
    'redis-network': 'Redis’e bağlantı kararsız',
    'slow-dependency': 'Yavaş bir bağımlılık',
    paused: 'Kuyruk duraklatılmış',
    'jobs-vanished': 'İşler kayboldu',
  },
  causeLine: (title, confidence, queues) =>
    queues ? `*${title}* (${confidence}) · ${queues}` : `*${title}* (${confidence})`,
  moreQueues: (n) => `+${n} tane daha`,
  rule: (name) => `alarm kuralı \`${name}\``,
  checkResult: { found: 'bulundu', 'not-found': 'yok', unknown: 'anlaşılamadı' },
  checkLine: (cause, result, reason) => (reason ? `${cause}: ${result} (${reason})` : `${cause}: ${result}`),
  reason: {
    workersNotAsked: 'worker’lar incelemeye yanıt vermedi',
    runningNotRead: 'çalışan işler okunamadı',
    redisNotRead: 'Redis’in INFO çıktısı okunamadı',
    noRates: 'karşılaştırılacak hız yok',
    thisReadOnly: 'yalnızca bu okuma: monitör örneği yok',
    noSamples: 'karşılaştırılacak monitör örneği yok',
  },
  nothingToClick: 'Bunun için tıklanacak bir şey yok.',
  fixesLabel: 'Çözüm:',
  note: {
    usual: (queue, note) => `Runbook’a göre ${queue} için olağan sebep: “${note}”`,
    yes: (cause) => `canlı kanıt bununla uyuşuyor (${cause})`,
    elsewhere: (cause) => `canlı kanıt başka yeri gösteriyor: ${cause}`,
    nothing: 'canlı kanıt şu an bunu göstermiyor',
  },
  fixGone:
    'Kanıt artık bu çözümü gerektirmiyor. Şimdi neyi gerektirdiği için `/queue why` komutunu yeniden çalıştırın.',
  badFix: '`why` için bir çözüm değil: çözüm anahtarı bir çözüm düğmesinden gelen 12 onaltılık karakterdir.',
  generated: (at) => `Okunma: ${at}`,
  evidence: {
    noConsumer: (p: P, n) =>
      n.queues! > 1
        ? `${p.queues} kuyrukta ${p.waiting} iş bekliyor (en derini ${p.queue}) ve onları tüketen worker yok`
        : `${p.queue} üzerinde ${p.waiting} iş bekliyor ve onu tüketen worker yok`,
    noConsumerSince: (p: P) => `${p.queue} ${p.sinceAt} saatinden beri tüketicisiz`,
    oldestWaiting: (p: P) => `${p.queue} üzerindeki en eski iş ${p.ageSeconds} bekledi`,
    workerLeft: (p: P) => `${p.worker} worker’ı ${p.lastSeenAt} sonrasında yanıt vermeyi bıraktı`,
    workersNow: (p: P) =>
      `şu an ${p.now} worker yanıt veriyor; son örneklerde ${p.before} taneye kadar vardı`,
    workersSteady: (p: P) => `şu an ${p.now} worker yanıt veriyor, son örneklerdekinden az değil`,
    pausedBehind: (p: P) => `${p.queue} duraklatılmış ve arkasında ${p.waiting} iş bekliyor`,
    pausedBy: (p: P) => `${p.sinceAt} saatinde ${p.by} tarafından duraklatıldı`,
    stuckRunning: (p: P) =>
      p.sinceAt
        ? `${p.count} görev ${p.minutes} dakikadan uzun süredir çalışıyor (${p.name}, ${p.sinceAt} saatinden beri)`
        : `${p.count} görev ${p.minutes} dakikadan uzun süredir çalışıyor (${p.name})`,
    lockExpired: (p: P) => `${p.count} aktif işin kilidi düşmüş: onu tutan canlı worker yok (stalled)`,
    slotsHeld: (p: P) => `${p.worker} worker’ının ${p.slots} slotundan ${p.held} tanesini bunlar tutuyor`,
    waitingBehind: (p: P) => `${p.queue} üzerinde arkalarında ${p.waiting} iş bekliyor`,
    stalledFailed: (p: P) =>
      `${p.queue} kuyruğunda ${p.count} iş stalled olarak başarısız oldu (maxStalledCount)`,
    memoryUsed: (p: P) =>
      `Redis ${p.maxBytes} belleğin ${p.usedBytes} kadarını kullanıyor (%${p.percent}), politika ${p.policy}`,
    writesRefused: (p: P) => `Redis bellek yüzünden ${p.count} yazmayı reddetti (OOM)`,
    keysEvicted: (p: P) => `${p.policy} politikasıyla ${p.count} anahtar silindi: kayıp işler`,
    largestQueue: (p: P) => `en büyük kuyruk ${p.queue}, ${p.waiting} iş bekliyor`,
    arrivals: (p: P) =>
      `${p.queue} kuyruğuna dakikada ${p.perMinute} iş geliyor; olağanı dakikada ${p.usual}`,
    waitingNow: (p: P) =>
      p.ageSeconds
        ? `${p.queue} üzerinde ${p.waiting} iş bekliyor, hepsi son ${p.ageSeconds} içinde geldi`
        : `${p.queue} üzerinde ${p.waiting} iş bekliyor`,
    dominantName: (p: P) => `sıradaki işlerin %${p.percent} kadarı ${p.name}`,
    retrying: (p: P) => `bakılan ${p.sampled} mesajdan ${p.count} tanesi yeniden deneme`,
    retryingTask: (p: P) => `${p.name}: ${p.count} yeniden deneniyor, en çok ${p.retries} deneme`,
    attemptsUsed: (p: P) => `${p.queue} hataları ${p.attempts} denemeye kadar kullandı`,
    failingPerMinute: (p: P) =>
      `${p.queue} dakikada ${p.perMinute} hata veriyor, ${p.delayed} iş yeni deneme için ertelendi`,
    samplesFailed: (p: P) =>
      `son ${p.minutes} dakikadaki ${p.of} monitör okumasından ${p.failed} tanesi Redis’e ulaşamadı, aralarında ulaşanlar varken`,
    unreachableNow: () => 'Redis şu an yanıt vermiyor; az önce veriyordu',
    slowRoundTrip: (p: P) =>
      `Redis’e gidiş-dönüş ${p.ms} ms’ye çıkıyor (${p.of} monitör örneğinden ${p.samples} tanesinde ${p.threshold} ms üstü)`,
    youngConnections: (p: P) =>
      `${p.count} worker bağlantısının hepsi ${p.seconds} süresinden genç; Redis ise ${p.uptimeSeconds} süredir açık`,
    reconnects: (p: P) =>
      `son ${p.minutes} dakikanın ${p.of} monitör örneğinden ${p.samples} tanesinde ${p.count} worker bağlantısı kopanların yerine açıldı${p.young ? ` (en yenisinde ${p.others} bağlantıdan ${p.young} tanesi bir önceki örnekten beri yeni)` : ''}`,
    workersReturned: (p: P) =>
      `son ${p.minutes} dakikada worker’lar listeden düşüp aynı adla ${p.count} kez geri geldi`,
    connectionsRejected: (p: P) => `Redis son ${p.minutes} dakikada ${p.count} bağlantıyı reddetti`,
    silentConsumers: (p: P) =>
      `${p.count} kuyrukta tüketici ve bekleyen iş var, ama dakikalardır hiçbir iş yapılmadı (${p.queues})`,
    oldestConnection: (p: P) => `şu an en eski worker bağlantısı ${p.ageSeconds} yaşında`,
    callWho: (p: P) => `arayın: ${p.who}`,
    dependencyErrors: (p: P) =>
      `${p.queue} kuyruğundaki son ${p.of} hatadan ${p.count} tanesi ${p.error} diyor`,
    runP95: (p: P) => `${p.queue} üzerinde çalışma süresi p95 ${p.seconds}`,
    runP95Before: (p: P) => `monitör örneklerinde ${p.seconds} idi`,
    delayedNow: (p: P) => `${p.queue} üzerinde ${p.delayed} iş yeni deneme için ertelenmiş`,
    redisRestarted: (p: P, n) =>
      n.keys
        ? `Redis ${p.sinceAt} saatinde yeniden başladı ve diskten ${p.keys} anahtar yükledi`
        : `Redis ${p.sinceAt} saatinde yeniden başladı`,
    noSamplesToCompare: () => 'kuyrukları karşılaştırmak için önceden monitör örneği yok',
    depthFell: (p: P) =>
      `${p.queue} ${p.beforeAt} saatinde ${p.before} iş tutuyordu, şimdi ${p.now}; bunu açıklayan tamamlanma yok`,
    recover: () => 'kurtarma: runbook’taki `queue:recover` (restore.md §5)',
    drainMinutes: (p: P) =>
      `${p.queue} üzerinde ${p.waiting} iş, dakikada ${p.perMinute}: boşalması ${p.minutes} dakika`,
    waitingRising: (p: P) => `${p.queue} son ${p.samples} örneğin her birinde büyüdü`,
    slotsFull: (p: P) => `${p.workers} worker’ının her slotu dolu`,
  },
};
