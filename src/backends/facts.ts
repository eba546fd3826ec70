/**
 * What a queue system is like where systems differ in a way that is not an ability: how its work
 * is addressed, where its numbers come from, what its Redis must keep. Every backend declares all
 * of them (`QueueBackend.facts`, from a constant in its own folder, which `kinds.ts` also knows by
 * the system's `type` for what only has a stored `type`: the monitor's samples). Code above
 * `backends/` reads a fact, never a system's `type`, so a new system gets the behaviour it
 * declares, not one of BullMQ's or Celery's by default.
 *
 * An ability (retry, purge, revoke, limits…) is not a fact: it is its optional method on
 * `QueueBackend`, there exactly when the system has it.
 */
export interface SystemFacts {
  /**
   * A job id names one job in the whole system (a Celery task id), not only within its queue (a
   * BullMQ job id): `job <system> <id>` needs no queue, and `dlq`'s hint names none.
   */
  readonly jobIdsSystemWide: boolean;
  /**
   * What `rate-limit` names there: `queue`, a queue's own limits kept with the queue (BullMQ's
   * global rate limit, and `concurrency`); `task`, a task's rate sent to every worker that has it
   * (Celery's `rate_limit`; no concurrency); `none`, it has no limits.
   */
  readonly limitTarget: 'queue' | 'task' | 'none';
  /**
   * Its messages carry no enqueue time: a queue's oldest waiting age counts from when the monitor
   * first saw the message at the head (`QueueCounts.oldestWaitingFrom: 'firstSeen'`), so `status`,
   * `/metrics` and the monitor read the stored head sightings for it (Celery).
   */
  readonly waitingAgeFromSightings: boolean;
  /**
   * `running()` is answered by the workers, for every queue at once (Celery's pidbox `active`): one
   * call covers the system, and it is how running work names its queue. False: `running(queues)`
   * reads only the queues asked (BullMQ's active lists).
   */
  readonly runningAnsweredByWorkers: boolean;
  /**
   * Its rates come from a result backend (Celery's), not from the finished jobs its queues keep:
   * where a stored sample that does not name its rates' source read them from.
   */
  readonly ratesFromResults: boolean;
  /**
   * A key Redis evicts is work lost, so its Redis must run `maxmemory-policy noeviction` (BullMQ);
   * the `evictionPolicy` rule reads 1 otherwise. False: its Redis is not held to it (Celery's broker).
   */
  readonly evictionLosesJobs: boolean;
}

/** The facts of a system that declares nothing special: no limits, no sightings, nothing system-wide. */
export const PLAIN_SYSTEM_FACTS: SystemFacts = {
  jobIdsSystemWide: false,
  limitTarget: 'none',
  waitingAgeFromSightings: false,
  runningAnsweredByWorkers: false,
  ratesFromResults: false,
  evictionLosesJobs: false,
};
