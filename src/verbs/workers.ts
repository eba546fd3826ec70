import { messages } from '../i18n/index.js';
import { clip, count, list, type TimelineWording } from './wording.js';

/*
 * The timeline's words for the worker-group and running-task actions (scale, restart, revoke,
 * fail). Their request messages word the full report (`report` in the descriptor, src/blocks/).
 */

export const scaleTimeline: TimelineWording = (result, locale) => {
  const o = messages(locale).timeline.events.outcome;
  const targets = Array.isArray(result.targets) ? (result.targets as Record<string, unknown>[]) : [];
  const shown = (v: unknown) => (typeof v === 'number' ? count(v, locale) : '?');
  const changes = targets
    .slice(0, 3)
    .map((t) => o.change(clip(String(t.name), 60), shown(t.before), shown(t.after)));
  if (targets.length > 3) changes.push('…');
  const scaler = result.autoscaler as
    | { kind: string; name: string; after: { min: number; max: number } }
    | undefined;
  if (scaler)
    changes.push(
      o.autoscaler(
        scaler.kind,
        clip(scaler.name, 60),
        count(scaler.after.min, locale),
        count(scaler.after.max, locale),
      ),
    );
  return o.scaled(count(result.replicas, locale), changes.join(', '));
};

export const revokeTimeline: TimelineWording = (result, locale) => {
  const o = messages(locale).timeline.events.outcome;
  const ids = Array.isArray(result.ids) ? result.ids : [];
  const parts = [
    o.revoked(count(ids.length, locale), result.terminate === true, String(result.signal ?? 'TERM')),
    o.answered(count(Array.isArray(result.answers) ? result.answers.length : 0, locale)),
  ];
  if (Array.isArray(result.stillRunning) && result.stillRunning.length > 0)
    parts.push(o.stillRunning(list(result.stillRunning)));
  return parts.join(' · ');
};

export const restartTimeline: TimelineWording = (result, locale) => {
  const o = messages(locale).timeline.events.outcome;
  const back = result.comeBack as
    | { checked?: boolean; before?: unknown[]; back?: unknown[]; fresh?: unknown[]; complete?: boolean }
    | undefined;
  if (!back?.checked) return o.restartedUnchecked;
  const returned = (back.back?.length ?? 0) + (back.fresh?.length ?? 0);
  return o.restarted(
    count(returned, locale),
    count(back.before?.length ?? 0, locale),
    back.complete === true,
  );
};

export const failTimeline: TimelineWording = (result, locale) => {
  const o = messages(locale).timeline.events.outcome;
  const parts = [o.failedJob(clip(String(result.id), 80), String(result.before ?? '?'))];
  if (result.lockWasHeld === true) parts.push(o.lockWasHeld);
  return parts.join(' · ');
};
