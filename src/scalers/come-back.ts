import type { LiveWorker, QueueBackend } from '../backends/queue-backend.js';
import type { ComeBack, RestartPlan } from './types.js';

/**
 * Who answers now: Celery's `ping` (with `stats` for uptime and pool pids), or BullMQ's worker
 * list (the CLIENT LIST names `Queue.getWorkers` reads, with each connection's age). A worker with
 * several queues is one worker.
 */
export function liveWorkersOf(backend: Pick<QueueBackend, 'liveWorkers' | 'workers'>) {
  return async (): Promise<LiveWorker[]> => {
    if (backend.liveWorkers) return backend.liveWorkers();
    const seen = new Map<string, LiveWorker>();
    for (const w of await backend.workers()) {
      const age = Number(w.details?.ageSeconds ?? w.details?.uptimeSeconds);
      const prior = seen.get(w.name);
      const upSeconds = Number.isFinite(age) ? Math.max(age, prior?.upSeconds ?? 0) : prior?.upSeconds;
      seen.set(w.name, { name: w.name, ...(upSeconds === undefined ? {} : { upSeconds }) });
    }
    return [...seen.values()].sort((a, b) => a.name.localeCompare(b.name));
  };
}

/** `celery@worker-*` as a test of a name: `*` is any run of characters, everything else itself. */
export function namePattern(patterns: readonly string[]): (name: string) => boolean {
  const regexes = patterns.map(
    (p) =>
      new RegExp(
        `^${p
          .split('*')
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ),
  );
  return (name) => regexes.some((r) => r.test(name));
}

/**
 * Which answering workers belong to the group: for a Celery pool the workers it restarts, else
 * the names `workerNames` matches, else every worker of the system; undefined: nothing to check.
 */
export function groupMembership(plan: RestartPlan): ((name: string) => boolean) | undefined {
  if (plan.workerNames) return plan.workerNames.length === 0 ? undefined : namePattern(plan.workerNames);
  if (plan.type === 'celery-pool') {
    const names = new Set(plan.targets.map((t) => t.name));
    return (name) => names.has(name);
  }
  return () => true;
}

/** Seconds of slack for clocks: a worker that started just as the restart began is new. */
const SLACK_SECONDS = 2;

/**
 * One reading after the restart, judged against the one before it. A worker is back when it
 * answers as a new process (its uptime is shorter than the time since the restart began) or,
 * after `pool_restart` (which keeps the process), when it answers; a worker whose uptime is not
 * known counts as back when it answers.
 */
export function judgeComeBack(input: {
  before: readonly LiveWorker[];
  now: readonly LiveWorker[];
  /** Seconds since the restart began. */
  elapsedSeconds: number;
  /** Workers sent `pool_restart`: their process stays, their pool processes are replaced. */
  poolRestarted: ReadonlySet<string>;
  member: (name: string) => boolean;
}): Omit<ComeBack, 'waitedSeconds'> {
  const fresh = (w: LiveWorker) =>
    w.upSeconds === undefined || w.upSeconds <= input.elapsedSeconds + SLACK_SECONDS;
  const nowByName = new Map(input.now.filter((w) => input.member(w.name)).map((w) => [w.name, w]));
  const beforeNames = new Set(input.before.map((w) => w.name));
  const back: string[] = [];
  const notRestarted: string[] = [];
  const missing: string[] = [];
  for (const prior of input.before) {
    const seen = nowByName.get(prior.name);
    if (!seen) missing.push(prior.name);
    // pool_restart keeps the worker's process; billiard replaces each pool process when it is
    // next free (an idle one within seconds, a busy one after its task), so answering is enough.
    else if (input.poolRestarted.has(prior.name) || fresh(seen)) back.push(prior.name);
    else notRestarted.push(prior.name);
  }
  const newcomers = [...nowByName.values()]
    .filter((w) => !beforeNames.has(w.name) && fresh(w))
    .map((w) => w.name);
  return {
    checked: true,
    before: input.before.map((w) => w.name),
    back,
    fresh: newcomers,
    notRestarted,
    missing,
    complete: notRestarted.length === 0 && back.length + newcomers.length >= input.before.length,
  };
}

export interface ComeBackDeps {
  plan: RestartPlan;
  read: () => Promise<LiveWorker[]>;
  /** The group's workers as they answered just before the restart. */
  before: readonly LiveWorker[];
  /** Workers that refused the restart (pool restarts off): not waited for, their answer says why. */
  refused?: ReadonlySet<string>;
  /** When the restart began (epoch ms). */
  startedAt: number;
  /** Between two readings; default 1 s. */
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * Reads who answers until every worker that answered before is back (or replaced by a new one),
 * or the group's timeout passes, and says who is back and who is not. A reading that fails (the
 * broker busy as workers reconnect) is simply tried again.
 */
export async function awaitComeBack(deps: ComeBackDeps): Promise<ComeBack> {
  const member = groupMembership(deps.plan);
  const waited = () => Math.round((Date.now() - deps.startedAt) / 1000);
  if (!member)
    return {
      checked: false,
      before: [],
      back: [],
      fresh: [],
      notRestarted: [],
      missing: [],
      complete: true,
      waitedSeconds: 0,
    };
  const poolRestarted = new Set(
    deps.plan.targets.filter((t) => t.method === 'pool_restart').map((t) => t.name),
  );
  const before = deps.before.filter((w) => member(w.name) && !deps.refused?.has(w.name));
  const deadline = deps.startedAt + deps.plan.timeoutSeconds * 1000;
  let judged: Omit<ComeBack, 'waitedSeconds'> | undefined;
  for (;;) {
    try {
      const now = await deps.read();
      judged = judgeComeBack({
        before,
        now,
        elapsedSeconds: (Date.now() - deps.startedAt) / 1000,
        poolRestarted,
        member,
      });
    } catch (error) {
      if (Date.now() >= deadline && !judged) throw error;
    }
    if (judged?.complete || Date.now() >= deadline || deps.signal?.aborted) break;
    await new Promise((resolve) => setTimeout(resolve, deps.pollMs ?? 1000));
  }
  return { ...judged!, waitedSeconds: waited() };
}
