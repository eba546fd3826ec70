/**
 * Strings of the worker groups: in `workers`, `scale`, `stuck`, `revoke` and `fail`.
 * Previews and outcomes are plain text (the request message escapes them as a whole); the
 * `stuck` and group lines are mrkdwn whose untrusted parts the caller escapes before passing in.
 */
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const count = (n: number | null) => (n === null ? '?' : String(n));

export const scale = {
  usage: {
    scale: '/queue scale <system>/<group> <replicas>',
    stuck: '/queue stuck <system> [minutes]',
    revoke: '/queue revoke <system> <task-id…> [--terminate] [--signal TERM|KILL]',
    fail: '/queue fail <system>/<queue> <job-id> [reason…]',
  },
  summary: {
    scale: 'change a worker group’s replicas, containers or pool processes (policy and approval apply)',
    stuck: 'work running longer than N minutes (default 30; 0: everything running), longest first',
    revoke: 'revoke Celery tasks, and with --terminate kill the running ones',
    fail: 'move an active or stalled BullMQ job to failed',
  },

  // Arguments
  needsGroup: 'Name the group as system/group.',
  needsReplicas: 'Say how many replicas.',
  unknownGroup: (system: string, group: string) => `\`${system}\` has no worker group \`${group}\`.`,
  noGroups: (system: string) => `\`${system}\` has no worker groups in config (\`workers:\`).`,
  groupsValid: (groups: string[]) => groups.map((g) => `\`${g}\``).join(', '),
  notAnInteger: (value: string) => `\`${value}\` is not a whole number of replicas.`,
  outOfBounds: (value: number, group: string) => `${value} is outside the bounds of \`${group}\`.`,
  boundsValid: (min: number, max: number) => `${min}..${max}`,
  alreadyAt: (target: string, replicas: number) => `${target} already has ${replicas}`,
  noTargets: (target: string) => `no worker of ${target} answered, so there is nothing to scale`,
  minutesInvalid: (value: string) => `\`${value}\` is not a number of minutes.`,
  minutesValid: 'a whole number from 0 (everything running) to 10080',
  notATaskId: (id: string) => `\`${id}\` is not a task id.`,
  needsTaskIds: 'Name at least one task id.',
  signalInvalid: (value: string) => `\`${value}\` is not a signal revoke can send.`,
  signalValid: 'TERM or KILL',
  signalNeedsTerminate: '`--signal` only means something with `--terminate`.',
  unknownFlag: (flag: string) => `\`${flag}\` is not an option of this command.`,
  needsJob: 'Name the queue as system/queue and the job id.',

  // Previews (plain text, stored with the request)
  typeLabel: { kubernetes: 'Kubernetes', compose: 'Compose', 'celery-pool': 'Celery pool' } as Record<
    string,
    string
  >,
  previewScale: (target: string, type: string, changes: string[], note?: string) =>
    `scale ${target} (${type}): ${changes.join('; ')}${note ? `. ${note}` : ''}.`,
  change: (name: string, before: number | null, after: number | null, unit: string) =>
    `${name} ${count(before)} → ${count(after)} ${unit}`,
  units: { kubernetes: 'replicas', compose: 'running containers', 'celery-pool': 'processes' } as Record<
    string,
    string
  >,
  autoscaleChange: (
    name: string,
    before: { min: number; max: number },
    after: { min: number; max: number },
  ) => `${name} autoscale ${before.min}..${before.max} → ${after.min}..${after.max}`,
  autoscalerNote: (
    kind: string,
    name: string,
    before: { min: number; max: number },
    after: { min: number; max: number },
  ) =>
    `${kind} ${name} owns the replica count and would overwrite it at once, so its minimum goes ` +
    `${before.min} → ${after.min}` +
    (after.max !== before.max ? ` and its maximum ${before.max} → ${after.max}` : '') +
    ' instead',
  previewRevoke: (system: string, tasks: string[], terminate: boolean, signal: string) =>
    `revoke on ${system}: ${tasks.join('; ')}` +
    (terminate
      ? `; running ones are killed with SIG${signal}`
      : '; running ones finish, queued ones are skipped') +
    '.',
  taskRunsOn: (id: string, name: string, worker: string, runtime: string) =>
    `${id} (${name}) runs on ${worker} for ${runtime}`,
  taskNotRunning: (id: string) => `${id} is not running now (it is skipped if a worker receives it)`,
  /** A worker holds it without running it yet (`reserved`, or `scheduled` with an eta). */
  taskHeldBy: (id: string, worker: string, state: string) =>
    `${id} is ${state} on ${worker} (it is skipped when its turn comes)`,
  taskQueued: (id: string, queue: string) => `${id} waits in ${queue} (a worker skips it)`,
  taskDelivered: (id: string) =>
    `${id} was delivered to a worker and is not yet acknowledged (it is skipped)`,
  taskFinished: (id: string, state: string) => `${id} already finished (${state}): nothing left to stop`,
  /** Named so a typo shows before anything is broadcast. */
  taskUnknown: (id: string) => `${id} is known to no worker, queue or result (a typo?)`,
  previewFail: (target: string, id: string, name: string, state: string, reason: string) =>
    `fail job ${id} (${name}) of ${target}, now ${state}, with reason “${reason}”`,
  lockHeld: (worker: string | undefined, seconds: number) =>
    `${worker ? `worker ${worker}` : 'a live worker'} still holds its lock (${seconds} s left): it is taken ` +
    'from it, and that worker’s own result for the job will be refused',
  lockExpired: (worker: string | undefined) =>
    `its lock has expired, so ${worker ? `worker ${worker}` : 'no worker'} no longer holds it (stalled)`,
  defaultReason: (who: string) => `failed by ${who} with queue-ops`,

  // Outcomes (plain text)
  resultScale: (changes: string[], note?: string) => `${changes.join('; ')}${note ? `. ${note}` : ''}.`,
  answered: (answer: string) => `(answered “${answer}”)`,
  resultAutoscaler: (kind: string, name: string, after: { min: number; max: number }) =>
    `${kind} ${name} now keeps ${after.min}..${after.max} replicas`,
  resultRevoke: (answers: string[], stillRunning: string[]) =>
    `workers that answered: ${answers.length > 0 ? answers.join('; ') : 'none'}` +
    (stillRunning.length > 0 ? `. Still running: ${stillRunning.join(', ')}` : '') +
    '.',
  resultFail: (id: string, state: string, lockWasHeld: boolean) =>
    `job ${id} is ${state}${lockWasHeld ? '; the lock a worker still held was taken from it' : ''}.`,

  // `workers` group lines (mrkdwn; parts escaped by the caller)
  groupsTitle: 'Worker groups',
  groupLine: (name: string, type: string, detail: string, min: number, max: number) =>
    `:gear: *${name}* · ${type} · ${detail} · bounds ${min}..${max}`,
  kubeDetail: (target: string, desired: number | null, current: number | null, ready: number | null) =>
    `\`${target}\` desired ${count(desired)}, ready ${ready === null ? '? (needs get on deployments)' : ready}, current ${count(current)}`,
  composeDetail: (service: string, running: number | null) => `\`${service}\` ${count(running)} running`,
  poolDetail: (workers: string[]) => (workers.length > 0 ? workers.join(', ') : 'no worker answered'),
  poolWorker: (worker: string, processes: number | null, auto?: { min: number; max: number }) =>
    `\`${worker}\` ${plural(processes ?? 0, 'process', 'processes')}` +
    (auto ? ` (autoscale ${auto.min}..${auto.max})` : ''),
  ownedBy: (kind: string, name: string, min: number, max: number) =>
    ` · owned by ${kind} \`${name}\` (${min}..${max})`,
  groupError: (name: string, type: string, error: string) => `:x: *${name}* · ${type}: ${error}`,

  // `stuck`
  stuckTitle: (system: string, minutes: number) =>
    minutes === 0 ? `Running on ${system}` : `Running longer than ${plural(minutes, 'minute')} on ${system}`,
  stuckNone: (minutes: number) =>
    minutes === 0 ? 'Nothing is running.' : `Nothing has run longer than ${plural(minutes, 'minute')}.`,
  stuckLine: (id: string, name: string, where: string, runtime: string | null, stalled: boolean) =>
    `• \`${id}\` ${name} · ${where}${runtime ? ` · ${runtime}` : ''}${stalled ? ' · :warning: lock expired (stalled)' : ''}`,
  stuckWhere: (queue: string | undefined, worker: string | undefined) =>
    [queue ? `queue ${queue}` : undefined, worker ? `worker ${worker}` : 'worker unknown']
      .filter(Boolean)
      .join(', '),
  stuckMore: (n: number) => `… and ${n} more.`,
  stuckHint: (system: string, type: string) =>
    type === 'celery'
      ? `See one with \`/queue job ${system} <task-id>\`, stop it with \`/queue revoke ${system} <task-id> --terminate\`. Arguments are never shown.`
      : `See one with \`/queue job ${system}/<queue> <job-id>\`, fail it with \`/queue fail ${system}/<queue> <job-id>\`. Job data is never shown.`,
  stuckFallback: (system: string, n: number) => `${plural(n, 'stuck item')} on ${system}.`,
  /** Why a scaler could not do its work (the part after "Scaling … failed:"). */
  failures: {
    noKubeCredentials:
      'no Kubernetes credentials: set KUBECONFIG, or run the bot in the cluster with a service account',
    kubeconfigUnreadable: (reason: string) => `the kubeconfig could not be read (${reason})`,
    notStarted: (command: string, reason: string) => `${command} could not be started (${reason})`,
    timedOut: (what: string) => `${what} did not finish in time`,
    exited: (what: string, code: string) => `${what} exited with ${code}`,
    notJson: (what: string) => `${what} printed something that is not JSON`,
    noWorkerAnswered: 'no worker consuming its queues answered',
  },
};
