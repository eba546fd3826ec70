import { type ErrorCode, type ErrorParams, type OpsError, visibleParams } from '../../errors.js';
import type { Catalog } from '../catalog.js';

const list = (value: unknown): string =>
  Array.isArray(value) && value.length > 0 ? value.map((v) => `\`${v}\``).join(', ') : 'yok';
/** Bir sistemin yapamadığı şey, komutların verdiği anahtarla; başka her şey zaten katalogdan bir cümledir. */
/** Bir cümle gibi biten mesaj, arkasına bir sonraki cümle gelmeden önce. */
const sentence = (text: unknown): string => {
  const s = String(text);
  return /[.!?:…]$/.test(s) ? s : `${s}.`;
};
const abilities: Record<string, string> = {
  purge: 'temizleme (purge)',
  retry: 'yeniden deneme',
  revoke: 'görev iptali (revoke)',
  fail: 'bir işi başarısıza taşıma',
  resizePool: 'worker havuzunu boyutlandırma',
  listWorkers: 'worker listeleme',
  listRunning: 'çalışan işleri listeleme',
  redisHealth: 'Redis’ini gösterme',
  job: 'tek bir işe bakma',
  results: 'Celery sonuçları tutma (yalnızca Celery sistemlerinin sonuç deposu vardır)',
  'expire-results': 'Celery sonuçlarına süre verme (yalnızca Celery sistemlerinin sonuç deposu vardır)',
  'rate-limit': 'hız sınırı koyma',
  concurrency: 'kuyruk başına genel eşzamanlılık koyma',
  revokeUseFail:
    'görev iptali (revoke); `/queue fail <sistem>/<kuyruk> <iş-id>` etkin bir işi başarısıza taşır',
  failUseRevoke: 'bir işi başarısıza taşıma; `/queue revoke <sistem> <görev-id>` bir görevi durdurur',
  purgePart:
    'bir durumun bir kısmını temizleme (--error, --name, --older-than, --newer-than, --keep): temizlemesi durumların tamamını alır; `retry … all` bu süzgeçleri alır',
};
/** Bir sınırın `NotSupported`'ı (`limit.<tür>.<neden>`): hangi BullMQ, hangi sürümden beri var. */
const limitRefused = (p: ErrorParams): string => {
  const [, kind, reason] = String(p.what).split('.');
  if (reason === 'celery')
    return `\`${p.system}\` (celery) kuyruk başına genel eşzamanlılık sınırı tanımaz. Geçerli: havuz için \`/queue scale <system>/<group> <n>\`, ya da \`/queue rate-limit ${p.system} <task> <rate>\`.`;
  const what = `\`${p.queue}\` için ${kind === 'concurrency' ? 'genel eşzamanlılık sınırı' : 'genel hız sınırı'}`;
  const since = `BullMQ worker'ları bunu ${p.since} sürümünden beri uygular`;
  if (reason === 'tooOld')
    return `\`${p.system}\` (bullmq) ${what} koyamaz: meta'sını \`${p.version}\` yazmış; ${since}.`;
  if (reason === 'otherLibrary')
    return `\`${p.system}\` (bullmq) ${what} koyamaz: meta'sını BullMQ değil \`${p.version}\` yazmış; ${since}.`;
  return `\`${p.system}\` (bullmq) ${what} koyamaz: meta'sında BullMQ sürümü yok (5.20.0'dan beri yazılır), worker'ların uygulayıp uygulamayacağı bilinmiyor; ${since}.`;
};
const ability = (what: unknown): string => abilities[String(what)] ?? String(what);
const hint = (suggestion: unknown): string =>
  typeof suggestion === 'string' && suggestion ? ` \`${suggestion}\` mi demek istediniz?` : '';

/** States and request statuses arrive as English words (`paused`, `denied`, `at 4`). */
const states: Record<string, string> = {
  paused: 'duraklatılmış',
  running: 'çalışıyor',
  pending: 'onay bekliyor',
  approved: 'onaylandı',
  executing: 'çalışıyor',
  done: 'tamamlandı',
  failed: 'başarısız',
  denied: 'reddedildi',
  expired: 'süresi doldu',
  interrupted: 'yarıda kaldı',
};
const state = (value: unknown): string => {
  const text = String(value);
  const at = /^at (\d+)$/.exec(text);
  return at ? `${at[1]} durumunda` : (states[text] ?? text);
};

/**
 * Her hata kodu için bir satır (Record<ErrorCode, …>: yeni bir kod eklenince tsc burada durur).
 * Parametreler kullanıcıdan ya da Redis'ten gelir: çağıran, satırın tamamını mrkdwn için kaçışlar.
 */
