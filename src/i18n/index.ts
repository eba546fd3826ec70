import { AsyncLocalStorage } from 'node:async_hooks';
import type { Catalog } from './catalog.js';
import { en } from './en/index.js';
import { tr } from './tr/index.js';

/**
 * The shape every catalog has: the English one's (`catalog.ts`). Each Turkish file is typed
 * against its part of it, so tsc refuses a missing or extra key and a function whose parameters
 * do not fit; the exactness test (test/i18n/catalogs.test.ts) catches what the types cannot (open
 * records, a function that ignores a parameter).
 */
export type { Catalog };
export type Locale = 'en' | 'tr';

const catalogs: Record<Locale, Catalog> = { en, tr };

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
  return catalogs[locale ?? current.getStore() ?? 'en'];
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
