import type { Catalog } from '../catalog.js';

/**
 * `restart <sistem>/<grup>` metinleri: önizlemesi (istekle saklanır) ve sonucu; ikisi de istek
 * mesajının bütün olarak kaçışladığı düz metindir.
 */
const list = (names: readonly string[], max = 8) =>
  names.slice(0, max).join(', ') + (names.length > max ? `, … (toplam ${names.length})` : '');

/** `pool_restart` için bir Celery worker'ının açık olması gereken ayar. */
const POOL_RESTARTS_SETTING = 'worker_pool_restarts=True (eski tarz ayarlarda CELERYD_POOL_RESTARTS)';

export const restart: Catalog['restart'] = {
  usage: '/queue restart <sistem>/<grup>',
  summary:
    "bir worker grubunu yeniden başlat (Kubernetes rollout, docker compose restart, Celery pool_restart ya da shutdown), sonra worker'ların geri geldiğini denetle (politika ve onay geçerli)",
  noTargets: (target: string) =>
    `${target} grubunun hiçbir worker'ı yanıt vermedi; yeniden başlatılacak bir şey yok`,

  preview: (target: string, type: string, actions: string[], check: string) =>
    `restart ${target} (${type}): ${actions.join('; ')}. ${check}`,
  rollout: (name: string, replicas: number | null) =>
    `${name} için rollout restart (${replicas === null ? '?' : `${replicas} replika`}): yeni pod'lar, stratejisinin izin verdiği ölçüde eskilerin yerini alır`,
  composeRestart: (command: string, running: number | null) =>
    `${command} (${running === null ? '?' : running} çalışan container)`,
  poolRestart: (workers: string[]) => `${list(workers)} için pool_restart (pool süreçleri yenilenir)`,
  shutdown: (workers: string[]) => `${list(workers)} için shutdown; supervisor'ları onları yeniden başlatır`,
  shutdownFallback: (workers: string[]) =>
    `${list(workers)} için shutdown (${POOL_RESTARTS_SETTING} olmadan başlatılmışlar); supervisor'ları onları yeniden başlatır`,
  checkSystem: (seconds: number) =>
    `Sonra sistemin şu an yanıt veren her worker'ının yeni bir süreç olarak yeniden yanıt vermesini en çok ${seconds} sn bekler.`,
  checkPool: (seconds: number) => `Sonra yeniden yanıt vermelerini en çok ${seconds} sn bekler.`,
  checkNames: (patterns: string[], seconds: number) =>
    `Sonra ${patterns.join(', ')} adlı worker'ların yeniden yanıt vermesini en çok ${seconds} sn bekler.`,
  checkNone: "Worker'ları sonrasında denetlenmez (workerNames: []).",

  rolloutDone: (name: string, available: number, desired: number) =>
    `${name} rollout'u tamam: ${desired} pod'un ${available} tanesi güncel ve hazır`,
  rolloutPending: (name: string, updated: number, available: number, desired: number, total: number) =>
    `${name} rollout'u tamamlanmadı: ${desired} pod'un ${updated} tanesi güncel, ${available} tanesi hazır, toplam ${total} pod`,
  composeDone: (service: string, before: number | null, after: number | null) =>
    `docker compose restart ${service}: ${before ?? '?'} → ${after ?? '?'} çalışan container`,
  workerAnswer: (worker: string, method: string, answer: string) =>
    `${worker}: ${method} (yanıtı “${answer}”)`,
  workerShutdown: (worker: string) => `${worker}: shutdown gönderildi`,
  poolRestartsOff: (worker: string) =>
    `${worker}: pool restart açık değil, yeniden başlatılmadı; worker'ı ${POOL_RESTARTS_SETTING} ile başlatın ya da gruba restart: shutdown yazın`,
  allBack: (n: number, seconds: number, back: string[]) =>
    `Hepsi ${seconds} sn içinde geri geldi (${n}/${n}): ${list(back)}.`,
  notAllBack: (back: number, of: number, seconds: number) =>
    `${seconds} sn sonunda hepsi geri gelmedi: ${of} worker'dan ${back} tanesi.`,
  backNames: (names: string[]) => `Geri gelen: ${list(names)}.`,
  freshNames: (names: string[]) => `Yeni: ${list(names)}.`,
  missingNames: (names: string[]) => `Geri gelmeyen: ${list(names)}.`,
  notRestartedNames: (names: string[]) => `Aynı süreç, yeniden başlamadı: ${list(names)}.`,
  noneBefore: "Yeniden başlatmadan önce grubun hiçbir worker'ı yanıt vermedi; beklenen olmadı.",
  noneNow:
    "Grubun hiçbir worker'ı şu an yanıt vermiyor: iş bekledikçe kuyrukları için no-workers alarmı çalar.",
  notChecked: "Worker'ları denetlenmedi (workerNames: []).",
};
