import { messages } from '../i18n/index.js';
import { count, type OutcomeWording, type TimelineWording } from './wording.js';

export const retryOutcome: OutcomeWording = (result, request, locale) => {
  const ids = (result.ids ?? {}) as Record<string, string>;
  // Jobs sent again under new ids are worded so: the old → new map is in the audit trail.
  const renamed = Object.entries(ids).some(([from, to]) => from !== to);
  return messages(locale).approvals.resultRetried(
    request.target,
    Number(result.retried ?? 0),
    Number(result.skipped ?? 0),
    renamed,
    Number(result.newSincePreview ?? 0),
  );
};

// The queue is the event's target already; the id map can hold a thousand ids.
export const retryTimeline: TimelineWording = (result, locale) => {
  const r = messages(locale).timeline.events.result;
  const parts = [r.retried(count(result.retried, locale))];
  if (Number(result.skipped) > 0) parts.push(r.skipped(count(result.skipped, locale)));
  if (Number(result.newSincePreview) > 0)
    parts.push(r.newSincePreview(count(result.newSincePreview, locale)));
  return parts.join(' · ');
};
