/** Tokens Slack issues: bot/user/app-level tokens; their shape alone marks them as secret. */
const SLACK_TOKEN = /\b(xox[abposre]|xapp)-[A-Za-z0-9-]+/g;
/**
 * `scheme://user:password@host` for any scheme we ever print (redis, rediss, postgres, https…).
 * The password may hold an unencoded `/` or space (ioredis and pg take it as typed), so with a
 * `:` in the user part the match runs over them to the first `@` followed by a host. It may take
 * a little ordinary text with it (`redis://h:6379 … admin@x`): less text is better than a leak.
 */
const URL_CREDENTIALS_WITH_PASSWORD =
  /\b([a-z][a-z0-9+.-]*:\/\/)[^@\s/"'`:]*:[^\n"'`]{0,200}?@(?=[^@\s"'`]*(?:[\s"'`]|$))/gi;
/** `scheme://user@host` or `scheme://token@host`: whatever sits before the `@` is a credential. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^@\s/"'`]*@/gi;
/**
 * `password=…`, `api_key=…`, `token=…` in a query string or a `key=value` error text (HTTP
 * clients put them in the URLs they quote; ioredis and pg accept `?password=`).
 */
const SECRET_PARAMS =
  /\b((?:[a-z0-9]+[_-])*(?:password|passwd|pwd|secret|token|apikey|signature|sig|credentials?)|(?:[a-z0-9]+[_-])+key)=([^&\s"'`#]+)/gi;
/** `Authorization: Bearer …` and `Basic …` as HTTP clients print them. */
const AUTH_SCHEME = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/g;

/** Secrets shorter than this are not scrubbed literally: doing so would shred ordinary text. */
const MIN_LITERAL_SECRET = 4;

/**
 * Removes everything that looks like a credential from a piece of text: the password part of
 * any URL, `password=`/`token=`/`api_key=` parameters, bearer tokens, Slack tokens, and the
 * literal secrets given (also in their JSON-escaped form, since log lines are JSON). Used for
 * every log line and for job error lines shown in Slack.
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
  return out
    .replace(URL_CREDENTIALS_WITH_PASSWORD, '$1***@')
    .replace(URL_CREDENTIALS, '$1***@')
    .replace(SECRET_PARAMS, '$1=***')
    .replace(AUTH_SCHEME, '$1 ***')
    .replace(SLACK_TOKEN, (_m, kind: string) => `${kind}-***`);
}
