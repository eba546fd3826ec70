import type { Catalog } from '../catalog.js';

export const common: Catalog['common'] = {
  somethingWentWrong: (ref: string) =>
    `Bizim tarafta bir şeyler ters gitti (ref ${ref}). Ayrıntılar botun logunda.`,
  didYouMean: (suggestion: string) => `\`${suggestion}\` mi demek istediniz?`,
  none: 'yok',
};
