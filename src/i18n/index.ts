import { AsyncLocalStorage } from 'node:async_hooks';
import { type Catalog, LOCALE_IDS, LOCALES, type Locale } from './locales.js';

export { isLocale, LOCALE_IDS } from './locales.js';
/**
 * `Catalog` is the English catalog's shape. Each other locale's file is typed against its part of
 * it, so tsc refuses a missing or extra key and a function whose parameters do not fit; the
 * exactness test (test/i18n/catalogs.test.ts) catches what the types cannot (open records, a
 * function that ignores a parameter). The locales themselves are listed in `locales.ts`.
 */
export type { Catalog, Locale };

/**
 * The locale of what is being answered now: a request's (the dispatcher runs each one in it),
 * or the config's (the bot and the command line run in it once the config is read). Code deep
 * in a request (parsing a target, a system that timed out) words its errors without every
 * function between taking a locale.
 */
const current = new AsyncLocalStorage<Locale>();

/** Runs `work` (and everything it starts) with `locale` as the one `messages()` answers in. */
export function inLocale<T>(locale: Locale, work: () => T): T {
  return current.run(locale, work);
}

/** The locale `messages()` answers in now. */
export function currentLocale(): Locale {
  return current.getStore() ?? 'en';
}

/** Every user-facing string, for one locale: the one given, else the current one, else English. */
export function messages(locale?: Locale): Catalog {
  return LOCALES[locale ?? current.getStore() ?? 'en'].catalog;
}

/**
 * The queue-ops locale for a Slack user's own locale (`users.info` with `include_locale`): Turkish
 * for `tr-TR`, English for any `en-*` (each locale's `slack` pattern); undefined for the rest,
 * which then get the config's locale.
 */
export function localeFromSlack(slackLocale: string | undefined): Locale | undefined {
  if (!slackLocale) return undefined;
  return LOCALE_IDS.find((locale) => LOCALES[locale].slack.test(slackLocale));
}
