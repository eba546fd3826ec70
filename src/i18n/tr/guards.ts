import type { Catalog } from '../catalog.js';

/** Bir reddin altındaki ek satırlar: neden ve ne yapılmalı. İlk satır errors.ts'teki hata satırıdır. */
export const guards: Catalog['guards'] = {
  noAllowedChannels:
    '`slack.allowedChannels` içinde henüz hiçbir kanal yok; bir admin kanal ekleyene kadar Slack üzerinden değişiklik yapılamaz.',
  twoFactorUnknown:
    'Slack, hesabınızda iki adımlı doğrulamanın açık olup olmadığını söylemedi (bunu bota yalnızca workspace adminleri için söyler); bot bunu doğrulayamıyor.',
  twoFactorOff: 'Slack, hesabınızda iki adımlı doğrulamanın kapalı olduğunu bildiriyor. Açıp tekrar deneyin.',
  groupsUnresolved: (groups: string) =>
    `Bot ${groups} kullanıcı gruplarını şu an Slack'te kontrol edemedi; bir dakika sonra tekrar deneyin.`,
  cliActor: (actor: string) =>
    `Komut satırında \`${actor}\` olarak görünüyorsunuz; bu, \`roles:\` içinde yalnızca \`"*"\` ile eşleşir. Bir Slack kullanıcısı olarak işlem yapmak için \`--user U…\` verin.`,
};
