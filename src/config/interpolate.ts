/** `${NAME}`, `${NAME:-default}`, and `$${…}` (escaped): how a config refers to the environment. */
export const ENV_REF = /(\$?)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces `${NAME}` (and `${NAME:-default}`) with the environment's value; `$${` escapes. */
export function interpolateEnv(
  text: string,
  env: Record<string, string | undefined>,
): { text: string; missing: string[] } {
  const missing: string[] = [];
  const out = text.replace(ENV_REF, (match, escaped, name, fallback) => {
    if (escaped) return match.slice(1);
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    missing.push(name);
    return '';
  });
  return { text: out, missing };
}
