import { formatBytes, formatDuration, formatNumber } from '../blocks/format.js';
import { inCode } from '../blocks/kit.js';
import { escapeMrkdwn } from '../blocks/mrkdwn.js';
import { type Locale, messages } from '../i18n/index.js';
import type { EvidenceLine } from './types.js';

/** `mrkdwn` for Slack (names as code, mentions), `plain` for `--json` (the text as it reads). */
export type Wording = 'mrkdwn' | 'plain';

/** A time: the clock on the day of `now`, else the date too; always UTC. */
export function clock(at: number, now: number, locale: Locale): string {
  const iso = new Date(at).toISOString();
  const sameDay = iso.slice(0, 10) === new Date(now).toISOString().slice(0, 10);
  return messages(locale).status.units.utc(
    sameDay ? iso.slice(11, 16) : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`,
  );
}

/** One param as its line shows it, by the naming convention of `EvidenceLine`. */
function formatParam(
  key: string,
  value: string | number,
  now: number,
  locale: Locale,
  wording: Wording,
): string {
  if (typeof value === 'number') {
    if (key.endsWith('At')) return clock(value, now, locale);
    if (key.endsWith('Bytes')) return formatBytes(value, locale);
    if (key === 'seconds' || key.endsWith('Seconds')) return formatDuration(value, locale);
    return formatNumber(value, locale);
  }
  if (key === 'who')
    return value
      .split(' ')
      .map((id) => (wording === 'plain' ? id : id.startsWith('S') ? `<!subteam^${id}>` : `<@${id}>`))
      .join(' ');
  if (wording === 'plain') return value;
  if (key === 'by') return escapeMrkdwn(value);
  return `\`${inCode(value, key === 'error' ? 120 : 80)}\``;
}

/** An evidence line in words, in the locale. */
export function evidenceText(line: EvidenceLine, now: number, locale: Locale, wording: Wording): string {
  const say = messages(locale).why.evidence[line.code];
  if (!say) return line.code;
  const p: Record<string, string> = {};
  const n: Record<string, number> = {};
  for (const [key, value] of Object.entries(line.params)) {
    p[key] = formatParam(key, value, now, locale, wording);
    if (typeof value === 'number') n[key] = value;
  }
  return say(p, n);
}
