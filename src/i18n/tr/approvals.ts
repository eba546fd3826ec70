import type { Catalog } from '../catalog.js';

const n = (value: number) => value.toLocaleString('tr-TR');

/** İstek, onay ve sonuç metinleri. Önizlemeler düz metindir ve istekle birlikte saklanır. */
export const approvals: Catalog['approvals'] = {
  previewPause: (target: string, waiting: number, workers: number) =>
    `pause ${target}: bekleyen ${n(waiting)} iş` +
    (workers > 0 ? ` artık ${n(workers)} worker tarafından alınmayacak` : ' artık alınmayacak') +
    '; çalışmakta olan işler tamamlanır.',
  previewResume: (target: string, waiting: number) =>
    `resume ${target}: bekleyen ${n(waiting)} iş yeniden alınmaya başlayacak.`,
  previewRetry: (
    target: string,
    count: number,
    failed: number,
    topErrors: { error: string; count: number; example?: string }[],
    jobId?: string,
  ) =>
    `retry ${target}: ${jobId ? `başarısız iş ${jobId}` : `${failed > count ? `${n(failed)} başarısız işin en yeni ${n(count)} tanesi` : `${n(count)} başarısız iş`}`}, deneme sayıları sıfırlanarak yeniden çalıştırılır.` +
    (topErrors.length > 0
      ? ` Hatalar: ${topErrors.map((e) => `${n(e.count)}× ${e.error || '(mesaj yok)'}${e.example && e.example !== e.error ? ` (örn. ${e.example})` : ''}`).join('; ')}.`
      : ''),
  previewExactly: (count: number) =>
    ` Çalışacak olan tam olarak budur: bu ${n(count)} iş (onaylandığında hâlâ başarısız olanlar), başkası değil; bu önizlemeden sonra gelen hatalar başka bir isteğe bırakılır.`,
  resultRetried: (target: string, retried: number, skipped: number, newIds: boolean, newSincePreview = 0) =>
    `${target}: ${n(retried)} iş ${newIds ? 'yeni görevler olarak yeniden gönderildi (eski → yeni id’ler denetim kaydında)' : 'yeniden kuyrukta'}` +
    (skipped > 0 ? `; ${n(skipped)} iş artık başarısız değildi, dokunulmadı` : '') +
    (newSincePreview > 0
      ? `; eşleşen ${n(newSincePreview)} hata önizlemeden sonra geldi ve bırakıldı (yeniden denemek için yeniden isteyin)`
      : '') +
    '.',
  alreadyPaused: (target: string) => `${target} zaten duraklatılmış; yapılacak bir şey yok.`,
  notPaused: (target: string) => `${target} duraklatılmış değil; yapılacak bir şey yok.`,
  header: (action: string, target: string) => `İstek: ${action} ${target}`,
  requestedBy: (who: string, when: string) => `İsteyen: ${who}, ${when}`,
  expires: (when: string) => `Son geçerlilik: ${when}`,
  needs: (have: number, need: number) => `Onaylar: ${have} / ${need}`,
  approvedBy: (names: string) => `Onaylayan: ${names}`,
  status: {
    pending: ':hourglass_flowing_sand: Onay bekliyor',
    approved: ':white_check_mark: Onaylandı, başlıyor',
    executing: ':gear: Çalışıyor',
    done: ':white_check_mark: Tamamlandı',
    failed: ':x: Başarısız',
    denied: ':no_entry: Reddedildi',
    expired: ':alarm_clock: Süresi doldu: kimse zamanında onaylamadı. Hâlâ gerekiyorsa yeniden isteyin.',
    interrupted:
      ':warning: Yarıda kaldı: çalışmış olabilir. Bu çalışırken bot durdu ya da sonucunu yazamadı. Yeniden istemeden önce kuyruğu ve `/queue audit` çıktısını kontrol edin.',
  },
  deniedBy: (who: string, reason?: string) => `Reddeden: ${who}${reason ? `: ${reason}` : ''}`,
  duration: (seconds: number) =>
    `${seconds < 1 ? '<1' : seconds.toLocaleString('tr-TR', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} sn sürdü`,
  resultPaused: (target: string, workers?: string[]) =>
    `${target} duraklatıldı${workers?.length ? ` (yanıt veren worker’lar: ${workers.join(', ')})` : ''}.`,
  resultResumed: (target: string, workers?: string[]) =>
    `${target} devam ettirildi${workers?.length ? ` (yanıt veren worker’lar: ${workers.join(', ')})` : ''}.`,
  resultPauseUnsettled: (target: string, system: string, workers?: string[]) =>
    `${target} için duraklatma gönderildi${workers?.length ? ` ve ${workers.join(', ')} yanıt verdi` : ''}, ` +
    'ama kuyruk henüz duraklamadı: bot beklemeyi bıraktığında bir worker hâlâ onu dinliyordu. ' +
    `\`/queue status ${target}\` ve \`/queue workers ${system}\` ile kontrol edin.`,
  resultResumeUnsettled: (target: string, system: string, workers?: string[]) =>
    `${target} için devam ettirme gönderildi${workers?.length ? ` ve ${workers.join(', ')} yanıt verdi` : ''}, ` +
    'ama kuyruk hâlâ duraklı: bot beklemeyi bıraktığında hiçbir worker onu dinlemeye başlamamıştı. ' +
    `\`/queue status ${target}\` ve \`/queue workers ${system}\` ile kontrol edin.`,
  approveButton: 'Onayla',
  denyButton: 'Reddet',
  undoButton: 'Bu silmeyi geri al',
  confirmTitle: 'Bu işlem onaylansın mı?',
  confirmText: (preview: string) => `${preview}`,
  confirmYes: 'Onayla',
  confirmNo: 'Vazgeç',
  howToApprove: (id: string) =>
    `Rolü olan başka biri Onayla'ya basabilir ya da \`/queue approve ${id}\` yazabilir.`,
  pendingHeader: (count: number) =>
    count === 0 ? 'Onay bekleyen istek yok.' : `Onay bekleyen istekler: ${count}`,
  pendingLine: (
    id: string,
    action: string,
    target: string,
    who: string,
    expires: string,
    have: number,
    need: number,
  ) => `\`${id}\` ${action} ${target}: isteyen ${who}, ${have}/${need} onay, son geçerlilik ${expires}`,
  error: (message: string) => `Hata: ${message}`,
  noPolicy: (action: string) => `\`${action}\` için politika yok.`,
  requesterLostRole: (who: string, role: string) =>
    `isteyenin artık yetkisi yok: ${who} artık \`${role}\` rolüne sahip değil, bu yüzden çalışmadı`,
  requesterNo2fa: (who: string) =>
    `isteyenin artık yetkisi yok: Slack ${who} için iki adımlı doğrulamayı doğrulamadı, bu yüzden çalışmadı`,
  interruptedError: (target: string) =>
    `çalışmış olabilir: bu çalışırken bot durdu ya da sonucunu yazamadı. Yeniden istemeden önce \`${target}\` hedefini kontrol edin (\`/queue status\`, \`/queue audit\`)`,
  interruptedBeforeStart:
    ':warning: Başlamadan yarıda kaldı: onaylanmıştı, ama bot onu çalıştırmadan önce durdu (ya da başlangıcı kaydedemedi). Çalışmadı; hâlâ gerekiyorsa yeniden isteyin.',
  neverStartedError:
    'onaylandı ama hiç başlamadı: bot onu çalıştırmadan önce durdu (ya da depo başlangıcını reddetti), bu yüzden çalışmadı',
  approverLostRole: (who: string, role: string) =>
    `${who} onayı artık geçerli değil: ${who} artık \`${role}\` rolüne sahip değil, bu yüzden çalışmadı`,
  approverNo2fa: (who: string) =>
    `${who} onayı artık geçerli değil: Slack ${who} için iki adımlı doğrulamayı doğrulamadı, bu yüzden çalışmadı`,
  viaCommandLine: (osUser: string) => `komut satırından, OS kullanıcısı ${osUser}`,
  sameOsUserRejected:
    'kendi kendine onay: isteği açan ya da zaten onaylayan, aynı makinedeki aynı OS kullanıcısı',
};
