import type { Month } from 'date-fns';
import { formatDistanceStrict } from 'date-fns/formatDistanceStrict';
import { formatDuration as formatDurationInWords } from 'date-fns/formatDuration';
import { type Locale, messages } from '../i18n/index.js';
import { type LocaleEntry, localeEntry } from '../i18n/locales.js';

/** How numbers, dates and relative times are written in a locale (its line in src/i18n/locales.ts). */
export type LocaleFormat = Pick<LocaleEntry, 'intl' | 'dates' | 'inWords'>;

export function localeFormat(locale: Locale): LocaleFormat {
  return localeEntry(locale);
}

// Building an Intl.NumberFormat costs far more than formatting with one; a status table formats thousands.
const numberFormats = new Map<string, Intl.NumberFormat>();
function numberFormat(locale: Locale, maximumFractionDigits = 0): Intl.NumberFormat {
  const key = `${locale}/${maximumFractionDigits}`;
  let f = numberFormats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(localeFormat(locale).intl, { maximumFractionDigits });
    numberFormats.set(key, f);
  }
  return f;
}

/**
 * What `Intl.NumberFormat('en-US')` writes, without Intl: the first Intl object of a process loads
 * ICU's data (about 7 MB and a few milliseconds), which the command line's `status` would pay for
 * its number columns alone. Like ICU, it rounds the shortest decimal that reads back as the number
 * (`String(n)`: 0.15, not the binary 0.1499…), half away from zero. Anything else (exponents, no
 * finite value) is left to Intl.
 */
function formatEnglish(n: number, minDigits: number, maxDigits: number): string | undefined {
  const text = String(Math.abs(n));
  if (!/^\d+(\.\d+)?$/.test(text)) return undefined;
  const dot = text.indexOf('.');
  let whole = dot === -1 ? text : text.slice(0, dot);
  let fraction = dot === -1 ? '' : text.slice(dot + 1);
  if (fraction.length > maxDigits) {
    const up = fraction.charCodeAt(maxDigits) >= 53; // '5'
    fraction = fraction.slice(0, maxDigits);
    if (up) {
      // Add one in the last kept place, carrying through the fraction into the whole part.
      const digits = (whole + fraction).split('');
      let i = digits.length - 1;
      while (i >= 0 && digits[i] === '9') digits[i--] = '0';
      if (i >= 0) digits[i] = String(Number(digits[i]) + 1);
      else digits.unshift('1');
      const joined = digits.join('');
      whole = joined.slice(0, joined.length - fraction.length);
      fraction = joined.slice(joined.length - fraction.length);
    }
  }
  while (fraction.length > minDigits && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  fraction = fraction.padEnd(minDigits, '0');
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  return `${sign}${whole.replace(/\B(?=(\d{3})+$)/g, ',')}${fraction ? `.${fraction}` : ''}`;
}

function formatIn(locale: Locale, n: number, minDigits: number, maxDigits: number): string {
  if (locale === 'en') {
    const text = formatEnglish(n, minDigits, maxDigits);
    if (text !== undefined) return text;
  }
  return minDigits === 0
    ? numberFormat(locale, maxDigits).format(n)
    : n.toLocaleString(localeFormat(locale).intl, {
        minimumFractionDigits: minDigits,
        maximumFractionDigits: maxDigits,
      });
}

/** `48211` → `48,211` in the locale's grouping. */
export function formatNumber(n: number, locale: Locale): string {
  return formatIn(locale, n, 0, 0);
}

/** `12.3` / `12,3`: a fixed number of decimals in the locale's way. */
export function formatDecimal(n: number, digits: number, locale: Locale): string {
  return formatIn(locale, n, digits, digits);
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

/** A TTL in the words it is typed in: the largest unit that divides it (`7d`, `36h`, `90m`). */
export function ttlText(seconds: number): string {
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const)
    if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}
