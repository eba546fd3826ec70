import { readFileSync } from 'node:fs';
import type { Locale } from '../i18n/index.js';
import { interpolateEnv } from './interpolate.js';

// A top-level `locale: tr` line, quoted or not, with an optional comment; `${VAR}` is allowed.
const LOCALE_LINE = /^locale:[ \t]*(["']?)([^"'#\s]+)\1[ \t]*(?:#.*)?$/m;

/**
 * The `locale:` a config text asks for, read without parsing or validating it: what `--help`, a
 * wrong option and a config that does not parse are answered in, before there is a config. Only
 * `tr` and `en` count; anything else (or no such line) is undefined, and the caller says English.
 */
export function peekLocale(text: string, env: Record<string, string | undefined>): Locale | undefined {
  const match = LOCALE_LINE.exec(text);
  if (!match) return undefined;
  const value = interpolateEnv(match[2]!, env).text.trim();
  return value === 'tr' || value === 'en' ? value : undefined;
}

/** `peekLocale` of a config file; undefined when it cannot be read (that problem is told later). */
export function peekConfigFileLocale(
  path: string,
  env: Record<string, string | undefined>,
): Locale | undefined {
  try {
    return peekLocale(readFileSync(path, 'utf8'), env);
  } catch {
    return undefined;
  }
}
