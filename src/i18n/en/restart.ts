/**
 * Strings of `restart <system>/<group>`: its preview (stored with the request) and its outcome,
 * both plain text the request message escapes as a whole.
 */
const list = (names: readonly string[], max = 8) =>
  names.slice(0, max).join(', ') + (names.length > max ? `, … (${names.length} in all)` : '');
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What a Celery worker must run with for `pool_restart`. */
const POOL_RESTARTS_SETTING = 'worker_pool_restarts=True (CELERYD_POOL_RESTARTS in old-style configs)';

export const restart = {
  usage: '/queue restart <system>/<group>',
  summary:
    'restart a worker group (Kubernetes rollout, docker compose restart, Celery pool_restart or shutdown), then check its workers came back (policy and approval apply)',
  noTargets: (target: string) => `no worker of ${target} answered, so there is nothing to restart`,

  // Preview
  preview: (target: string, type: string, actions: string[], check: string) =>
    `restart ${target} (${type}): ${actions.join('; ')}. ${check}`,
  rollout: (name: string, replicas: number | null) =>
    `rollout restart of ${name} (${replicas === null ? '?' : plural(replicas, 'replica')}): new pods replace the old ones as its strategy allows`,
  composeRestart: (command: string, running: number | null) =>
    `${command} (${running === null ? '?' : plural(running, 'running container')})`,
  poolRestart: (workers: string[]) => `pool_restart of ${list(workers)} (their pool processes are replaced)`,
  shutdown: (workers: string[]) => `shutdown of ${list(workers)}, for their supervisor to start them again`,
  shutdownFallback: (workers: string[]) =>
    `shutdown of ${list(workers)}, started without ${POOL_RESTARTS_SETTING}, for their supervisor to start them again`,
  checkSystem: (seconds: number) =>
    `Then waits up to ${seconds} s for every worker of the system that answers now to answer again as a new process.`,
  checkPool: (seconds: number) => `Then waits up to ${seconds} s for them to answer again.`,
  checkNames: (patterns: string[], seconds: number) =>
    `Then waits up to ${seconds} s for the workers named ${patterns.join(', ')} to answer again.`,
  checkNone: 'Its workers are not checked afterwards (workerNames: []).',

  // Outcome
  rolloutDone: (name: string, available: number, desired: number) =>
    `rollout of ${name} complete: ${available} of ${desired} pods updated and available`,
  rolloutPending: (name: string, updated: number, available: number, desired: number, total: number) =>
    `rollout of ${name} not complete: ${updated} of ${desired} updated, ${available} available, ${total} pods in all`,
  composeDone: (service: string, before: number | null, after: number | null) =>
    `docker compose restart ${service}: ${before ?? '?'} → ${after ?? '?'} running containers`,
  workerAnswer: (worker: string, method: string, answer: string) =>
    `${worker}: ${method} (answered “${answer}”)`,
  workerShutdown: (worker: string) => `${worker}: shutdown sent`,
  poolRestartsOff: (worker: string) =>
    `${worker}: pool restarts are not enabled, so it was not restarted; start it with ${POOL_RESTARTS_SETTING}, or set restart: shutdown on the group`,
  allBack: (n: number, seconds: number, back: string[]) =>
    `All back within ${seconds} s (${n} of ${n}): ${list(back)}.`,
  notAllBack: (back: number, of: number, seconds: number) =>
    `Not all back after ${seconds} s: ${back} of ${of}.`,
  backNames: (names: string[]) => `Back: ${list(names)}.`,
  freshNames: (names: string[]) => `New: ${list(names)}.`,
  missingNames: (names: string[]) => `Not back: ${list(names)}.`,
  notRestartedNames: (names: string[]) => `Still the same process, not restarted: ${list(names)}.`,
  noneBefore: 'No worker of the group answered before the restart, so none was waited for.',
  noneNow: 'No worker of the group answers now: the no-workers alert fires for its queues while jobs wait.',
  notChecked: 'Its workers were not checked (workerNames: []).',
};
