import type { Catalog } from '../catalog.js';

/** Eylem komutlarının (pause, resume, approve, deny, pending, audit) kullanımı ve argüman sorunları. */
export const actions: Catalog['actions'] = {
  pause: {
    usage: '/queue pause <sistem>/<kuyruk>',
    summary: 'worker’ların bir kuyruktan iş almasını durdur (politika ve onay geçerli)',
  },
  resume: {
    usage: '/queue resume <sistem>/<kuyruk>',
    summary: 'duraklatılmış bir kuyruktan worker’lar yeniden iş alsın',
  },
  retry: {
    usage:
      '/queue retry <sistem>/<kuyruk> <iş-id|all> [sınır] [--error <metin>] [--group <anahtar>] [--name <ad>] [--older-than <süre>] [--newer-than <süre>]',
    summary:
      'başarısız işleri yeniden çalıştır: id ile tek bir iş, ya da süzgeçlere uyanlardan limite kadar en yeni başarısızlar (varsayılan ve en fazla 1000)',
  },
  retryNeedsWhat: 'Başarısız bir işin id’sini ya da `all` yazın.',
  retryLimitOnlyAll: 'Limit yalnızca `all` ile birlikte verilir.',
  retryLimit: (value: string) => `\`${value}\` geçerli bir limit değil.`,
  retryLimitValid: (max: number) => `1 ile ${max} arasında bir tam sayı`,
  approve: { usage: '/queue approve <istek-id>', summary: 'başka birinin bekleyen isteğini onayla' },
  deny: {
    usage: '/queue deny <istek-id> [gerekçe]',
    summary: 'bekleyen bir isteği reddet (ya da kendi isteğini geri çek)',
  },
  pending: { usage: '/queue pending', summary: 'onay bekleyen istekler' },
  audit: {
    usage: '/queue audit [n | verify]',
    summary: 'son n denetim kaydı (varsayılan 20), ya da hash zincirini doğrula',
  },
  needsTarget: 'Kuyruğu system/queue olarak yazın.',
  needsId: 'İstek id’sini yazın, ör. `r-7f3k9qab`.',
  tooMany: 'Fazla kelime var.',
  needsStore: 'depo olmadan eylem çalıştırmak',
  auditNeedsStore: 'depo olmadan denetim kaydını göstermek',
  exportNeedsStore: 'depo olmadan denetim kaydını dışa aktarmak',
  exportCliOnly: 'Export JSON satırları yazar ve yalnızca komut satırında çalışır.',
  auditCount: (value: string) => `\`${value}\` geçerli bir kayıt sayısı değil.`,
  auditCountValid: (max: number) => `1..${max} ya da \`verify\``,
  exportUsage: 'queue-ops audit export [--since ISO]',
};
