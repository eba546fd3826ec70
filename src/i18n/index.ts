import { en } from './en/index.js';
import { tr } from './tr/index.js';

/**
 * The shape every catalog has: the English one's. Each Turkish file is typed against its part
 * of it, so tsc refuses a missing or extra key and a function whose parameters do not fit; the
 * exactness test (test/i18n/catalogs.test.ts) catches what the types cannot (open records, a
 * function that ignores a parameter).
 */
export type Catalog = typeof en;
export type Locale = 'en' | 'tr';

const catalogs: Record<Locale, Catalog> = { en, tr };

/** Every user-facing string, for one locale. */
export function messages(locale: Locale = 'en'): Catalog {
  return catalogs[locale];
}

/**
 * The queue-ops locale for a Slack user's own locale (`users.info` with `include_locale`): Turkish
 * for `tr-TR`, English for any `en-*`; undefined for the rest, which then get the config's locale.
 */
export function localeFromSlack(slackLocale: string | undefined): Locale | undefined {
  if (!slackLocale) return undefined;
  if (/^tr(-TR)?$/i.test(slackLocale)) return 'tr';
  if (/^en(-[A-Za-z]{2,})?$/i.test(slackLocale)) return 'en';
  return undefined;
}
