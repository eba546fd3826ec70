import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ErrorCode, OpsError } from '../errors.js';
import { type Config, configSchema } from './schema.js';

/** Replaces `${NAME}` (and `${NAME:-default}`) with the environment's value; `$${` escapes. */
export function interpolateEnv(
  text: string,
  env: Record<string, string | undefined>,
): { text: string; missing: string[] } {
  const missing: string[] = [];
  const out = text.replace(
    /(\$?)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (match, escaped, name, fallback) => {
      if (escaped) return match.slice(1);
      const value = env[name];
      if (value !== undefined && value !== '') return value;
      if (fallback !== undefined) return fallback;
      missing.push(name);
      return '';
    },
  );
  return { text: out, missing };
}

/** `systems[1].redis` from zod's path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || '(root)';
}

export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
}

/**
 * Parses and validates config text. Every problem is named by its path; a `${VAR}` that is not
 * set is named too, since it is the usual reason a URL is empty.
 */
export function parseConfig(
  text: string,
  env: Record<string, string | undefined>,
  source = 'config',
): Config {
  const { text: interpolated, missing } = interpolateEnv(text, env);
  let raw: unknown;
  try {
    raw = parseYaml(interpolated);
  } catch (error) {
    throw new OpsError(ErrorCode.ConfigInvalid, {
      source,
      problems: [`not valid YAML: ${(error as Error).message.split('\n')[0]}`],
    });
  }
  const result = configSchema.safeParse(raw ?? {});
  if (!result.success) {
    const problems = formatIssues(result.error.issues);
    for (const name of missing) problems.push(`\${${name}} is not set in the environment`);
    throw new OpsError(ErrorCode.ConfigInvalid, { source, problems });
  }
  return deepFreeze(result.data);
}

export function loadConfigFile(path: string, env: Record<string, string | undefined>): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new OpsError(ErrorCode.ConfigInvalid, {
      source: path,
      problems: [`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`],
    });
  }
  return parseConfig(text, env, path);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
