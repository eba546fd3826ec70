import type { Locale as DateFnsLocale } from 'date-fns';
import { enUS } from 'date-fns/locale/en-US';
import { tr as trDates } from 'date-fns/locale/tr';
import type { $ZodConfig } from 'zod/v4/core';
import turkishZod from 'zod/v4/locales/tr.js';
import type { Catalog } from './catalog.js';
import { en } from './en/index.js';
import { tr } from './tr/index.js';

// The shape every catalog has: the English one's (catalog.ts, which each locale's files are typed
// against without importing this registry of every locale).
export type { Catalog };

/** Everything queue-ops needs to speak one locale. */
export interface LocaleEntry {
  /** Every user-facing string: the locale's folder (`src/i18n/<id>/`), typed against English. */
  catalog: Catalog;
  /** The BCP 47 tag for Intl (`48,000` in en-US, `48.000` in tr-TR). */
  intl: string;
  /** date-fns' locale for relative times and distances ("5 dakika önce"). */
  dates: DateFnsLocale;
  /**
   * Whether durations, dates and "how long ago" are written in date-fns' words ("3 saat 12 dakika",
   * "1 Aralık 2026", "5 dakika önce") rather than the catalog's compact units and ISO dates
   * (`3h 12m`, `2026-12-01`, `5m 3s ago`): English keeps its compact columns, Turkish reads the
   * way the runbooks write.
   */
  inWords: boolean;
  /** The Slack user locales (`users.info` with `include_locale`) that get this one. */
  slack: RegExp;
  /** zod's own messages in this locale, for the config problems the catalog does not word itself. */
  zodErrors?: () => NonNullable<$ZodConfig['localeError']>;
}

/**
 * Every locale queue-ops speaks. A new one is its folder of strings (a copy of `en/`, translated)
 * and one line here; the config's `locale:`, Slack users' own locales, the command line's words
 * and the demo's `--locale` all follow this list. The command line's `--help` reads
 * `src/i18n/<id>/cli.ts` by itself, without this registry (see transports/cli/main.ts).
 */
export const LOCALES = {
  en: { catalog: en, intl: 'en-US', dates: enUS, inWords: false, slack: /^en(-[A-Za-z]{2,})?$/i },
  tr: {
    catalog: tr,
    intl: 'tr-TR',
    dates: trDates,
    inWords: true,
    slack: /^tr(-TR)?$/i,
    zodErrors: () => turkishZod().localeError,
  },
} satisfies Record<string, LocaleEntry>;

export type Locale = keyof typeof LOCALES;

/** The locales in the registry's order, English first. */
export const LOCALE_IDS = Object.keys(LOCALES) as [Locale, ...Locale[]];

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && Object.hasOwn(LOCALES, value);
}

export function localeEntry(locale: Locale): LocaleEntry {
  return LOCALES[locale];
}
