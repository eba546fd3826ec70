import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve as resolvePath } from 'node:path';
import { isPair, isScalar, isSeq, parseDocument, parse as parseYaml, visit } from 'yaml';
import type { $ZodIssue } from 'zod/v4/core';
import { ErrorCode, OpsError } from '../errors.js';
import { config as englishProblems } from '../i18n/en/config.js';
import { isLocale, type Locale, localeEntry } from '../i18n/locales.js';
import { ENV_REF } from './interpolate.js';
import { peekLocale } from './locale-peek.js';
import { type Config, type ConfigProblems, configSchemaFor } from './schema.js';

/**
 * `systems[1].redis` from zod's path. A key with a space, a control or an invisible character in
 * it (or none at all) is quoted, so that a person can see which key is meant.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else {
      const key = String(part);
      const shown = key === '' || /[\s\p{C}]/u.test(key) ? JSON.stringify(key) : key;
      out += out ? `.${shown}` : shown;
    }
  }
  return out || '(root)';
}

/** A problem on one line: a value quoted into it (a prefix, a name) may hold line breaks. */
function oneLine(problem: string): string {
  return problem.replace(
    /[\p{Cc}\u2028\u2029]/gu,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export function formatIssues(issues: readonly $ZodIssue[], p: ConfigProblems = englishProblems): string[] {
  return issues.flatMap((issue) =>
    // One line per unknown key, at the key's own path: `systems[1].bogus: unknown key`.
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => `${formatPath([...issue.path, key])}: ${p.unknownKey}`)
      : [`${formatPath(issue.path)}: ${issue.message}`],
  );
}

/**
 * The locale a config's problems are told in: the one it asks for, even when the rest of it is
 * wrong (a Turkish team reads why its config is refused in Turkish), else English.
 */
function problemsLocale(raw: unknown, text: string, env: Record<string, string | undefined>): Locale {
  const asked = (raw as { locale?: unknown } | null | undefined)?.locale;
  if (isLocale(asked)) return asked;
  return raw === undefined ? (peekLocale(text, env) ?? 'en') : 'en';
}

/**
 * Parses and validates config text. Every problem is named by its path; a `${VAR}` that is not
 * set is a problem too, named with the path it sits at (`${VAR:-}` makes a variable optional).
 *
 * `${VAR}` is substituted into the parsed YAML values, not into the text: an environment value
 * like `{hs}` (a Redis Cluster hash-tag prefix) or a password with `: ` or ` #` stays one string
 * instead of turning into YAML structure. A value that is exactly `${VAR}`, unquoted, is read as
 * YAML would read it (so `inspectTimeoutMs: ${T}` is a number); quoted, it stays a string.
 */
export function parseConfig(
  text: string,
  env: Record<string, string | undefined>,
  source = 'config',
): Config {
  const { raw, missing, fromEnv, yamlError } = parseWithEnv(text, env);
  const locale = problemsLocale(raw, text, env);
  const { catalog, zodErrors } = localeEntry(locale);
  const p = catalog.config;
  if (yamlError !== undefined) {
    throw new OpsError(ErrorCode.ConfigInvalid, {
      source,
      locale,
      problems: [oneLine(p.notYaml(yamlError))],
    });
  }
  const missingPaths = new Set(missing.map((m) => m.path));
  // zod's own wording (a wrong type, a number out of range) in the config's locale too. Without
  // its JIT: a config is read once a process, and zod would write (and V8 parse and compile) a
  // parser function for each object of the schema first, on every start of the command line.
  const result = configSchemaFor(p).safeParse(raw ?? {}, {
    jitless: true,
    ...(zodErrors ? { error: zodErrors() } : {}),
  });
  const problems = result.success
    ? []
    : // An unset variable is the cause of whatever the schema says about the same path.
      formatIssues(result.error.issues, p).filter(
        (line) => !missingPaths.has(line.slice(0, line.indexOf(': '))),
      );
  for (const { path, name } of missing) problems.push(`${path}: ${p.envNotSet(name)}`);
  if (result.success) problems.push(...literalPagerKeys(result.data, fromEnv, p));
  // zod skips the schema's cross-field checks once a field is wrong; repeat the one people hit.
  if (!result.success) {
    for (const line of duplicateNames(raw, p)) if (!problems.includes(line)) problems.push(line);
  }
  if (!result.success || problems.length > 0) {
    throw new OpsError(ErrorCode.ConfigInvalid, { source, locale, problems: problems.map(oneLine) });
  }
  return deepFreeze(result.data);
}

/**
 * A pager's key pages people: written into the file it would sit in git and every copy of the
 * config. It must be an environment reference (`routingKey: "${PD_ROUTING_KEY}"`).
 */
function literalPagerKeys(config: Config, fromEnv: ReadonlySet<string>, p: ConfigProblems): string[] {
  return config.paging.flatMap((pager, index) => {
    const path = `paging[${index}].${pager.type === 'pagerduty' ? 'routingKey' : 'apiKey'}`;
    return fromEnv.has(path) ? [] : [`${path}: ${p.pagerKeyFromEnv}`];
  });
}

/** YAML text → plain data with `${VAR}` substituted per scalar; unset variables with their paths. */
function parseWithEnv(
  text: string,
  env: Record<string, string | undefined>,
): {
  raw: unknown;
  missing: { path: string; name: string }[];
  /** The paths of the values that came from the environment. */
  fromEnv: Set<string>;
  yamlError?: string;
} {
  // Each reference becomes an inert word that is a valid plain scalar anywhere, even inside
  // `[…]` or `{…}`, so that the YAML parses the way it was written.
  const nonce = randomBytes(4).toString('hex');
  const refs: { name: string; fallback?: string; written: string }[] = [];
  const placeheld = text.replace(ENV_REF, (match, escaped: string, name: string, fallback?: string) => {
    if (escaped) return match;
    refs.push({ name, fallback, written: match });
    return `qoenv${nonce}r${refs.length - 1}e`;
  });
  const token = new RegExp(`qoenv${nonce}r(\\d+)e`, 'g');
  const wholeToken = new RegExp(`^qoenv${nonce}r(\\d+)e$`);
  // `logLevel: 'error'`: yaml's warnings (a key that is a list) would go to the terminal through
  // process.emitWarning; the schema says what is wrong with such a key instead.
  // A key, or YAML the parser quotes back, is named as written (`${X}`), never as its stand-in.
  const asWritten = (s: string) => s.replace(token, (_m, index: string) => refs[Number(index)]!.written);
  const doc = parseDocument(placeheld, { logLevel: 'error' });
  if (doc.errors.length > 0)
    return {
      raw: undefined,
      missing: [],
      fromEnv: new Set(),
      yamlError: asWritten(doc.errors[0]!.message.split('\n')[0]!),
    };

  const missing: { path: string; name: string }[] = [];
  const fromEnv = new Set<string>();
  visit(doc, {
    Scalar(key, node, ancestors) {
      if (key === 'key' || typeof node.value !== 'string') return;
      const original = node.value;
      // `$${X}` escapes a reference: left untouched above, unescaped here.
      const unescapeRefs = (s: string) => s.replace(/\$\$\{/g, '${');
      if (!original.includes(`qoenv${nonce}`)) {
        if (original.includes('$${')) node.value = unescapeRefs(original);
        return;
      }
      // A key holding a reference is named as written (`${X}redis`), as the schema's problems name it.
      const path = asWritten(formatPath(pathOf(ancestors, node)));
      fromEnv.add(path);
      const envValue = (index: string): string => {
        const ref = refs[Number(index)]!;
        const value = env[ref.name];
        if (value !== undefined && value !== '') return value;
        if (ref.fallback !== undefined) return ref.fallback;
        missing.push({ path, name: ref.name });
        return '';
      };
      const whole = wholeToken.exec(original);
      if (whole && node.type === 'PLAIN') {
        node.value = readScalar(envValue(whole[1]!));
        return;
      }
      // Unescaped before the values go in: a value's own `$${` (a password) is not config text.
      node.value = unescapeRefs(original).replace(token, (_m, index: string) => envValue(index));
    },
  });
  try {
    return { raw: renameKeys(doc.toJS({ maxAliasCount: 100 }), asWritten), missing, fromEnv };
  } catch (error) {
    // An alias to no anchor, or an alias bomb (`maxAliasCount`): yaml finds both only here.
    if (!(error instanceof ReferenceError)) throw error;
    return { raw: undefined, missing: [], fromEnv, yamlError: asWritten(error.message.split('\n')[0]!) };
  }
}

/** The data with every map key passed through `rename` (keys are never substituted, only named). */
function renameKeys(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => renameKeys(item, rename));
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype)
    return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    // defineProperty: a key `__proto__` stays a key (and an unknown one), as yaml made it.
    Object.defineProperty(out, rename(key), {
      value: renameKeys(inner, rename),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** Same wording as the schema's own check, for when zod did not get that far. */
function duplicateNames(raw: unknown, p: ConfigProblems): string[] {
  const systems = (raw as { systems?: unknown } | null)?.systems;
  if (!Array.isArray(systems)) return [];
  const seen = new Map<string, number>();
  const out: string[] = [];
  systems.forEach((system: unknown, index) => {
    const name = (system as { name?: unknown } | null)?.name;
    if (typeof name !== 'string') return;
    const first = seen.get(name);
    if (first === undefined) seen.set(name, index);
    else out.push(`systems[${index}].name: ${p.duplicateSystem(name, `systems[${first}]`)}`);
  });
  return out;
}

/** How YAML reads an unquoted scalar: numbers, booleans and empty (null); anything else stays text. */
function readScalar(value: string): unknown {
  try {
    const parsed: unknown = parseYaml(value);
    if (parsed === null || typeof parsed === 'number' || typeof parsed === 'boolean') return parsed;
  } catch {
    // Not a scalar YAML would parse: it is text.
  }
  return value;
}

/** The data path (`systems`, 1, `redis`) of a node, from the ancestors `visit` passes. */
function pathOf(ancestors: readonly unknown[], node: unknown): PropertyKey[] {
  const chain = [...ancestors, node];
  const path: PropertyKey[] = [];
  for (let i = 0; i < chain.length - 1; i++) {
    const parent = chain[i];
    const child = chain[i + 1];
    if (isSeq(parent)) path.push(parent.items.indexOf(child as never));
    else if (isPair(parent) && parent.value === child) {
      path.push(isScalar(parent.key) ? String(parent.key.value) : String(parent.key));
    }
  }
  return path;
}

export function loadConfigFile(path: string, env: Record<string, string | undefined>): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new OpsError(ErrorCode.ConfigInvalid, {
      source: path,
      problems: [
        englishProblems.cannotRead(path, (error as NodeJS.ErrnoException).code ?? (error as Error).message),
      ],
    });
  }
  return parseConfig(text, env, path);
}

/**
 * The config with its relative file paths (a `sqlite:` store, the purge archive, the audit key
 * and witness files) made absolute against `cwd`, the directory the command line was run in: so
 * a process given another working directory (a test, a wrapper) writes there, not wherever Node
 * happens to run.
 */
export function withPathsFrom(config: Config, cwd: string): Config {
  const absolute = (path: string) => (isAbsolute(path) ? path : resolvePath(cwd, path));
  const sqlite = /^sqlite:(.+)$/.exec(config.store)?.[1];
  const store = sqlite !== undefined && sqlite !== ':memory:' ? `sqlite:${absolute(sqlite)}` : config.store;
  const copy = structuredClone(config) as Config & { store: string };
  copy.store = store;
  copy.archive.dir = absolute(config.archive.dir);
  if (config.audit.keyFile !== undefined) copy.audit.keyFile = absolute(config.audit.keyFile);
  if (config.audit.witnessFile !== undefined) copy.audit.witnessFile = absolute(config.audit.witnessFile);
  copy.audit.previousKeyFiles = config.audit.previousKeyFiles.map(absolute);
  return deepFreeze(copy);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
