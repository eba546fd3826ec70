import type { Catalog } from '../catalog.js';

/**
 * Worker grupları metinleri: `workers` içinde worker grupları, `scale`, `stuck`, `revoke` ve `fail`.
 * Önizlemeler ve sonuçlar düz metindir; `stuck` ve grup satırları mrkdwn'dır, güvenilmeyen
 * parçalarını çağıran kaçışlar.
 */
const count = (n: number | null) => (n === null ? '?' : String(n));

export const scale: Catalog['scale'] = {
  usage: {
    scale: '/queue scale <sistem>/<grup> <replika>',
    stuck: '/queue stuck <sistem> [dakika]',
    revoke: '/queue revoke <sistem> <görev-id…> [--terminate] [--signal TERM|KILL]',
    fail: '/queue fail <sistem>/<kuyruk> <iş-id> [gerekçe…]',
  },
  summary: {
    scale:
      'bir worker grubunun replika, container ya da pool süreci sayısını değiştir (politika ve onay geçerli)',
    stuck: 'N dakikadan uzun süredir çalışan işler (varsayılan 30; 0: çalışan her şey), en uzunu başta',
    revoke: 'Celery görevlerini iptal et (revoke), --terminate ile çalışanları da öldür',
    fail: 'aktif ya da takılı (stalled) bir BullMQ işini başarısıza taşı',
  },

  needsGroup: 'Grubu system/group olarak yazın.',
  needsReplicas: 'Kaç replika olacağını yazın.',
  unknownGroup: (system: string, group: string) =>
    `\`${system}\` sisteminde \`${group}\` adında bir worker grubu yok.`,
  noGroups: (system: string) => `\`${system}\` için config’te worker grubu yok (\`workers:\`).`,
  groupsValid: (groups: string[]) => groups.map((g) => `\`${g}\``).join(', '),
  notAnInteger: (value: string) => `\`${value}\` tam sayı bir replika sayısı değil.`,
  outOfBounds: (value: number, group: string) => `${value}, \`${group}\` sınırlarının dışında.`,
  boundsValid: (min: number, max: number) => `${min}..${max}`,
  alreadyAt: (target: string, replicas: number) => `${target} zaten ${replicas}`,
  noTargets: (target: string) => `${target} worker’larından hiçbiri yanıt vermedi, ölçeklenecek bir şey yok`,
  minutesInvalid: (value: string) => `\`${value}\` bir dakika sayısı değil.`,
  minutesValid: '0 (çalışan her şey) ile 10080 arasında bir tam sayı',
  notATaskId: (id: string) => `\`${id}\` bir görev kimliği değil.`,
  needsTaskIds: 'En az bir görev id’si yazın.',
  signalInvalid: (value: string) => `\`${value}\` revoke’un gönderebileceği bir sinyal değil.`,
  signalValid: 'TERM ya da KILL',
  signalNeedsTerminate: '`--signal` yalnızca `--terminate` ile bir anlam taşır.',
  unknownFlag: (flag: string) => `\`${flag}\` bu komutun bir seçeneği değil.`,
  needsJob: 'Kuyruğu system/queue olarak ve iş id’sini yazın.',

  typeLabel: { kubernetes: 'Kubernetes', compose: 'Compose', 'celery-pool': 'Celery pool' },
  previewScale: (target: string, type: string, changes: string[], note?: string) =>
    `scale ${target} (${type}): ${changes.join('; ')}${note ? `. ${note}` : ''}.`,
  change: (name: string, before: number | null, after: number | null, unit: string) =>
    `${name} ${count(before)} → ${count(after)} ${unit}`,
  units: { kubernetes: 'replika', compose: 'çalışan container', 'celery-pool': 'süreç' },
  autoscaleChange: (
    name: string,
    before: { min: number; max: number },
    after: { min: number; max: number },
  ) => `${name} autoscale ${before.min}..${before.max} → ${after.min}..${after.max}`,
  autoscalerNote: (
    kind: string,
    name: string,
    before: { min: number; max: number },
    after: { min: number; max: number },
  ) =>
    `replika sayısı ${kind} ${name} elinde ve onu hemen ezerdi; bu yüzden onun yerine minimumu ` +
    `${before.min} → ${after.min}` +
    (after.max !== before.max ? `, maksimumu ${before.max} → ${after.max}` : '') +
    ' olur',
  previewRevoke: (system: string, tasks: string[], terminate: boolean, signal: string) =>
    `revoke (${system}): ${tasks.join('; ')}` +
    (terminate
      ? `; çalışanlar SIG${signal} ile öldürülür`
      : '; çalışanlar tamamlanır, kuyrukta bekleyenler atlanır') +
    '.',
  taskRunsOn: (id: string, name: string, worker: string, runtime: string) =>
    `${id} (${name}) ${worker} üzerinde ${runtime} süredir çalışıyor`,
  taskHeldBy: (id: string, worker: string, state: string) =>
    `${id} ${worker} üzerinde ${state} durumunda (sırası geldiğinde atlanır)`,
  taskQueued: (id: string, queue: string) => `${id} ${queue} kuyruğunda bekliyor (worker onu atlar)`,
  taskDelivered: (id: string) => `${id} bir worker’a teslim edildi, henüz onaylanmadı (atlanır)`,
  taskFinished: (id: string, state: string) => `${id} zaten bitti (${state}): durdurulacak bir şey yok`,
  taskUnknown: (id: string) =>
    `${id} hiçbir worker, kuyruk ya da sonuç tarafından tanınmıyor (yazım hatası mı?)`,
  taskNotRunning: (id: string) => `${id} şu an çalışmıyor (bir worker onu alırsa atlanır)`,
  previewFail: (target: string, id: string, name: string, state: string, reason: string) =>
    `${target} kuyruğundaki ${id} (${name}) işi başarısıza taşınacak (şu an ${state}), gerekçe “${reason}”`,
  lockHeld: (worker: string | undefined, seconds: number) =>
    `${worker ? `worker ${worker}` : 'canlı bir worker'} kilidi hâlâ tutuyor (${seconds} sn kaldı): kilit ondan alınır ` +
    've o worker’ın bu iş için kendi sonucu reddedilir',
  lockExpired: (worker: string | undefined) =>
    `kilidin süresi doldu, yani ${worker ? `worker ${worker}` : 'hiçbir worker'} artık onu tutmuyor (stalled)`,
  defaultReason: (who: string) => `${who} tarafından queue-ops ile başarısız yapıldı`,

  resultScale: (changes: string[], note?: string) => `${changes.join('; ')}${note ? `. ${note}` : ''}.`,
  answered: (answer: string) => `(yanıt: “${answer}”)`,
  resultAutoscaler: (kind: string, name: string, after: { min: number; max: number }) =>
    `${kind} ${name} artık ${after.min}..${after.max} replika tutuyor`,
  resultRevoke: (answers: string[], stillRunning: string[]) =>
    `yanıt veren worker’lar: ${answers.length > 0 ? answers.join('; ') : 'yok'}` +
    (stillRunning.length > 0 ? `. Hâlâ çalışan: ${stillRunning.join(', ')}` : '') +
    '.',
  resultFail: (id: string, state: string, lockWasHeld: boolean) =>
    `${id} işi artık ${state}${lockWasHeld ? '; bir worker’ın hâlâ tuttuğu kilit ondan alındı' : ''}.`,

  groupsTitle: 'Worker grupları',
  groupLine: (name: string, type: string, detail: string, min: number, max: number) =>
    `:gear: *${name}* · ${type} · ${detail} · sınırlar ${min}..${max}`,
  kubeDetail: (target: string, desired: number | null, current: number | null, ready: number | null) =>
    `\`${target}\` istenen ${count(desired)}, hazır ${ready === null ? '? (deployments için get izni gerekir)' : ready}, mevcut ${count(current)}`,
  composeDetail: (service: string, running: number | null) => `\`${service}\` ${count(running)} çalışıyor`,
  poolDetail: (workers: string[]) =>
    workers.length > 0 ? workers.join(', ') : 'hiçbir worker yanıt vermedi',
  poolWorker: (worker: string, processes: number | null, auto?: { min: number; max: number }) =>
    `\`${worker}\` ${processes ?? 0} süreç${auto ? ` (autoscale ${auto.min}..${auto.max})` : ''}`,
  ownedBy: (kind: string, name: string, min: number, max: number) =>
    ` · sahibi ${kind} \`${name}\` (${min}..${max})`,
  groupError: (name: string, type: string, error: string) => `:x: *${name}* · ${type}: ${error}`,

  stuckTitle: (system: string, minutes: number) =>
    minutes === 0
      ? `${system} üzerinde çalışanlar`
      : `${system} üzerinde ${minutes} dakikadan uzun süredir çalışanlar`,
  stuckNone: (minutes: number) =>
    minutes === 0 ? 'Çalışan bir şey yok.' : `${minutes} dakikadan uzun süredir çalışan bir şey yok.`,
  stuckLine: (id: string, name: string, where: string, runtime: string | null, stalled: boolean) =>
    `• \`${id}\` ${name} · ${where}${runtime ? ` · ${runtime}` : ''}${stalled ? ' · :warning: kilidin süresi doldu (stalled)' : ''}`,
  stuckWhere: (queue: string | undefined, worker: string | undefined) =>
    [queue ? `kuyruk ${queue}` : undefined, worker ? `worker ${worker}` : 'worker bilinmiyor']
      .filter(Boolean)
      .join(', '),
  stuckMore: (n: number) => `… ve ${n} tane daha.`,
  stuckHint: (system: string, type: string) =>
    type === 'celery'
      ? `Birine bakmak için \`/queue job ${system} <görev-id>\`, durdurmak için \`/queue revoke ${system} <görev-id> --terminate\`. Argümanlar asla gösterilmez.`
      : `Birine bakmak için \`/queue job ${system}/<kuyruk> <iş-id>\`, başarısıza taşımak için \`/queue fail ${system}/<kuyruk> <iş-id>\`. İş verisi asla gösterilmez.`,
  stuckFallback: (system: string, n: number) => `${system} üzerinde ${n} takılı iş.`,
  failures: {
    noKubeCredentials:
      'Kubernetes kimlik bilgisi yok: KUBECONFIG ayarlayın ya da botu küme içinde bir service account ile çalıştırın',
    kubeconfigUnreadable: (reason: string) => `kubeconfig okunamadı (${reason})`,
    notStarted: (command: string, reason: string) => `${command} başlatılamadı (${reason})`,
    timedOut: (what: string) => `${what} zamanında bitmedi`,
    exited: (what: string, code: string) => `${what} ${code} koduyla çıktı`,
    notJson: (what: string) => `${what} JSON olmayan bir çıktı verdi`,
    noWorkerAnswered: 'kuyruklarını tüketen hiçbir worker yanıt vermedi',
  },
};
