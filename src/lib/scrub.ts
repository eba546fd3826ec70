/** Tokens Slack issues: bot/user/app-level tokens; their shape alone marks them as secret. */
const SLACK_TOKEN = /\b(xox[abposre]|xapp)-[A-Za-z0-9-]+/g;
/** `scheme://user:password@host` for any scheme we ever print (redis, rediss, postgres…). */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^@\s/"'`]*@/gi;

/** Secrets shorter than this are not scrubbed literally: doing so would shred ordinary text. */
const MIN_LITERAL_SECRET = 4;

/**
 * Removes everything that looks like a credential from a piece of text: the password part of
 * any URL, Slack tokens, and the literal secrets given (also in their JSON-escaped form, since
 * log lines are JSON).
 */
export function scrubSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < MIN_LITERAL_SECRET) continue;
    out = out.split(secret).join('***');
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret) out = out.split(escaped).join('***');
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) out = out.split(encoded).join('***');
  }
  return out.replace(URL_CREDENTIALS, '$1***@').replace(SLACK_TOKEN, (_m, kind: string) => `${kind}-***`);
}
