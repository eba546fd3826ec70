import { readFileSync } from 'node:fs';
import { interpolateEnv } from './interpolate.js';

// Light on purpose: the command line's `--help` reads it before anything else is loaded.

// A top-level `locale: tr` line, quoted or not, with an optional comment; `${VAR}` is allowed.
const LOCALE_LINE = /^locale:[ \t]*(["']?)([^"'#\s]+)\1[ \t]*(?:#.*)?$/m;
// What a locale id looks like (`tr`, `pt-br`): anything else is never used to find its words.
const LOCALE_ID = /^[a-z]{2,3}(-[a-z0-9]{2,8})?$/i;

/**
 * The word on a config text's top-level `locale:` line, read without parsing or validating the
 * rest, if it looks like a locale id; whether queue-ops speaks it is the caller's question.
 */
export function peekLocaleWord(text: string, env: Record<string, string | undefined>): string | undefined {
  const match = LOCALE_LINE.exec(text);
  if (!match) return undefined;
  const value = interpolateEnv(match[2]!, env).text.trim();
  return LOCALE_ID.test(value) ? value : undefined;
}

/** `peekLocaleWord` of a config file; undefined when it cannot be read (that problem is told later). */
export function peekConfigFileLocaleWord(
  path: string,
  env: Record<string, string | undefined>,
): string | undefined {
  try {
    return peekLocaleWord(readFileSync(path, 'utf8'), env);
  } catch {
    return undefined;
  }
}
