import type { Month } from 'date-fns';
import { formatDistanceStrict } from 'date-fns/formatDistanceStrict';
import { formatDuration as formatDurationInWords } from 'date-fns/formatDuration';
import { type Locale, messages } from '../i18n/index.js';
import { type LocaleEntry, localeEntry } from '../i18n/locales.js';
import { formatDecimal, formatIn, formatNumber } from '../i18n/numbers.js';

export { formatDecimal, formatNumber };

/** How numbers, dates and relative times are written in a locale (its line in src/i18n/locales.ts). */
export type LocaleFormat = Pick<LocaleEntry, 'intl' | 'dates' | 'inWords'>;

export function localeFormat(locale: Locale): LocaleFormat {
  return localeEntry(locale);
}

/**
 * A rate per minute in a narrow column: one decimal under 10 (`0.4`), whole numbers above; `?`
 * when not known (a queue that keeps no finished jobs), never a 0 that would read as "nothing done".
 */
export function formatRate(perMinute: number | null, locale: Locale): string {
  if (perMinute === null) return messages(locale).throughput.unknownRate;
  return perMinute < 10 ? formatDecimal(perMinute, 1, locale) : formatNumber(Math.round(perMinute), locale);
}

/** Bytes with 1024 steps, as Redis's own `maxmemory 4gb` counts them: `4 GB`, `812.4 MB`. */
export function formatBytes(bytes: number, locale: Locale): string {
  const units = messages(locale).status.units.bytes;
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit === 0 || value >= 100 || Number.isInteger(value) ? 0 : 1;
  const shown = formatIn(locale, value, 0, digits);
  return `${shown} ${units[unit]}`;
}

/**
 * A duration of two units at most: `45s`, `12m 3s`, `3h 12m`, `2d 4h` in English; in Turkish
 * date-fns' words, "45 saniye", "3 saat 12 dakika", "2 gün 4 saat".
 */
export function formatDuration(seconds: number, locale: Locale): string {
  const format = localeFormat(locale);
  if (!format.inWords) return formatDurationCompact(seconds, locale);
  const { d, h, m, s } = durationParts(seconds);
  const [units, zero]: [('days' | 'hours' | 'minutes' | 'seconds')[], boolean] =
    d > 0
      ? [['days', 'hours'], false]
      : h > 0
        ? [['hours', 'minutes'], false]
        : m > 0
          ? [['minutes', 'seconds'], false]
          : [['seconds'], true];
  return formatDurationInWords(
    { days: d, hours: h, minutes: m, seconds: s },
    { format: units, zero, locale: format.dates },
  );
}

/**
 * The catalog's compact units in every locale (`3h 12m`, "3 sa 12 dk", the runbooks' own
 * abbreviations): for a column that must stay narrow, such as the status table's oldest job.
 */
export function formatDurationCompact(seconds: number, locale: Locale): string {
  const { d, h, m, s } = durationParts(seconds);
  return messages(locale).status.units.duration(d, h, m, s);
}

function durationParts(seconds: number): { d: number; h: number; m: number; s: number } {
  const total = Math.max(0, Math.floor(seconds));
  return {
    d: Math.floor(total / 86_400),
    h: Math.floor((total % 86_400) / 3600),
    m: Math.floor((total % 3600) / 60),
    s: total % 60,
  };
}

/** `12m 3s ago` (en) or `12 dakika önce` (tr, through date-fns' Turkish locale), relative to `now`. */
export function formatAgo(at: number, now: Date, locale: Locale): string {
  const units = messages(locale).status.units;
  const seconds = Math.round((now.getTime() - at) / 1000);
  if (Math.abs(seconds) >= 1 && localeFormat(locale).inWords) return formatRelative(at, now, locale);
  if (seconds < 0) return units.inFuture(formatDuration(-seconds, locale));
  if (seconds < 1) return units.justNow;
  return units.ago(formatDuration(seconds, locale));
}

/**
 * `2026-03-01 09:52:10 UTC` (or without seconds); in Turkish with date-fns' month names,
 * "1 Mart 2026 09:52:10 UTC". Always UTC, whatever the machine's time zone.
 */
export function formatUtc(at: Date | number, locale: Locale, withSeconds = true): string {
  const iso = new Date(at).toISOString();
  const time = iso.slice(11, withSeconds ? 19 : 16);
  const format = localeFormat(locale);
  const date = format.inWords
    ? `${Number(iso.slice(8, 10))} ${format.dates.localize.month((Number(iso.slice(5, 7)) - 1) as Month, { width: 'wide' })} ${iso.slice(0, 4)}`
    : iso.slice(0, 10);
  return messages(locale).status.units.utc(`${date} ${time}`);
}

/** "in 15 minutes", "15 dakika içinde", "5 dakika önce": date-fns' words in the locale. */
export function formatRelative(at: Date | number, now: Date, locale: Locale): string {
  return formatDistanceStrict(new Date(at), now, { addSuffix: true, locale: localeFormat(locale).dates });
}
