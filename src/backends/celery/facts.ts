import type { SystemFacts } from '../facts.js';

/** Celery on Redis, as `SystemFacts` describes systems. */
export const CELERY_FACTS: SystemFacts = {
  // A task id is a UUID, unique across the app's queues.
  jobIdsSystemWide: true,
  // `celery control rate_limit`: per task, on every worker that has it registered.
  limitTarget: 'task',
  // kombu's messages carry no enqueue time; the monitor's head sightings stand in for it.
  waitingAgeFromSightings: true,
  // pidbox `active` is answered by each worker for all the queues it consumes.
  runningAnsweredByWorkers: true,
  // Rates come from `date_done` of the result backend's results.
  ratesFromResults: true,
  // Celery's broker has never been held to `noeviction` by the `evictionPolicy` rule.
  evictionLosesJobs: false,
};
