import type { Locale as DateFnsLocale } from 'date-fns';
import { enUS } from 'date-fns/locale/en-US';
import { tr as trDates } from 'date-fns/locale/tr';
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

/** How numbers, dates and relative times are written in a locale. */
export interface LocaleFormat {
  /** The BCP 47 tag for Intl (`48,000` in en-US, `48.000` in tr-TR). */
  intl: string;
  /** date-fns' locale for relative times and distances ("5 dakika önce"). */
  dates: DateFnsLocale;
  /**
   * Whether "how long ago" is written in date-fns' words ("5 dakika önce") rather than the compact
   * units of the catalog (`5m 3s ago`): the English tables keep their compact column, the Turkish
   * ones read the way the runbooks write.
   */
  relativeInWords: boolean;
}

const formats: Record<Locale, LocaleFormat> = {
  en: { intl: 'en-US', dates: enUS, relativeInWords: false },
  tr: { intl: 'tr-TR', dates: trDates, relativeInWords: true },
};

export function localeFormat(locale: Locale): LocaleFormat {
  return formats[locale];
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
