import { createHash } from 'node:crypto';

/**
 * Error groups: failures grouped by their message's first line with the parts that vary from one
 * failure to the next put in words (`<n>`, `<uuid>`, `<hex>`, `<token>`, `<id>`, `<email>`, a URL's
 * `<path>`), so that 300 failures "FCM 503 Unavailable (token N)" are one group, not 300 of one.
 * One pure function for every place that groups: `dlq`'s groups, a retry's preview, `--group`
 * (which matches a normalized first line exactly) and the diagnosis of a slow dependency.
 */

/** The longest first line kept (a longer one is cut, with `…`). */
export const ERROR_LINE_MAX = 200;

/** The first line of a failure message, trimmed and cut at {@link ERROR_LINE_MAX}: the raw example. */
export function errorFirstLine(text: string | null | undefined): string {
  const line = (text ?? '').split(/\r?\n/, 1)[0]!.trim();
  return line.length > ERROR_LINE_MAX ? `${line.slice(0, ERROR_LINE_MAX - 1)}…` : line;
}

// The order matters: a URL's path or an e-mail address holds numbers and ids of its own, and a
// UUID is hex; each is put in words whole before the smaller rules see its parts.
const URL_PATH = /\b([a-z][a-z0-9+.-]*:\/\/[^\s/?#'"<>()]+)[/?#][^\s'"<>()]*/gi;
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const UUID = /\b[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\b/gi;
const HEX_PREFIXED = /\b0x[0-9a-f]+\b/gi;
/** A run of hex digits long enough to be a hash or an object id, with a digit and a letter in it. */
const HEX_RUN = /\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi;
/** Push tokens, API keys, base64: 20 or more characters of one word, with letters and digits. */
const TOKEN = /(?<![\w:.-])(?=[\w:.-]*[0-9])(?=[\w:.-]*[a-z])[A-Za-z0-9_][\w:.-]{18,}[A-Za-z0-9_=]=*/gi;
/**
 * A short id: letters and digits mixed in three or more runs of digits (`r7f3a9`, `a1b2c3`). A
 * letter is required: a plain number of five digits is a number (`<n>`), like one of four.
 */
const MIXED_ID = /\b(?=[0-9_-]*[a-z])(?=(?:[a-z_-]*[0-9]+){3})[a-z0-9_-]{5,}\b/gi;
/** An HTTP status kept as it is: `status 429`, `HTTP 500` … */
const STATUS_AFTER_WORD = /\b((?:http|status|code|statuscode)[\s:=]*)([1-5][0-9]{2})\b/gi;
/** … or `503 Unavailable`, `429 Too Many Requests` (a status and its reason phrase). */
const STATUS_BEFORE_PHRASE = /\b([1-5][0-9]{2})(?=\s+[A-Z][a-z])/g;
/** A number, not the digits of a word (`utf8`, `base64` stay). */
const NUMBER = /(?<![A-Za-z0-9])\d+(?:[.,]\d+)*/g;
/** Where a kept status waits while numbers go: private-use characters, never in a message's words. */
const KEPT = (i: number) => String.fromCharCode(0xe000 + i);
const KEPT_BACK = /[\ue000-\ue0ff]/g;

/**
 * A failure message's error group: its first line, with the variable parts put in words. Pure and
 * deterministic; the same text always gives the same group. HTTP statuses stay (`FCM 503
 * Unavailable`, `status 429`): they are what tells one failure from another.
 */
export function normalizeError(text: string | null | undefined): string {
  let line = errorFirstLine(text);
  const cut = line.endsWith('…') && line.length > ERROR_LINE_MAX - 1;
  if (cut) line = line.slice(0, -1);
  line = line
    .replace(URL_PATH, '$1/<path>')
    .replace(EMAIL, '<email>')
    .replace(UUID, '<uuid>')
    .replace(HEX_PREFIXED, '<hex>')
    .replace(HEX_RUN, '<hex>')
    .replace(TOKEN, '<token>')
    .replace(MIXED_ID, '<id>');
  // Statuses are set aside before numbers go, and put back after.
  const kept: string[] = [];
  const keep = (code: string) => KEPT(kept.push(code) - 1);
  line = line
    .replace(KEPT_BACK, '')
    .replace(STATUS_AFTER_WORD, (_, word: string, code: string) => word + keep(code))
    .replace(STATUS_BEFORE_PHRASE, (code: string) => keep(code))
    .replace(NUMBER, '<n>')
    .replace(KEPT_BACK, (c) => kept[c.charCodeAt(0) - 0xe000] ?? '');
  line = line.replace(/\s+/g, ' ').trim();
  return cut ? `${line}…` : line;
}

/** One error group: its normalized form, how many failures it holds, and one real first line. */
export interface ErrorGroup {
  error: string;
  count: number;
  /** One failure's own first line (the newest met), as it was. */
  example: string;
}

/** Failures' messages grouped by {@link normalizeError}, most frequent first, at most `top`. */
export function groupErrors(reasons: Iterable<string | null | undefined>, top = 5): ErrorGroup[] {
  const groups = new Map<string, ErrorGroup>();
  for (const reason of reasons) {
    const error = normalizeError(reason);
    const group = groups.get(error);
    if (group) group.count++;
    else groups.set(error, { error, count: 1, example: errorFirstLine(reason) });
  }
  return [...groups.values()]
    .sort((a, b) => b.count - a.count || a.error.localeCompare(b.error))
    .slice(0, top);
}

/**
 * A short key for one error group (`dlq`'s "Retry this group" button carries it, never the text):
 * the handler finds the group again among the queue's current groups by this key.
 */
export function errorGroupKey(group: string): string {
  return createHash('sha256').update(group).digest('hex').slice(0, 12);
}

/** Is this failure message in the group (its normalized first line is the group, exactly)? */
export function inErrorGroup(reason: string | null | undefined, group: string): boolean {
  return normalizeError(reason) === group;
}
