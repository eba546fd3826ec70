import type { Catalog } from '../catalog.js';

/** Okuma komutlarının (status, dlq, workers, help) kullanım satırları ve argüman sorunları. */
export const commands: Catalog['commands'] = {
  usage: {
    status: '/queue status [sistem[/kuyruk]]',
    dlq: '/queue dlq <sistem>/<kuyruk> [sınır]',
    workers: '/queue workers [sistem]',
    help: '/queue help',
  },
  tooManyArguments: (extra: string) => `Beklenmeyen \`${extra}\`.`,
  dlqNeedsQueue: 'Kuyruğu system/queue olarak yazın.',
  dlqLimitInvalid: (value: string) => `\`${value}\` geçerli bir limit değil.`,
  dlqLimitRange: (min: number, max: number) => `${min} ile ${max} arasında bir tam sayı`,
  everySystemDown: 'istenen tüm sistemler',
  statusTimedOut: (seconds: number) => `${seconds} sn içinde yanıt yok`,
  internalSystemError: (ref: string) => `iç hata, ref ${ref}`,
  quoteNotClosed: (quote: string) => `Bir tırnak (${quote}) kapatılmamış.`,
  nameTarget: 'Bir sistem ya da system/queue yazın.',
  notATarget: (text: string) => `\`${text}\` bir system/queue değil.`,
  unknownOption: (word: string, suggestion?: string) =>
    `\`${word}\` burada bir seçenek değil.${suggestion ? ` \`${suggestion}\` mi demek istediniz?` : ''}`,
  didYouMean: (what: string) => `\`${what}\` mi demek istediniz?`,
  targetValid: 'sistem ya da system/queue, ör. pushizo/dispatch-ios',
  wordTooLong: (length: number) =>
    `${length} karakterlik bir kelime, hiçbir ad ya da id bu kadar uzun değil.`,
  wordLengthValid: (max: number) => `en fazla ${max} karakterlik kelimeler`,
  moreNames: (count: number) => `…${count} tane daha`,
};
