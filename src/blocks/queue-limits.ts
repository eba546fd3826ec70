import type { LimitOutcome, QueueLimitValues } from '../backends/queue-backend.js';
import { type Locale, messages } from '../i18n/index.js';
import type { LimitPrevious, LimitRecord, LimitValue } from '../store/store.js';
import { formatUtc } from './format.js';
import { inCode, section } from './kit.js';
import type { Message } from './message.js';
import { escapeMrkdwn } from './mrkdwn.js';

const UNITS: [number, string][] = [
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1000, 's'],
];

/** 60000 → `1m`, 500 → `500ms`, 90000 → `90s`: the largest unit that divides it, as typed. */
export function formatLimitDuration(ms: number): string {
  for (const [size, unit] of UNITS) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** A limit's value in words: `100/m` (Celery), `concurrency 4`, `10 per 1s`, or `none`. */
export function describeLimit(kind: LimitRecord['kind'], value: LimitValue | null, locale: Locale): string {
  const t = messages(locale).limits;
  if (value === null || value === undefined) return t.none;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return t.concurrencyValue(value);
  return kind === 'rate-limit'
    ? t.rateValue(value.max, formatLimitDuration(value.durationMs))
    : String(value);
}

/** What a lift puts back: a queue's value, or each worker's rate. */
export function describePrevious(kind: LimitRecord['kind'], previous: LimitPrevious, locale: Locale): string {
  const t = messages(locale).limits;
  if ('value' in previous) return describeLimit(kind, previous.value, locale);
  const entries = Object.entries(previous.workers);
  if (entries.length === 0) return t.none;
  const rates = new Set(entries.map(([, rate]) => rate));
  if (rates.size === 1) return describeLimit(kind, entries[0]![1], locale);
  return entries.map(([worker, rate]) => t.restoreTo(worker, rate)).join(', ');
}

/** The outcome line of an approved `rate-limit` or `concurrency` (plain text). */
export function limitOutcomeLine(result: LimitOutcome, locale: Locale): string {
  const t = messages(locale).limits;
  const target = `${result.system}/${result.target}`;
  const until = result.expiresAt ? t.resultUntil(formatUtc(Date.parse(result.expiresAt), locale, false)) : '';
  if (result.answers) {
    const answers = result.answers.map((a) => t.workerAnswer(a.worker, a.answer, a.after));
    return `${t.resultCelery(result.system, result.target, answers)}${until}`;
  }
  const before = 'value' in result.previous ? result.previous.value : null;
  return `${t.resultBullmq(target, describeLimit(result.kind, before, locale), describeLimit(result.kind, result.now ?? null, locale))}${until}`;
}

/** The items of a status line: a BullMQ queue's limits read from its meta (mrkdwn, escaped). */
export function queueLimitItems(
  queue: string,
  values: QueueLimitValues | undefined,
  records: readonly LimitRecord[],
  locale: Locale,
): string[] {
  if (!values) return [];
  const t = messages(locale).limits;
  const items: string[] = [];
  const until = (kind: LimitRecord['kind']) => {
    const record = records.find((r) => r.target === queue && r.kind === kind);
    return record?.expiresAt ? formatUtc(Date.parse(record.expiresAt), locale, false) : null;
  };
  if (values.concurrency !== null)
    items.push(
      t.statusItem(
        inCode(queue, 60),
        describeLimit('concurrency', values.concurrency, locale),
        until('concurrency'),
      ),
    );
  if (values.rateLimit !== null)
    items.push(
      t.statusItem(
        inCode(queue, 60),
        describeLimit('rate-limit', values.rateLimit, locale),
        until('rate-limit'),
      ),
    );
  return items;
}

/** The status items of a Celery system: the task rate limits queue-ops set (from its store). */
export function taskLimitItems(records: readonly LimitRecord[], locale: Locale): string[] {
  const t = messages(locale).limits;
  return records.map((r) =>
    t.statusCeleryItem(
      inCode(r.target, 80),
      escapeMrkdwn(describeLimit(r.kind, r.value, locale)),
      r.expiresAt ? formatUtc(Date.parse(r.expiresAt), locale, false) : null,
    ),
  );
}

/** The alert channel's message when a limit's `--for` ran out and the monitor lifted it. */
export function limitExpiredMessage(payload: Record<string, unknown>, locale: Locale): Message {
  const t = messages(locale).limits;
  const kind = payload.kind === 'concurrency' ? 'concurrency' : 'rate-limit';
  const target = `${String(payload.system)}/${String(payload.target)}`;
  const what = `${t.kindName[kind]} ${describeLimit(kind, (payload.value ?? null) as LimitValue | null, locale)}`;
  const previous = (payload.restored ?? { value: null }) as LimitPrevious;
  const text = escapeMrkdwn(
    t.expired(target, what, describePrevious(kind, previous, locale), String(payload.setBy)),
  );
  return { text, blocks: [section(`*${escapeMrkdwn(t.expiredTitle)}*\n${text}`)] };
}
