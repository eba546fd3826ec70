import type { Catalog } from '../catalog.js';

/**
 * `timeline`: postmortem için olay zaman çizelgesi. Gelen değerler kullanıcıdan, Redis'ten ya da
 * depodan gelir: builder'lar kaçışlar (Slack'te mrkdwn, komut satırında Markdown tablo hücresi).
 */
export const timeline: Catalog['timeline'] = {
  describe: {
    usage: 'timeline [--since 2h|ISO] [--until 30m|ISO] [sistem]',
    summary: 'kim neyi gördü, ne yaptı, sırasıyla: alarmlar, bakışlar, istekler, onaylar, sonuçlar',
  },
  title: (since: string, until: string, system?: string) =>
    `Olay zaman çizelgesi ${since} – ${until}${system ? ` (${system})` : ''}`,
  empty: 'Bu aralıkta hiçbir şey kaydedilmedi: alarm, bakış, istek ya da eylem yok.',
  columns: { time: 'Zaman (UTC)', who: 'Kim', what: 'Ne' },
  monitor: 'monitör',
  events: {
    alertFired: (rule: string, subject: string, severity: string, threshold: string) =>
      `${subject} üzerinde ${rule} alarmı tetiklendi (${severity}, eşik ${threshold})`,
    alertResolved: (rule: string, subject: string) => `${subject} üzerinde ${rule} alarmı çözüldü`,
    alertPaged: (rule: string, subject: string, pager: string, ackedBy?: string) =>
      `${subject} üzerindeki ${rule} alarmı için ${pager} çağrıldı${ackedBy ? `; üstlenen: ${ackedBy}` : ''}`,
    inPagerDuty: (name: string) => `PagerDuty’de ${name}`,
    looked: (verb: string, target?: string) => `${verb}${target ? ` ${target}` : ''} görüntüledi`,
    lookFailed: (verb: string, target: string | undefined, why: string) =>
      `${verb}${target ? ` ${target}` : ''} istedi, başarısız oldu: ${why}`,
    alertHandled: (verb: string, target?: string, count?: number) =>
      verb === 'ack all'
        ? `${target ?? '?'} sisteminin ${count === undefined ? '' : `${count} `}açık alarmı onaylandı`
        : verb === 'silence'
          ? `${target ?? '?'} susturuldu${count === undefined ? '' : ` (${count} açık alarm susturuldu)`}`
          : verb === 'unsilence'
            ? `${target ?? '?'} susturması kaldırıldı`
            : `alarm ${verb}${target ? ` ${target}` : ''}`,
    requested: (action: string, target: string, id: string) => `${action} ${target} istedi (${id})`,
    approved: (action: string, target: string, id: string) => `${action} ${target} onayladı (${id})`,
    approvalRefused: (id: string, why: string) => `${id} onayı reddedildi: ${why}`,
    denied: (action: string, target: string, id: string, reason?: string) =>
      `${action} ${target} reddetti (${id})${reason ? `: ${reason}` : ''}`,
    expired: (id: string) => `${id} isteğinin süresi onaylanmadan doldu`,
    interrupted: (id: string) => `${id} isteği yarıda kaldı (botu durdu)`,
    actionDone: (action: string, target: string, outcome: string) =>
      `${action} ${target} tamamlandı${outcome ? `: ${outcome}` : ''}`,
    actionFailed: (action: string, target: string, error: string) =>
      `${action} ${target} başarısız: ${error}`,
    result: {
      purged: (n: string) => `${n} iş silindi`,
      archived: (n: string) => `${n} iş arşivlendi`,
      restored: (n: string) => `${n} iş geri yüklendi`,
      retried: (n: string) => `${n} iş yeniden denendi`,
      purgeId: (id: string) => `geri almak için ${id}`,
      archivePath: (path: string) => `arşiv ${path}`,
      skipped: (n: string) => `artık başarısız olmayan ${n} iş atlandı`,
      newSincePreview: (n: string) => `önizlemeden sonra gelen ${n} bırakıldı`,
      undone: (restored: string, alreadyThere: string, purgeId: string) =>
        `${purgeId} silmesinden ${restored} iş geri yüklendi${alreadyThere === '0' ? '' : ` (${alreadyThere} iş zaten oradaydı)`}`,
      undoWith: (purgeId: string) => `geri almak için: /queue undo ${purgeId}`,
      expired: (expired: string, ttl: string, results: string) =>
        `${results} sonuçtan ${expired} tanesine ${ttl} TTL verildi`,
    },
    outcome: {
      paused: (workers?: string) => `duraklatıldı${workers ? `, ${workers} worker yanıt verdi` : ''}`,
      resumed: (workers?: string) => `devam ettirildi${workers ? `, ${workers} worker yanıt verdi` : ''}`,
      scaled: (replicas: string, changes: string) =>
        `ölçek ${replicas} oldu${changes ? ` (${changes})` : ''}`,
      change: (name: string, before: string, after: string) => `${name} ${before} → ${after}`,
      autoscaler: (kind: string, name: string, min: string, max: string) =>
        `${kind} ${name} artık en az ${min}, en çok ${max}`,
      revoked: (count: string, terminate: boolean, signal: string) =>
        `${count} görev iptal edildi${terminate ? `, SIG${signal} ile sonlandırıldı` : ''}`,
      answered: (n: string) => `${n} worker yanıt verdi`,
      stillRunning: (ids: string) => `hâlâ çalışıyor: ${ids}`,
      failedJob: (id: string, before: string) => `${id} işi ${before} durumundan başarısıza taşındı`,
      lockWasHeld: 'kilidi hâlâ canlı bir worker’daydı',
      restarted: (back: string, of: string, complete: boolean) =>
        complete
          ? `yeniden başlatıldı, ${of} worker'dan ${back} tanesi geri geldi`
          : `yeniden başlatıldı, ${of} worker'dan yalnız ${back} tanesi geri geldi`,
      restartedUnchecked: 'yeniden başlatıldı',
    },
    reasons: {
      'self-approval': 'isteği yapan kendi isteğini onaylayamaz',
      expired: 'isteğin süresi dolmuştu',
      Forbidden: 'rol yetmiyordu',
      WrongChannel: 'izin verilen bir kanal değil',
      TwoFactorRequired: 'iki adımlı doğrulama teyit edilmedi',
      RateLimited: 'bir dakikada çok fazla komut',
      AlreadyApproved: 'zaten onaylamıştı',
      RequestNotPending: 'istek artık beklemiyordu',
      RequestExpired: 'isteğin süresi dolmuştu',
      SelfApproval: 'isteği yapan kendi isteğini onaylayamaz',
      IdentityNotBound: 'cli.users içinde bağlı olmayan bir komut satırı kimliği',
      NotChannelMember: 'isteğin özel kanalının üyesi değil',
      NoWorkersAnswered: 'hiçbir worker yanıt vermedi',
      RedisUnavailable: 'Redis yanıt vermedi',
      RedisForbidden: 'Redis kullanıcıyı reddetti (ACL)',
      ScaleFailed: 'ölçekleme başarısız oldu',
      KubernetesForbidden: 'Kubernetes service account’u reddetti',
      KubernetesNotFound: 'Kubernetes’te böyle bir deployment yok',
      UndoConflict: 'aynı kimliklerle işler yeniden var',
      ArchiveInvalid: 'arşiv manifest ile uyuşmadı',
      RetryInterrupted: 'Redis yeniden deneme sırasında yanıt vermeyi bıraktı',
      PurgeInterrupted: 'Redis yanıt vermeyi bıraktı; temizleme Redis dönünce sürer',
      UndoInterrupted: 'Redis yanıt vermeyi bıraktı; geri alma Redis dönünce sürer',
      UndoTakenOver: 'geri almayı başka bir çalışma devraldı',
      Internal: 'beklenmeyen bir hata',
      UnknownSystem: 'böyle bir sistem yok',
      UnknownQueue: 'böyle bir kuyruk yok',
      UnknownVerb: 'böyle bir komut yok',
      BadArgument: 'bir argüman geçerli değildi',
      UsageError: 'komut eksikti',
      NotSupported: 'sistem bunu yapamıyor',
      UnknownRequest: 'böyle bir istek yok',
      UnknownAlert: 'böyle bir alarm yok',
      StoreUnavailable: 'botun deposu yanıt vermedi',
    },
    guardDenied: (command: string, target?: string, why?: string) =>
      `${command}${target ? ` ${target}` : ''} reddedildi: ${why ?? 'korumalar tarafından'}`,
  },
  verification: {
    ok: (count: number, first?: number, last?: number) =>
      `Denetim zinciri doğrulandı: ${count} kayıt, kopukluk yok${first !== undefined ? `; bu aralığın #${first}–#${last} kayıtları dahil` : ''}.`,
    brokenAfter: (seq: number, reason: string, last?: number) =>
      `Denetim zinciri bu aralıktan sonra #${seq} numaralı kayıtta kopuk (${reason})${last !== undefined ? ` (aralığın son kaydı #${last})` : ''}: gösterilen kayıtlar doğrulandı.`,
    broken: (seq: number, reason: string) =>
      `Denetim zinciri #${seq} numaralı kayıtta KOPUK (${reason}): #${seq} ve sonrasındaki kayıtlara, bu aralıktakiler dahil, güvenilemez.`,
  },
  truncated: (shown: number, total: number) =>
    `${total} olayın yalnızca ilk ${shown} tanesi buraya sığdı; çizelgenin tamamı queue-ops ile özel mesajlarınızda, yalnızca sizin görebileceğiniz bir Markdown dosyası olarak.`,
  fileTitle: 'Olay zaman çizelgesi (Markdown, postmortem için)',
  restCli: (since: string, until: string, system?: string) =>
    `Çizelgenin tamamı: \`queue-ops timeline --since ${since} --until ${until}${system ? ` ${system}` : ''}\``,
  capped: (limit: number) =>
    `Bu aralıkta ${limit} denetim kaydından fazlası var; --since/--until ile daraltın.`,
  badTime: (flag: string, value: string) => `${flag} ${value} bir zaman değil.`,
  timeValid:
    '`2h`, `30m`, `1d` gibi geriye dönük bir süre ya da `2024-05-01T10:00:00Z` gibi bir ISO 8601 zamanı',
  badOrder: (since: string, until: string) => `--since ${since}, --until ${until} zamanından önce değil`,
  orderValid: '--until’den önce bir --since',
  needsValue: (flag: string) => `${flag} bir değer ister`,
  unknownFlag: (flag: string) => `bilinmeyen seçenek ${flag}`,
  flagsValid: '--since, --until ve en fazla bir sistem adı',
};
