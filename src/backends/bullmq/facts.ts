import type { SystemFacts } from '../facts.js';

/** BullMQ, as `SystemFacts` describes systems. */
export const BULLMQ_FACTS: SystemFacts = {
  // A job id is unique only within its queue (`<prefix>:<queue>:<id>`).
  jobIdsSystemWide: false,
  // `Queue.setGlobalRateLimit` / `setGlobalConcurrency`, kept in the queue's meta hash.
  limitTarget: 'queue',
  // Every job carries its `timestamp` (and `delay`): the age is read, not sighted.
  waitingAgeFromSightings: false,
  // Each queue's active list is read on its own.
  runningAnsweredByWorkers: false,
  // Rates come from BullMQ's metrics or the finished jobs the queue keeps.
  ratesFromResults: false,
  // BullMQ's own requirement: an evicted key is a job, a lock or a queue's meta lost.
  evictionLosesJobs: true,
};
