import type { Catalog } from '../catalog.js';

const comparators: Record<string, string> = { above: 'üstünde', below: 'altında' };

/**
 * Alarm gönderileri ile `alerts`, `ack`, `snooze` ve `monitor --once` metinleri.
 * Adlar (sistem, kuyruk, kural) mrkdwn için kaçışlanmış gelir.
 */
export const escalation: Catalog['escalation'] = {
  severity: { critical: 'KRİTİK', warning: 'UYARI', info: 'BİLGİ' },
  severityEmoji: {
    critical: ':red_circle:',
    warning: ':large_orange_circle:',
    info: ':large_blue_circle:',
  },
  header: (severity: string, rule: string, subject: string) => `${severity} · ${rule} · ${subject}`,
  resolvedHeader: (rule: string, subject: string) => `ÇÖZÜLDÜ · ${rule} · ${subject}`,
  metric: {
    waiting: 'bekleyen',
    active: 'aktif',
    delayed: 'gecikmeli',
    failed: 'başarısız',
    failedIncrease: 'yeni başarısızlar',
    oldestWaitingSeconds: 'en eski bekleyen',
    drainRate: 'boşalma hızı',
    minutesToDrain: 'boşalmaya kalan süre',
    workers: 'tüketiciler',
    throughput: 'biten',
    failedPerMinute: 'başarısız olan',
    waitP95Seconds: 'bekleme p95',
    runP95Seconds: 'çalışma p95',
    redisMemoryRatio: 'Redis kullanılan bellek / maxmemory',
    evictionPolicy: 'maxmemory-policy noeviction değil (1 = evet)',
    workerChurn: 'gelen ya da giden worker’lar',
    unreachableSamples: 'Redis’e ulaşılamıyor',
    persistenceFailing: 'Redis arka plan kaydı ya da AOF yazımı başarısız (1 = evet)',
    networkUnstableSamples: 'Redis bağlantısının kararsız olduğu örnekler',
  },
  valueUnits: {
    jobs: (v: string) => `${v} iş`,
    perMinute: (v: string) => `${v}/dk`,
    seconds: (v: string, human: string | null) => (human ? `${v} sn (${human})` : `${v} sn`),
    minutes: (v: string) => `${v} dk`,
    workers: (v: string) => `${v} worker`,
    samples: (v: string) => `${v} örnek`,
    changes: (v: string) => `${v} değişim`,
    percent: (v: string) => `%${v}`,
  },
  valueLine: (metric: string, value: string, comparator: 'above' | 'below', threshold: string) =>
    `*${metric}*: *${value}* (eşik ${threshold}, ${comparators[comparator] ?? comparator})`,
  trend: (sparkline: string) => `Eğilim \`${sparkline}\``,
  drain: (minutes: string) => `bu hızla boşalması ${minutes} dk sürer`,
  notDraining: 'bu hızla boşalmıyor',
  clearing: (n: number, of: number) => `eşiğin altına döndü: ${of} örneğin ${n} tanesi`,
  firingSince: (when: string, lasted: string) => `${when} itibarıyla aktif (${lasted})`,
  lasted: (lasted: string, worst: string) => `${lasted} sürdü; en kötü değer ${worst}.`,
  resolvedAt: (when: string) => `Çözüldü: ${when}`,
  alertId: (id: string) => `Alarm \`${id}\``,
  ackedBy: (who: string) => `:eyes: Üstlenen: ${who}`,
  snoozedBy: (who: string, until: string) => `:zzz: ${who} ${until} saatine kadar erteledi`,
  escalatedTo: (whom: string) => `Yükseltildi: ${whom}`,
  buttons: {
    ack: 'Üstlen',
    snooze30: '30 dk ertele',
    snooze2h: '2 sa ertele',
    dlq: 'DLQ’yu göster',
    scale: 'Ölçekle…',
    job: (id: string) => `İş ${id}`,
  },
  jobs: {
    title: {
      failed: 'En yeni başarısızlar',
      next: 'Sıradaki (en uzun bekleyen)',
      running: 'En uzun süredir çalışan',
    },
    line: (id: string, name: string, detail: string | undefined, command: string) =>
      `• \`${id}\` ${name}${detail ? ` · ${detail}` : ''} · ${command}`,
    running: (duration: string) => `${duration} süredir çalışıyor`,
    none: {
      failed: 'Kuyrukta şu an başarısız iş kalmadı.',
      next: 'Kuyrukta şu an bekleyen iş yok.',
      running: 'Bu kuyruğun şu an çalışan işi yok.',
    },
    unread:
      'İşleri şu an listelenemedi (sistem zamanında yanıt vermedi); sonra `DLQ’yu göster` ya da `/queue job`.',
  },
  /** Çağrı (`paging:`, `/queue page`): mesajlar, listeler ve çağrılar. Adlar kaçışlanmış gelir. */
  page: {
    usage: '/queue page <alarm-id> [çağrı-cihazı]',
    summary: 'nöbetçiyi beklemeden PagerDuty ya da JSM üzerinden hemen çağır',
    needsId: 'Hangi alarm? `/queue alerts` listesinden id’sini verin.',
    button: 'Çağır',
    done: (id: string, pagers: string) => `\`${id}\` alarmı için çağrı gönderildi: ${pagers}.`,
    already: (id: string, pagers: string) => `\`${id}\` alarmı için zaten çağrı var: ${pagers}.`,
    paged: (pager: string, at: string) => `:pager: ${at} tarihinde ${pager} çağrıldı`,
    ackedInPagerDuty: (name: string, at: string) => `${at} tarihinde PagerDuty’de ${name} üstlendi`,
    ackedBy: (who: string, at: string) => `${at} tarihinde ${who} üstlendi`,
    resolvedInPagerDuty: (name: string) =>
      `çağrıyı PagerDuty’de ${name} kapattı; alarm, izleyici durumun düzeldiğini görene kadar açık kalır`,
    refused: (reason: string) => `reddedildi (${reason})`,
    listPaged: (pagers: string) => ` · :pager: ${pagers}`,
    groupSummary: (n: number, where: string, first: string) => `${where} üzerinde ${n} alarm; ilki: ${first}`,
    linkText: 'Slack’teki alarm',
  },
  thread: {
    renotify: (value: string) => `:rotating_light: Hâlâ aktif ve kimse üstlenmedi (şu an ${value}).`,
    escalate: (whom: string, minutes: number) =>
      `:mega: ${whom}: ${minutes} dk geçti, kimse üstlenmedi. Lütfen bir bakın.`,
    snoozeOver: (value: string) => `:alarm_clock: Erteleme bitti; hâlâ aktif (şu an ${value}).`,
    reopened: (value: string) => `:repeat: Yeniden aktif (şu an ${value}).`,
    pageRefused: (pager: string, reason: string) =>
      `:warning: ${pager} çağrı cihazı çağrıyı reddetti (${reason}); yeniden denenmeyecek. Anahtarını denetleyip \`/queue page\` ile yeniden çağırın.`,
  },
  fallback: (severity: string, rule: string, subject: string, value: string) =>
    `${severity}: ${subject} üzerinde ${rule} = ${value}`,
  resolvedFallback: (rule: string, subject: string) => `Çözüldü: ${subject} üzerinde ${rule}`,
  cause: {
    lead: (id: string, title: string, queues: number) =>
      id === 'no-workers'
        ? queues > 1
          ? `${queues} kuyruğun tüketicisi yok`
          : 'Bir kuyruğun tüketicisi yok'
        : id === 'paused' && queues > 1
          ? `${queues} kuyruk duraklatılmış`
          : queues > 1
            ? `${title} (${queues} kuyruk)`
            : title,
    summary: (lead: string, evidence: string) => `${lead}: ${evidence}`,
    line: (summary: string) => `*Sebep:* ${summary}`,
    why: 'Neden?',
    noCause: 'sebep belirlenmedi',
  },
  group: {
    header: (severity: string, n: number, where: string) => `${severity} · ${n} alarm aktif · ${where}`,
    causeHeader: (summary: string) => summary,
    summaryCauses: (counts: string) => `*Sebebe göre*: ${counts}`,
    alertLine: (severity: string, rule: string, subject: string, value: string) =>
      `${severity} *${rule}* · ${subject}: ${value}`,
    resolvedLine: (rule: string, subject: string, lasted: string, worst: string) =>
      `:white_check_mark: ${rule} · ${subject} ${lasted} sonra çözüldü (en kötü ${worst})`,
    resolvedHeader: (n: number, where: string) => `ÇÖZÜLDÜ · ${n} alarm · ${where}`,
    silenced: (id: string) => `:no_bell: \`${id}\` ile susturuldu`,
    held: (n: number) => `:no_bell: ${n} alarm daha susturuldu ve listelenmiyor.`,
    summaryRules: (counts: string) => `*Kurala göre*: ${counts}`,
    summarySystems: (counts: string) => `*Sisteme göre*: ${counts}`,
    more: (n: number) => (n > 0 ? `…ve ${n} tane daha.` : ''),
    seeAlerts: '`/queue alerts` hepsini id’leri ve düğmeleriyle listeler.',
    ackAll: (system: string) => `\`/queue ack all ${system}\``,
    fallback: (severity: string, n: number, where: string) =>
      `${severity}: ${where} üzerinde ${n} alarm aktif`,
    resolvedFallback: (n: number, where: string) => `Çözüldü: ${where} üzerinde ${n} alarm`,
  },
  list: {
    title: 'Açık alarmlar',
    none: 'Açık alarm yok.',
    line: (
      id: string,
      severity: string,
      rule: string,
      subject: string,
      value: string,
      since: string,
      handled: string | null,
    ) =>
      `\`${id}\` ${severity} *${rule}* · ${subject}: ${value} · başlangıç ${since}${handled ? ` · ${handled}` : ''}`,
    acked: (who: string) => `${who} üstlendi`,
    snoozed: (until: string, who: string | null) =>
      `${until} saatine kadar ertelendi${who ? ` (${who})` : ''}`,
    silenced: (id: string, pattern: string | null) => `${id} ile susturuldu${pattern ? ` (${pattern})` : ''}`,
    more: (n: number, unhandled: number) =>
      `${n} alarm daha gösterilmedi${unhandled > 0 ? ` (${unhandled} tanesi ele alınmadı)` : ''}: hepsini komut satırında \`alerts --json\` listeler; bir sistemin hepsini \`/queue ack all <sistem>\` üstlenir.`,
    unhandledCount: (n: number, of: number) =>
      `${of} alarmın ${n} tanesi ele alınmadı (üstlenilmedi, ertelenmedi, susturulmadı)`,
  },
  ack: {
    usage: '/queue ack <alarm-id> | ack all <sistem>',
    summary: 'bir alarmı üstlen: hatırlatmaları ve yükseltme durur',
    done: (id: string, who: string) => `\`${id}\` alarmını ${who} üstlendi.`,
    already: (id: string) => `\`${id}\` alarmı zaten üstlenilmiş.`,
  },
  snooze: {
    usage: '/queue snooze <alarm-id> <süre>',
    summary: 'bir alarmın hatırlatmalarını bir süreliğine sustur (ör. 30m, 2h)',
    done: (id: string, until: string) => `\`${id}\` alarmı ${until} saatine kadar ertelendi.`,
    badDuration: (value: string) => `\`${value}\` bir süre değil.`,
    tooLong: (value: string) => `\`${value}\` en fazla 7d olan sınırdan uzun.`,
    validDuration: '30m, 2h ya da 1d gibi bir süre (en fazla 7d)',
    needsDuration: 'Ne kadar süre olacağını yazın, ör. 30m, 2h ya da 1d (en fazla 7d).',
  },
  silence: {
    usage: '/queue silence <desen> <süre> [--force] [gerekçe]',
    summary:
      'eşleşen alarmları bir süreliğine sustur: `sistem`, `sistem/kuyruk-*` ya da `kural@sistem/kuyruk`',
    done: (id: string, pattern: string, until: string, n: number) =>
      `\`${pattern}\` için \`${id}\` susturması ${until} saatine kadar; şu an ${n} açık alarm susturuldu.`,
    needsPattern: 'Neyin ve ne kadar süre susturulacağını yazın.',
    badPattern: (value: string) => `\`${value}\` bir susturma deseni değil.`,
    validPattern:
      '`sistem`, joker olarak `*` ile `sistem/kuyruk`, isteğe bağlı olarak önünde `kural@` (ör. `pushizo/dispatch-*`)',
    unknownRule: (rule: string) => `\`${rule}\` diye bir kural yok.`,
    noQueueMatches: (pattern: string, system: string | undefined, likely: string | undefined) =>
      `\`${pattern}\` ${system ? `\`${system}\` sisteminin ` : ''}hiçbir kuyruğuyla eşleşmiyor, yani hiçbir şeyi susturmaz.${likely ? ` \`${likely}\` mi demek istediniz?` : ''}`,
    forceHint:
      'bir kuyrukla eşleşen bir desen; henüz var olmayan bir kuyruğu susturmak için süreden sonra `--force` ekleyin',
    line: (id: string, pattern: string, until: string, who: string, reason: string | undefined) =>
      `\`${id}\` \`${pattern}\` ${until} saatine kadar, ${who}${reason ? ` · ${reason}` : ''}`,
    onMessage: (id: string, pattern: string, until: string, reason: string | undefined) =>
      `:no_bell: \`${id}\` (\`${pattern}\`) ile ${until} saatine kadar susturuldu${reason ? `: ${reason}` : ''}`,
  },
  silences: {
    usage: '/queue silences',
    summary: 'geçerli susturmalar',
    title: 'Geçerli susturmalar',
    none: 'Geçerli susturma yok.',
  },
  unsilence: {
    usage: '/queue unsilence <susturma-id>',
    summary: 'bir susturmayı kaldır',
    done: (id: string, pattern: string) =>
      `\`${pattern}\` için \`${id}\` susturması kaldırıldı; eşleşen alarmlar yeniden bildirim gönderir.`,
    already: (id: string) => `\`${id}\` susturması zaten kaldırılmış ya da süresi dolmuş.`,
    needsId: 'Susturma id’sini yazın, ör. `s-1a2b3c4d`.',
  },
  ackAll: {
    usage: '/queue ack all <sistem>',
    needsSystem: 'Açık alarmları üstlenilecek sistemi yazın.',
    done: (n: number, system: string, who: string) =>
      `\`${system}\` sisteminin ${n} açık alarmını ${who} üstlendi.`,
    none: (system: string) => `\`${system}\` sisteminde üstlenilmemiş açık alarm yok.`,
  },
  alerts: { usage: '/queue alerts', summary: 'açık alarmlar, en yenisi sonda' },
  keptChanging: 'alarm bu komut sırasında değişip durdu; yeniden deneyin',
  needsId: 'Alarm id’sini yazın, ör. `a-7f3k9q2b`.',
  unknownAlert: (id: string) => `\`${id}\` diye bir alarm yok.`,
  validAlert: '`/queue alerts` listesinden bir id',
  notFiring: (id: string) => `\`${id}\` alarmı çözüldü; üstlenilecek ya da ertelenecek bir şey yok.`,
  needsStore: 'depo olmadan alarmları takip etmek',
  monitor: {
    usage: 'queue-ops monitor --once',
    onceOnly:
      'Komut satırı tek bir tur çalıştırır: `queue-ops monitor --once`. Bot, monitörü kendisi çalıştırır.',
    notLeader: (owner: string, until: string) =>
      `Başka bir monitör (${owner}) ${until} saatine kadar kirayı tutuyor; bu çalıştırma hiçbir şey örneklemedi.`,
    summary: (systems: number, queues: number, down: number) =>
      `${systems} sistem, ${queues} kuyruk örneklendi` +
      (down > 0 ? ` (${down} tanesine ulaşılamadı)` : '') +
      '.',
    firing: (n: number) => (n === 0 ? 'Aktif alarm yok.' : `${n} alarm aktif:`),
    opened: (n: number) => `bu turda ${n} açıldı`,
    resolved: (n: number) => `bu turda ${n} çözüldü`,
    outbox: (sent: number, pending: number) =>
      `Slack: ${sent} mesaj iletildi, ${pending} mesaj giden kutusunda bekliyor.`,
    noToken: 'SLACK_BOT_TOKEN ayarlı değil: mesajlar giden kutusunda bekliyor.',
    noChannel: 'slack.incidentChannel ayarlı değil: alarmlar takip ediliyor ama gönderilmiyor.',
  },
};
