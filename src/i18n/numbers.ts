import { type Locale, localeEntry } from './locales.js';

/*
 * Numbers in a locale's way (`48,211`, `48.211`). Here, below the config, so that a verb's
 * descriptor (src/verbs.ts) can word its outcome with them; src/blocks/format.ts re-exports them
 * beside the dates and durations.
 */

// Building an Intl.NumberFormat costs far more than formatting with one; a status table formats thousands.
const numberFormats = new Map<string, Intl.NumberFormat>();
function numberFormat(locale: Locale, maximumFractionDigits = 0): Intl.NumberFormat {
  const key = `${locale}/${maximumFractionDigits}`;
  let f = numberFormats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(localeEntry(locale).intl, { maximumFractionDigits });
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

export function formatIn(locale: Locale, n: number, minDigits: number, maxDigits: number): string {
  if (locale === 'en') {
    const text = formatEnglish(n, minDigits, maxDigits);
    if (text !== undefined) return text;
  }
  return minDigits === 0
    ? numberFormat(locale, maxDigits).format(n)
    : n.toLocaleString(localeEntry(locale).intl, {
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
