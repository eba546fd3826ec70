import { messages } from '../i18n/index.js';
import { clip, count, type OutcomeWording, type TimelineWording } from './wording.js';

export const purgeOutcome: OutcomeWording = (result, _request, locale) =>
  typeof result.purged === 'number'
    ? messages(locale).purge.resultPurged(
        result.purged,
        Number(result.archived),
        String(result.archivePath),
        String(result.purgeId),
        Number(result.newSincePreview ?? 0),
      )
    : undefined;

export const purgeTimeline: TimelineWording = (result, locale) => {
  const r = messages(locale).timeline.events.result;
  const parts = [r.purged(count(result.purged, locale)), r.archived(count(result.archived, locale))];
  if (typeof result.purgeId === 'string') parts.push(r.undoWith(clip(result.purgeId, 40)));
  if (Number(result.newSincePreview) > 0)
    parts.push(r.newSincePreview(count(result.newSincePreview, locale)));
  return parts.join(' · ');
};

export const undoOutcome: OutcomeWording = (result, _request, locale) =>
  typeof result.restored === 'number'
    ? messages(locale).purge.resultRestored(
        result.restored,
        String(result.purgeId),
        Number(result.alreadyThere ?? 0),
      )
    : undefined;

export const undoTimeline: TimelineWording = (result, locale) =>
  messages(locale).timeline.events.result.undone(
    count(result.restored, locale),
    count(result.alreadyThere ?? 0, locale),
    clip(String(result.purgeId ?? '?'), 40),
  );
