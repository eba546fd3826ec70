import type { Catalog } from '../catalog.js';

const n = (value: number) => value.toLocaleString('tr-TR');

/** `retry … all` ve `purge` süzgeçleri (--error, --name, --older-than, --newer-than, --keep). */
export const filters: Catalog['filters'] = {
  unknownFlag: (flag: string) => `\`${flag}\` bu komutun bir seçeneği değil.`,
  needsValue: (flag: string) => `\`${flag}\` bir değer ister.`,
  twice: (flag: string) => `\`${flag}\` iki kez verilmiş.`,
  tooLong: (flag: string) => `\`${flag}\` değeri çok uzun.`,
  badDuration: (flag: string, value: string) => `\`${value}\`, \`${flag}\` için bir süre değil.`,
  badKeep: (value: string) => `\`${value}\` tutulacak başarısız iş sayısı değil.`,
  badGroup: 'Bu bir hata grubu anahtarı değil.',
  valueOf: (flag: string): string =>
    ({
      '--error':
        'başarısızlık mesajının içerdiği metin ya da `dlq`’nun gösterdiği bir hata grubu (en çok 256 karakter)',
      '--name': 'bir işin (görevin) adı, tam olarak (en çok 256 karakter)',
      '--older-than': '30m, 2h ya da 7d gibi bir süre',
      '--newer-than': '30m, 2h ya da 7d gibi bir süre',
      '--keep': '0 ile 10.000.000 arasında bir tam sayı',
      '--group':
        'dlq’nun “Bu grubu yeniden dene” düğmesinin gönderdiği 12 karakterlik anahtar ya da dlq’nun gösterdiği bir hata grubu',
    })[flag] ?? '--error, --name, --older-than, --newer-than',
  emptyWindow: (older: string, newer: string) =>
    `\`--older-than ${older}\` ile \`--newer-than ${newer}\` arasında hiç zaman kalmıyor.`,
  windowValid: '--older-than, --newer-than’dan kısa olmalı, ör. `--older-than 1h --newer-than 1d`',
  onlyAll: 'Süzgeçler tek bir iş id’siyle değil, `all` ile kullanılır.',
  errorOnlyFailed: '`--error` başarısız işleri süzer (başarısızlık mesajı yalnızca onlarda var).',
  errorOnlyFailedValid: 'purge <sistem>/<kuyruk> failed --error "<metin>"',
  keepOnlyFailed: '`--keep` en yeni başarısız işleri tutar: `failed` ile kullanılır.',
  keepOnlyFailedValid: 'purge <sistem>/<kuyruk> failed --keep <n>',
  groupAndError: '`--group` hatayı zaten belirtiyor; `--error` vermeyin.',
  groupGone: (target: string) =>
    `Bu hata grubu artık ${target} kuyruğunun en yeni başarısızları arasında değil; \`dlq ${target}\` komutunu yeniden çalıştırın.`,
  retryMatched: (filter: string, matched: number, taken: number, failed: number) =>
    ` Süzgeç ${filter}: ${n(failed)} başarısızlıktan ${n(matched)} tanesi uyuyor; ${
      taken < matched
        ? `en yeni ${n(taken)} tanesi gidiyor, uyan ${n(matched - taken)} tanesi başka bir isteğe kalıyor`
        : `${n(taken)} tanesinin hepsi gidiyor`
    }; uymayan ${n(Math.max(0, failed - matched))} tanesi dışarıda kalıyor.`,
  purgeMatched: (selection: string, matched: number, outOf: number) =>
    ` Seçim ${selection}: ${n(outOf)} işten ${n(matched)} tanesi uyuyor; ${n(Math.max(0, outOf - matched))} tanesi dışarıda kalıyor.`,
  nothingMatches: (target: string, selection: string) =>
    `${target} içinde ${selection} seçimine uyan bir şey yok.`,
  retryGroup: 'Bu grubu yeniden dene',
};