/** Bir geri almanın durmadan önce geri koyduğu, ya da hiçbir şey. */
const restoredSoFar = (before: unknown) =>
  Number(before) > 0
    ? `durmadan önce geri konan ${Number(before).toLocaleString('tr-TR')} iş yerinde kalıyor, kalanlar hâlâ arşivde`
    : 'hiçbir şey geri yüklenmedi';

const lines: Record<ErrorCode, (p: ErrorParams) => string> = {
  UsageError: (p) => `${p.message ?? 'Komut eksik.'} Kullanım: \`${p.usage ?? '/queue help'}\``,
  UnknownVerb: (p) =>
    `\`${p.verb}\` bir /queue komutu değil.${hint(p.suggestion)} Geçerli komutlar: ${list(p.valid)}.`,
  UnknownSystem: (p) =>
    `\`${p.system}\` adında bir sistem yok.${hint(p.suggestion)} Sistemler: ${list(p.valid)}.`,
  UnknownQueue: (p) =>
    `\`${p.system}\` sisteminde \`${p.queue}\` adında bir kuyruk yok.${hint(p.suggestion)} Kuyruklar: ${list(p.valid)}.`,
  BadArgument: (p) =>
    `${sentence(p.message ?? `\`${p.value}\` burada geçerli değil.`)}${p.valid ? ` Geçerli: ${p.valid}.` : ''}`,
  RedisUnavailable: (p) => `\`${p.system}\` için Redis yanıt vermiyor (${p.reason ?? 'yanıt yok'}).`,
  NotSupported: (p) =>
    String(p.what).startsWith('limit.')
      ? limitRefused(p)
      : `\`${p.system}\` (${p.type}) bunu yapamaz: ${ability(p.what)}.`,
  NoWorkersAnswered: (p) =>
    p.action === 'rate-limit'
      ? `\`${p.system}\` worker’larından \`${p.queue}\` görevini tanıyan hiçbiri değişikliği almadı; hız sınırı olduğu gibi kaldı. \`/queue workers ${p.system}\` ile kontrol edin.`
      : `\`${p.system}\` worker’larından hiçbiri ${p.timeoutMs} ms içinde yanıt vermedi, bu yüzden \`${p.queue}\` ${p.action === 'resume' ? 'devam ettirilmedi' : 'duraklatılmadı'}. \`/queue workers ${p.system}\` ile kontrol edin.`,
  Forbidden: (p) => `\`${p.action}\` için \`${p.role}\` rolü gerekiyor.`,
  WrongChannel: (p) =>
    Array.isArray(p.channels) && p.channels.length > 0
      ? `\`${p.action}\` yalnızca şu kanallarda çalışır: ${list(p.channels)}; salt okunur komutlar her yerde çalışır.`
      : `\`${p.action}\` henüz hiçbir kanalda çalışmaz; salt okunur komutlar her yerde çalışır.`,
  TwoFactorRequired: () =>
    'Bu işlem iki adımlı doğrulama ister ve Slack hesabınızda açık olduğunu doğrulamadı.',
  UnknownRequest: (p) => `${p.channel ? 'Bu kanalda ' : ''}\`${p.id}\` diye bir istek yok.`,
  RequestNotPending: (p) => `\`${p.id}\` isteği zaten ${state(p.status)}; hiçbir şey değişmedi.`,
  DuplicateRequest: (p) =>
    `\`${p.target}\` için aynı ${p.action} isteği \`${p.id}\` olarak zaten onay bekliyor: onu onaylayın ya da reddedin; ikinci bir istek açılmadı.`,
  RequestExpired: (p) =>
    `\`${p.id}\` isteğinin süresi ${p.expired ?? p.expiresAt} itibarıyla doldu; hâlâ gerekiyorsa yeniden isteyin.`,
  SelfApproval: (p) => `\`${p.id}\` isteğini kendiniz açtınız; onayı başka biri vermeli.`,
  IdentityNotBound: (p) =>
    p.kind === 'mismatch'
      ? `\`${p.osUser}\` işletim sistemi kullanıcısı \`cli.users\` içinde ${list(p.bound)} kimliğine bağlı, bu yüzden \`${p.user}\` olarak davranamaz; hiçbir şey yapılmadı.`
      : p.kind === 'taken'
        ? `\`${p.user}\` kimliği \`cli.users\` içinde ${list(p.bound)} işletim sistemi kullanıcısına ait, bu yüzden \`${p.osUser}\` işletim sistemi kullanıcısı bu kimlikle davranamaz; hiçbir şey yapılmadı.`
        : p.kind === 'claimed-vs-bound'
          ? `\`--user ${p.user}\` yalnızca bir iddia (\`${p.osUser}\` işletim sistemi kullanıcısı \`cli.users\` içinde bu kimliğe bağlı değil) ve \`${p.id}\` bağlı bir hesap olan ${list(p.bound)} tarafından istendi ya da onaylandı: bir iddia, bağlı bir hesaba karşı hiçbir zaman ikinci kişi sayılmaz; hiçbir şey değişmedi.`
          : p.kind === 'cli-party'
            ? `\`${p.id}\` komut satırından \`${p.osUser}\` işletim sistemi kullanıcısı tarafından \`${p.user}\` olarak istendi ve \`cli.users\` bu hesabı o kimliğe bağlamıyor; bu yüzden Slack'ten onaylanamaz. Komut satırından onaylayın ya da hesabı \`cli.users\` içinde bağlayın.`
            : `\`--user ${p.user}\` yalnızca bir iddia: \`${p.osUser}\` işletim sistemi kullanıcısı \`cli.users\` içinde bu kimliğe bağlı değil ve \`${p.id}\` Slack'te istendi ya da onaylandı; hiçbir şey değişmedi. Slack'ten yanıtlayın ya da hesabı \`cli.users\` içinde bağlayın.`,
  UserNamespace: (p) =>
    `Komut satırı bir kullanıcı ad alanının (user namespace) içinde çalışıyor (/proc/self/uid_map \`${p.uidMap}\`, tüm sistemin eşlemesi değil); orada okuduğu işletim sistemi hesabı ve sunucu adı herhangi bir şey olabilir. Bu yüzden orada \`${p.verb}\` ya da bir şeyi değiştiren veya onaylayan başka hiçbir komutu çalıştırmaz. Ad alanının dışında çalıştırın.`,
  NotChannelMember: (p) =>
    p.reason === 'not-member'
      ? `\`${p.id}\` üyesi olmadığınız özel bir kanalda istendi; Ana Sayfa sekmesinden yalnızca o kanalın üyeleri onaylayabilir ya da reddedebilir.`
      : `Slack, \`${p.id}\` isteğinin açıldığı kanalda kimlerin olduğunu söylemedi (${p.reason}), bu yüzden Ana Sayfa sekmesinden yanıtlanamaz; o kanalda yanıtlayın.`,
  AlreadyApproved: (p) => `\`${p.id}\` isteğini zaten onayladınız; başka birinin de onayı gerekiyor.`,
  StoreUnavailable: (p) =>
    p.unsure
      ? `Botun kendi deposu kaydederken yanıt vermeyi bıraktı (${p.reason ?? 'yanıt yok'}); kaydedilip kaydedilmediği bilinmiyor: yeniden yapmadan önce \`/queue pending\` ya da \`/queue audit\` ile bakın.`
      : `Botun kendi deposu yanıt vermiyor (${p.reason ?? 'yanıt yok'}); hiçbir şey değişmedi.`,
  StartNotStored: (p) =>
    `\`${p.id}\` (${p.action} ${p.target}) onaylandı, ama depo başlangıcının yazılmasını reddetti (\`executing\` ve \`request.executing\` denetim kaydı: ${p.reason}), bu yüzden çalışmadı. Depo yeniden yazabildiğinde hiç başlamamış olarak kapatılır; o zaman yeniden isteyin.`,
  OutcomeNotStored: (p) =>
    `\`${p.id}\` (${p.action} ${p.target}) çalıştı ve ${p.outcome === 'done' ? 'tamamlandı' : 'başarısız oldu'}, ama depo sonucunun yazılmasını reddetti (\`${p.outcome}\` durumu ve \`action.${p.action}\` denetim kaydı: ${p.reason}). \`${p.target}\` hedefini kontrol edin; bot onu yazana kadar istek çalışıyor, sonra yarıda kaldı ("çalışmış olabilir") olarak görünür.`,
  ConfigInvalid: (p) =>
    `${p.source} içindeki config geçerli değil:\n${(p.problems as string[] | undefined)?.map((x) => `  ${x}`).join('\n') ?? ''}`,
  AuditChainBroken: (p) => `${p.message}`,
  AlreadyInState: (p) =>
    p.outOf === undefined
      ? `\`${p.target}\` zaten ${state(p.state)}; hiçbir şey değişmedi.`
      : p.keep !== undefined
        ? `\`${p.target}\` içinde ${Number(p.outOf).toLocaleString('tr-TR')} ${p.state} iş var ve ${Number(p.outOf).toLocaleString('tr-TR')} ≤ ${Number(p.keep).toLocaleString('tr-TR')} (--keep ${p.keep}): hepsi tutulur, silinecek bir şey yok; hiçbir şey değişmedi.`
        : `\`${p.target}\` içindeki ${Number(p.outOf).toLocaleString('tr-TR')} ${p.state} işin hiçbiri ${p.selection} ile eşleşmiyor; hiçbir şey değişmedi.`,
  UnknownJob: (p) =>
    p.target
      ? `\`${p.target}\` içinde \`${p.id}\` diye başarısız bir iş yok. Geçerli: başarısız işlerinden birinin id'si (\`/queue dlq ${p.target}\`) ya da \`all\`.`
      : `\`${p.queue === undefined ? p.system : `${p.system}/${p.queue}`}\` içinde \`${p.id}\` diye bir ${p.queue === undefined ? 'görev' : 'iş'} yok.${p.looked ? ` Arandığı yer: ${p.looked}.` : ''}`,
  UnknownTask: (p) =>
    `\`${p.system}\` sisteminde hiçbir worker, kuyruk ya da sonuç ${((p.ids as readonly string[]) ?? []).map((id) => `\`${id}\``).join(', ')} görevini tanımıyor; hiçbir şey iptal edilmedi. Geçerli: çalışan (\`/queue stuck ${p.system}\`), bir kuyrukta bekleyen ya da sonucu olan bir görevin id'si.`,
  TaskNotRunning: (p) => {
    const states = (p.states as readonly string[]) ?? [];
    const tasks = ((p.ids as readonly string[]) ?? []).map((id, i) => ({ id, state: states[i] ?? '?' }));
    return `\`${p.system}\` sisteminde ${tasks.map((x) => `\`${x.id}\` (bitti: ${x.state})`).join(', ')} artık çalışmıyor; hiçbir şey iptal edilmedi, istek de açılmadı. Geçerli: çalışan (\`/queue stuck ${p.system}\`) ya da bir kuyrukta bekleyen bir görevin id'si.`;
  },
  NothingToRetry: (p) =>
    p.filter
      ? `\`${p.target}\` içindeki ${Number(p.failed).toLocaleString('tr-TR')} başarısız işin hiçbiri ${p.filter} ile eşleşmiyor; hiçbir şey değişmedi. Oradaki hata grupları: ${((p.groups as readonly string[] | undefined) ?? []).join('; ') || 'yok'} (\`/queue dlq ${p.target}\`).`
      : `\`${p.target}\` içinde yeniden denenecek başarısız iş yok; hiçbir şey değişmedi.`,
  NeedsResultExtended: (p) =>
    `${p.id ? `\`${p.target}\` içindeki \`${p.id}\` görevi yeniden denenemiyor: kayıtlı hatasında` : `\`${p.target}\` yeniden denenemiyor: \`${p.system}\` sisteminin ${p.unnamed} kayıtlı hatasında`} görev adı, argümanlar ya da kuyruk yok. Celery bunları yalnızca uygulama \`result_extended=True\` ayarladığında saklar.`,
  RateLimited: (p) =>
    `Son bir dakikada bir şeyleri değiştiren ${p.limit} komut çalıştırdınız, izin verilen en fazla bu; \`${p.action}\` çalışmadı. ${p.retryAfterSeconds} sn sonra tekrar deneyin.`,
  UnknownAlert: (p) => `\`${p.id}\` diye bir alarm yok. Geçerli: \`/queue alerts\` listesinden bir id.`,
  UnknownPager: (p) => `\`${p.pager}\` diye bir çağrı cihazı yok. Geçerli: ${list(p.valid)}.`,
  NoPager: (p) =>
    !Array.isArray(p.valid) || p.valid.length === 0
      ? 'Ayarlı bir çağrı cihazı yok: config dosyasında `paging:` altına bir tane ekleyin (docs/configuration.md).'
      : `\`${p.id}\` alarmına uyan bir çağrı cihazı yok. Yine de çağırmak için birini adıyla verin: \`/queue page ${p.id} <çağrı-cihazı>\`, çağrı cihazları: ${list(p.valid)}.`,
  UnknownSilence: (p) =>
    `\`${p.id}\` diye bir susturma yok. Geçerli: \`/queue silences\` listesinden bir id.`,
  AlertNotFiring: (p) =>
    p.page
      ? `\`${p.id}\` alarmı çözüldü; bunun için çağrılacak kimse yok.`
      : `\`${p.id}\` alarmı çözüldü; onaylanacak ya da ertelenecek bir şey yok.`,
  JobNotActive: (p) =>
    `\`${p.system}/${p.queue}\` kuyruğundaki \`${p.id}\` işi aktif değil, ${p.state} durumunda; yalnızca aktif ya da takılı (stalled) bir iş başarısız yapılabilir.`,
  RedisForbidden: (p) =>
    `\`${p.system}\` için Redis reddetti: kullanıcısı kuyrukları değiştiremez (ACL: ${p.reason}). Hiçbir şey değişmedi; eylemler için eylem kullanıcısı gerekir (docs/deploy.md: "Least-privilege Redis users").`,
  KubernetesForbidden: (p) =>
    `Kubernetes reddetti: botun service account'u \`${p.namespace}\` namespace'inde \`${p.resource}\` üzerinde \`${p.verb}\` yapamıyor. Role içinde izin verin (docs/deploy.md: "Kubernetes RBAC for scale").`,
  KubernetesNotFound: (p) =>
    `Kubernetes'te \`${p.namespace}\` namespace'inde \`${p.name}\` adlı ${p.kind} yok.`,
  ScaleFailed: (p) => `\`${p.target}\` ölçeklenemedi: ${p.reason}`,
  RestartFailed: (p) => `\`${p.target}\` yeniden başlatılamadı: ${p.reason}`,
  ArchiveInvalid: (p) =>
    `${p.path} arşivine güvenilemez: \`${p.file}\` ${p.problem === 'checksum' ? 'manifestin söylediği dosya değil (sha256 uyuşmuyor)' : p.problem}; ${restoredSoFar(p.restoredBefore)}.`,
  UndoConflict: (p) =>
    `Geri alma reddedildi: ${p.count} iş id’si yeniden var (${list(p.ids)}${Number(p.count) > ((p.ids as string[] | undefined) ?? []).length ? ', …' : ''}); hiçbir şeyin üzerine yazılmadı, ${restoredSoFar(p.restoredBefore)}.`,
  NotUndoable: (p) => `\`${p.id}\` geri alınamaz: ${p.reason}.`,
  RetryInterrupted: (p) =>
    `\`${p.target}\` yeniden denenirken \`${p.system}\` için Redis yanıt vermeyi bıraktı (${p.reason}): ${Number(p.total).toLocaleString('tr-TR')} işin en az ${Number(p.done).toLocaleString('tr-TR')} tanesi önceden yapıldı, kalanlar hâlâ başarısız; Redis yanıt verince \`/queue retry ${p.target} all\` yalnızca onları alır.`,
  UndoInterrupted: (p) =>
    `\`${p.id}\` geri alınırken \`${p.system}\` için Redis yanıt vermeyi bıraktı (${p.reason}): \`${p.target}\` için ${Number(p.total).toLocaleString('tr-TR')} işin ${Number(p.done).toLocaleString('tr-TR')} tanesi geri geldi, kalanlar hâlâ arşivde. Redis yeniden yanıt verince geri alma kaldığı yerden sürer (bot 30 sn'de bir dener, komut satırı bir sonraki çalıştırmada); hiçbir iş iki kez geri konmaz.`,
  UndoTakenOver: (p) =>
    `\`${p.id}\`: bu geri almayı başka bir çalışma devraldı; bu çalışma hiçbir şeyi iki kez geri koymadan durdu.`,
  PurgeInterrupted: (p) =>
    `\`${p.target}\` temizlenirken \`${p.system}\` için Redis yanıt vermeyi bıraktı (${p.reason}): ${Number(p.total).toLocaleString('tr-TR')} işin ${Number(p.done).toLocaleString('tr-TR')} tanesi arşivlendi ve silindi, kalanlar hâlâ kuyrukta. Redis yeniden yanıt verince temizleme arşivinden devam eder (bot 30 sn'de bir dener, komut satırı bir sonraki çalıştırmada).`,
};

export const errors: Catalog['errors'] = {
  describe(error: Pick<OpsError, 'code' | 'params'>): string {
    // What the params quote came from a user or Redis: shown on one line (see visibleParams).
    return lines[error.code](visibleParams(error.params));
  },
  redisReasons: {
    commandTimedOut: 'komut zaman aşımına uğradı',
    connectTimedOut: 'bağlantı zaman aşımına uğradı',
    connectionRefused: 'bağlantı reddedildi',
    connectionLost: 'bağlantı koptu',
    notConnected: 'bağlı değil',
    noSuchDatabase: (db: number) =>
      `${db} numaralı veritabanı yok: \`databases\` ayarı daha küçük; URL'nin sonundaki sayıyı kontrol edin`,
  },
};
