import { type Locale, messages } from '../i18n/index.js';
import {
  type ActionResult,
  count,
  type OutcomeRequest,
  type OutcomeWording,
  type TimelineWording,
} from './wording.js';

/** The workers that answered a Celery pause or resume, as stored. */
const workersOf = (result: ActionResult) =>
  Array.isArray(result.workersAnswered) ? (result.workersAnswered as string[]) : undefined;

/**
 * Whether the queue is paused now, as the action read it back: a Celery pause whose workers had
 * not all stopped consuming when the settle wait ran out is sent, not done, and must not read as
 * "paused".
 */
const isPausedIn = (result: ActionResult) =>
  typeof result.isPaused === 'boolean' ? result.isPaused : undefined;

const systemOf = (request: OutcomeRequest) =>
  String(request.params.system ?? request.target.split('/')[0] ?? '');

export const pauseOutcome: OutcomeWording = (result, request, locale) => {
  const t = messages(locale).approvals;
  return isPausedIn(result) === false
    ? t.resultPauseUnsettled(request.target, systemOf(request), workersOf(result))
    : t.resultPaused(request.target, workersOf(result));
};

export const resumeOutcome: OutcomeWording = (result, request, locale) => {
  const t = messages(locale).approvals;
  return isPausedIn(result) === true
    ? t.resultResumeUnsettled(request.target, systemOf(request), workersOf(result))
    : t.resultResumed(request.target, workersOf(result));
};

const answered = (result: ActionResult, locale: Locale) =>
  Array.isArray(result.workersAnswered) ? count(result.workersAnswered.length, locale) : undefined;

export const pauseTimeline: TimelineWording = (result, locale) =>
  messages(locale).timeline.events.outcome.paused(answered(result, locale));

export const resumeTimeline: TimelineWording = (result, locale) =>
  messages(locale).timeline.events.outcome.resumed(answered(result, locale));
