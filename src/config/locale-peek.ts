import { isLocale, type Locale } from '../i18n/locales.js';
import { peekConfigFileLocaleWord, peekLocaleWord } from './locale-word.js';

/**
 * The `locale:` a config text asks for, read without parsing or validating it: what a wrong
 * option and a config that does not parse are answered in, before there is a config. Only the
 * locales of src/i18n/locales.ts count; anything else (or no such line) is undefined, and the
 * caller says English.
 */
export function peekLocale(text: string, env: Record<string, string | undefined>): Locale | undefined {
  const word = peekLocaleWord(text, env);
  return isLocale(word) ? word : undefined;
}

/** `peekLocale` of a config file; undefined when it cannot be read (that problem is told later). */
export function peekConfigFileLocale(
  path: string,
  env: Record<string, string | undefined>,
): Locale | undefined {
  const word = peekConfigFileLocaleWord(path, env);
  return isLocale(word) ? word : undefined;
}
