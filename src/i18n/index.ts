import { en } from './en/index.js';

export type Catalog = typeof en;
export type Locale = 'en';

const catalogs: Record<Locale, Catalog> = { en };

/** Every user-facing string, for one locale. */
export function messages(locale: Locale = 'en'): Catalog {
  return catalogs[locale];
}
