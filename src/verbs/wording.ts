import type { Locale } from '../i18n/index.js';
import { formatNumber } from '../i18n/numbers.js';

/*
 * The shapes of a verb's result wording (`outcome`, `timelineOutcome` in its descriptor,
 * `VerbFacts` of src/verbs/facts.ts) and the few helpers the per-verb wording files of this
 * folder share. Below the store and the blocks, so a result is read as the plain record the
 * store keeps.
 */

/** An approved action's stored result: ids, names and counts, never job data. */
export type ActionResult = Readonly<Record<string, unknown>>;

/** What the request message's outcome line reads of a request besides its result: where it ran. */
export interface OutcomeRequest {
  readonly target: string;
  readonly params: Readonly<Record<string, unknown>>;
}

/**
 * The request message's line for a done request (plain text; the message escapes it), or
 * undefined when the result is not of the verb's own shape (the generic wording then tries).
 */
export type OutcomeWording = (
  result: ActionResult,
  request: OutcomeRequest,
  locale: Locale,
) => string | undefined;

/** A done action in the incident timeline, short: ids and names only. */
export type TimelineWording = (result: ActionResult, locale: Locale) => string;

/** A stored count in the locale's digits (`Number()` of whatever the result holds). */
export const count = (value: unknown, locale: Locale) => formatNumber(Number(value), locale);

/** A name or id cut to `max` characters: a timeline line stays one line. */
export const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The first `max` items of a stored list, and `…` when there were more. */
export const list = (values: unknown, max = 3) => {
  const items = Array.isArray(values) ? values.map(String) : [];
  return items.slice(0, max).join(', ') + (items.length > max ? ', …' : '');
};
