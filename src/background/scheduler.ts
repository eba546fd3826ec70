import type { Logger } from '../lib/logger.js';

/**
 * One piece of periodic work, by name. `every-replica` work runs in every process (each replica's
 * own timer); `leader` work runs only in the process whose {@link Leadership} claim holds.
 */
export interface BackgroundJob {
  /** Its name in the logs: `sweep`, `home-watch`, `limit-expiry`, `monitor-tick` (src/background/jobs.ts). */
  readonly name: string;
  readonly everyMs: number;
  readonly scope: 'every-replica' | 'leader';
  run(): Promise<unknown>;
}

/** Who runs the leader's jobs: the monitor's lease (`Monitor.lease`), taken or renewed each step. */
export interface Leadership {
  /** How often the claim is made: a follower's check for the lease, the leader's renewal of it. */
  readonly everyMs: number;
  /** Takes or renews the lease: true while this process leads. */
  claim(): Promise<boolean>;
}

/**
 * A leader job is due when nine tenths of its interval have passed since its last run: a leader
 * stepping every half interval (the lease's renewal) then runs it every second step, not every
 * third when a step lands a few milliseconds early.
 */
const DUE_FRACTION = 0.9;

export interface JobScheduler {
  /**
   * Runs each every-replica job once (resolving when they have finished: a sweep at start closes
   * what ran out while the process was down), then starts their timers and the leader's steps
   * (the first one at once).
   */
  start(): Promise<void>;
  /** Stops every timer and waits for the runs in progress; starts nothing new. */
  stop(): Promise<void>;
}

/**
 * The one owner of a process's periodic work, built by its composition root. Timers are unref'd
 * (they never keep a process alive) and each every-replica job's starts at a random phase (its
 * turns do not pile onto the leader's steps), no job overlaps itself (a turn that finds its last run still
 * going is skipped), and a job that throws is logged and runs again at its next turn. Leader jobs
 * run in the order given, in one step after a successful claim; one that failed is due again at
 * the next step.
 */
export function createJobScheduler(deps: {
  jobs: readonly BackgroundJob[];
  /** Required when a job's scope is `leader`. */
  leadership?: Leadership;
  logger: Logger;
  /** The clock the leader jobs' turns are counted on (the runtime's, so tests can move it). */
  now?: () => number;
}): JobScheduler {
  const logger = deps.logger.child({ component: 'background' });
  const now = deps.now ?? Date.now;
  const everyReplica = deps.jobs.filter((job) => job.scope === 'every-replica');
  const leaderJobs = deps.jobs.filter((job) => job.scope === 'leader');
  if (leaderJobs.length > 0 && !deps.leadership) throw new Error('leader jobs need a leadership');
  const running = new Map<string, Promise<void>>();
  const lastRun = new Map<string, number>();
  const timers: NodeJS.Timeout[] = [];
  let stopped = false;

  /**
   * One run of `job`, unless its last one is still going: its error is logged, never thrown. A run
   * that succeeds counts from `startedAt` (a leader job: from its step's start, before the claim).
   */
  function turn(job: BackgroundJob, startedAt = now()): Promise<void> {
    const busy = running.get(job.name);
    if (busy) return busy;
    const run = job
      .run()
      .then(() => {
        lastRun.set(job.name, startedAt);
      })
      .catch((error: unknown) => {
        logger.warn({ err: error, job: job.name }, 'background job failed; it runs again at its next turn');
      })
      .finally(() => running.delete(job.name));
    running.set(job.name, run);
    return run;
  }

  /**
   * One step of the leader's loop: the claim, then each leader job that is due, in order. Every
   * replica runs it, on the lease's interval, like any every-replica job.
   */
  const leaderStep: BackgroundJob = {
    name: 'leader-step',
    everyMs: deps.leadership?.everyMs ?? 0,
    scope: 'every-replica',
    async run() {
      const stepAt = now();
      if (!(await (deps.leadership as Leadership).claim())) return;
      for (const job of leaderJobs) {
        if (stopped) return;
        if (stepAt - (lastRun.get(job.name) ?? Number.NEGATIVE_INFINITY) < job.everyMs * DUE_FRACTION)
          continue;
        await turn(job, stepAt);
      }
    },
  };

  /** A turn of `job` every `everyMs`, the first one `phaseMs` later than that. */
  function every(job: BackgroundJob, phaseMs = 0): void {
    const repeat = () => {
      const timer = setInterval(() => {
        if (!stopped) void turn(job);
      }, job.everyMs);
      timer.unref();
      timers.push(timer);
    };
    if (phaseMs === 0) {
      repeat();
      return;
    }
    const first = setTimeout(() => {
      if (stopped) return;
      void turn(job);
      repeat();
    }, job.everyMs + phaseMs);
    first.unref();
    timers.push(first);
  }

  return {
    async start() {
      if (stopped || timers.length > 0) return;
      await Promise.all(everyReplica.map((job) => turn(job)));
      if (stopped) return;
      // Each at a phase of its own: a job whose turns fell on the leader's steps (the Home tabs'
      // look, once a monitor interval, is every second step) lengthened the steps that renew the
      // lease, and a leader slow enough loses it.
      for (const job of everyReplica) every(job, 1 + Math.floor(Math.random() * (job.everyMs / 2)));
      if (leaderJobs.length === 0) return;
      void turn(leaderStep);
      every(leaderStep);
    },
    async stop() {
      stopped = true;
      for (const timer of timers.splice(0)) clearInterval(timer);
      await Promise.all(running.values());
    },
  };
}
