import type { Catalog } from '../catalog.js';

export const common: Catalog['common'] = {
  somethingWentWrong: (ref: string) =>
    `Bizim tarafta bir şeyler ters gitti (ref ${ref}). Ayrıntılar botun logunda.`,
  didYouMean: (suggestion: string) => `\`${suggestion}\` mi demek istediniz?`,
  none: 'yok',
  unaudited: (reason: string) =>
    `:warning: Denetim kaydına yazılmadı: botun deposuna yazılamıyor (${reason}). Okuma komutları yanıt veriyor; depo yeniden yazılabilene kadar eylemler ve onaylar kullanılamaz.`,
};
