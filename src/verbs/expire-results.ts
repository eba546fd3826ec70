import { ttlText } from '../config/duration.js';
import { messages } from '../i18n/index.js';
import { formatNumber } from '../i18n/numbers.js';
import { count, type OutcomeWording, type TimelineWording } from './wording.js';

export const expireResultsOutcome: OutcomeWording = (result, request, locale) =>
  typeof result.expired === 'number'
    ? messages(locale).results.expired(
        request.target,
        formatNumber(result.expired, locale),
        ttlText(Number(result.ttlSeconds)),
        count(result.results ?? 0, locale),
      )
    : undefined;

export const expireResultsTimeline: TimelineWording = (result, locale) =>
  messages(locale).timeline.events.result.expired(
    count(result.expired, locale),
    ttlText(Number(result.ttlSeconds)),
    count(result.results, locale),
  );
