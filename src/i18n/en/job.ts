/** Strings of `/queue job`. Names, errors and ids arrive already escaped for mrkdwn. */
export const job = {
  usage: '/queue job <system>/<queue> <job-id>  (Celery: /queue job <system> <task-id>)',
  summary:
    'one job by id: where it is, attempts, timings, its error and stack, parent and children; never its data',
  needsId: 'Name the queue as system/queue and the job id (a Celery task: the system and the task id).',
  title: (target: string, id: string) => `Job ${id} · ${target}`,
  fallback: (target: string, id: string, state: string) => `Job ${id} in ${target}: ${state}`,
  notFound: (id: string, where: string) => `There is no job \`${id}\`: looked for ${where}.`,
  states: {
    waiting: 'waiting',
    paused: 'waiting (queue paused)',
    active: 'active',
    delayed: 'delayed',
    prioritized: 'prioritized',
    failed: 'failed',
    completed: 'completed',
    'waiting-children': 'waiting for its children',
    unknown: 'in no list or set (being moved, or waiting past the search bound)',
  } as Record<string, string>,
  stateLine: (state: string, name: string) => `*${state}* · \`${name}\``,
  position: (ahead: string) => (ahead === '0' ? 'next to be taken' : `${ahead} jobs will be taken before it`),
  searched: (n: string) => `searched the ${n} jobs workers take next`,
  due: (at: string, inWords: string) => `due ${at} (${inWords})`,
  priority: (p: number) => `priority ${p}`,
  attempts: (made: number, allowed: number | null) =>
    made === 0
      ? `not tried yet${allowed !== null ? ` (${allowed} ${allowed === 1 ? 'attempt' : 'attempts'} allowed)` : ''}`
      : allowed === null
        ? `${made} attempts made`
        : `attempt ${made} of ${allowed}`,
  lockHeld: (ttl: string | null) => `a worker holds its lock${ttl ? ` (${ttl} left)` : ''}`,
  lockLost: 'no worker holds its lock: stalled, a worker will pick it up again or fail it',
  timesTitle: '*Times*',
  added: (at: string) => `added ${at}`,
  processed: (at: string, wait: string | null) => `started ${at}${wait ? ` after waiting ${wait}` : ''}`,
  finished: (at: string, run: string | null) => `finished ${at}${run ? ` after running ${run}` : ''}`,
  errorTitle: '*Error*',
  stackTitle: '*Stack* (first lines)',
  progress: (text: string) => `progress: ${text}`,
  parent: (queue: string, id: string) => `parent: job \`${id}\` in \`${queue}\``,
  children: (pending: number, processed: number, failed: number) =>
    `children: ${pending} pending, ${processed} done${failed ? `, ${failed} failed` : ''}`,
  childKeys: (list: string) => `pending: ${list}`,
  repeat: (key: string) => `repeats: \`${key}\``,
  dataNote: 'Job data and return values are never shown.',
  taskTitle: (system: string, id: string) => `Task ${id} · ${system}`,
  taskStates: {
    queued: 'queued',
    unacked: 'delivered, not yet acknowledged (a worker holds it, or it waits for its ETA)',
    active: 'running',
    reserved: 'reserved by a worker, not started',
    scheduled: 'scheduled on a worker (ETA)',
    SUCCESS: 'succeeded',
    FAILURE: 'failed',
    RETRY: 'failed, to be retried',
    REVOKED: 'revoked',
    STARTED: 'started',
  } as Record<string, string>,
  queuedAt: (queue: string, priority: number, ahead: string) =>
    `in \`${queue}\` (priority ${priority}): ${ahead === '0' ? 'next to be taken' : `${ahead} messages will be taken before it`}`,
  onWorker: (worker: string) => `worker: \`${worker}\``,
  resultLine: (status: string, done: string | null, retries: number | null) =>
    `result: ${status}${done ? ` · done ${done}` : ''}${retries ? ` · ${retries} ${retries === 1 ? 'retry' : 'retries'}` : ''}`,
  tracebackTitle: '*Traceback* (last lines)',
  taskSearched: (n: string, complete: boolean) =>
    complete
      ? `searched all ${n} messages of its queues`
      : `searched ${n} messages of its queues, not all of them`,
  argsNote: 'Task arguments and results are never shown.',
  revoke: 'Revoke',
  retry: 'Retry',
  fail: 'Fail',
  refresh: 'Refresh',
  view: (command: string) => `view: \`${command}\``,
};
