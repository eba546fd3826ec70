/**
 * Strings of `rate-limit` and `concurrency`: arguments, previews and outcomes (plain text, the
 * request message escapes them as a whole), the status line and the notice of a limit lifted by
 * its `--for`. Names that came from Redis or a worker are passed in already escaped where mrkdwn.
 */
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const rate = (value: string | null) => value ?? 'none';

export const limits = {
  usage: {
    rateLimit:
      '/queue rate-limit <system> <task> <rate>|off [--for 30m] (Celery) · /queue rate-limit <system>/<queue> <max>/<duration>|off [--for 30m] (BullMQ)',
    concurrency: '/queue concurrency <system>/<queue> <n>|off [--for 30m]',
  },
  summary: {
    rateLimit:
      'set or lift a rate limit: a Celery task’s on every worker (control rate_limit), or a BullMQ queue’s global one',
    concurrency: 'set or lift a BullMQ queue’s global concurrency: jobs at once across all its workers',
  },

  // Arguments
  needsTask: 'Name the Celery task and the rate.',
  needsRate: 'Say the rate, or `off`.',
  needsQueue: 'Name the BullMQ queue as system/queue.',
  needsConcurrency: 'Say how many jobs may run at once, or `off`.',
  celeryRateInvalid: (value: string) => `\`${value}\` is not a Celery rate.`,
  celeryRateValid:
    'tasks per second, minute or hour, as Celery writes them: `10/s`, `100/m`, `500/h`; or `off`',
  bullmqRateInvalid: (value: string) => `\`${value}\` is not a rate limit.`,
  bullmqRateValid:
    '`max/duration`: at most max jobs (1 to 1,000,000) per duration (ms, s, m or h, up to 1 day), e.g. `100/1m`, `10/s`, `50/500ms`; or `off`',
  concurrencyInvalid: (value: string) => `\`${value}\` is not a concurrency.`,
  concurrencyValid: 'a whole number of jobs at once from 1 to 10000, or `off`',
  forInvalid: (value: string) => `\`${value}\` is not how long a limit lasts.`,
  forValid: '`--for` with 30s, 30m, 2h or 1d, at most 7d',
  forWithOff: '`--for` lifts a limit after a while; `off` lifts it now.',
  concurrencyOnCelery:
    'Celery has no global concurrency per queue; size the pool with `/queue scale <system>/<group> <n>`, or rate-limit a task',
  unknownTask: (system: string, task: string) =>
    `No worker of \`${system}\` has task \`${task}\` registered.`,
  tasksValid: (tasks: string[]) =>
    tasks.length === 0
      ? 'a task a live worker has registered (no worker answered; see `/queue workers`)'
      : tasks
          .slice(0, 20)
          .map((t) => `\`${t}\``)
          .join(', ') + (tasks.length > 20 ? ` and ${tasks.length - 20} more` : ''),
  nothingToLift: (target: string, kind: string) =>
    `\`${target}\` has no ${kind} to lift; nothing was changed`,
  kindName: { 'rate-limit': 'rate limit', concurrency: 'concurrency limit' } as Record<string, string>,

  // Previews (plain text, stored with the request)
  previewCelery: (
    system: string,
    task: string,
    value: string | null,
    workers: { worker: string; rate: string | null }[],
  ) =>
    `${value === null ? 'lift the rate limit of' : `rate-limit`} task ${task} on ${system}${value === null ? '' : ` to ${value}`}, ` +
    `sent to ${plural(workers.length, 'worker')}: ${workers.map((w) => `${w.worker} (now ${rate(w.rate)})`).join(', ')}`,
  previewCeleryEach: (inAll: string) => `; each worker keeps to it on its own, so up to ${inAll} in all`,
  previewCeleryRestore: (restores: string[]) =>
    `; back to what each had before queue-ops: ${restores.join(', ')}`,
  restoreTo: (worker: string, value: string | null) => `${worker} ${rate(value)}`,
  previewBullmq: (target: string, what: string, now: string, workers: number, version: string | null) =>
    `${what} on ${target} (now: ${now}); BullMQ's workers read it from the queue's meta` +
    ` (${plural(workers, 'worker connection')} now${version ? `, written by ${version}` : ''})`,
  previewFor: (duration: string) => `; lifted by itself ${duration} after it runs`,
  previewUntilReplaced: (until: string) => `; replaces the limit queue-ops set that was to lift at ${until}`,
  setConcurrency: (n: number) =>
    `global concurrency ${n} (at most ${plural(n, 'job')} at once across all workers)`,
  setRate: (max: number, duration: string) => `global rate limit ${max} per ${duration}`,
  liftConcurrency: (back: string) => `lift the global concurrency (back to ${back})`,
  liftRate: (back: string) => `lift the global rate limit (back to ${back})`,
  none: 'none',
  concurrencyValue: (n: number) => `concurrency ${n}`,
  rateValue: (max: number, duration: string) => `${max} per ${duration}`,

  // Outcomes (after approval)
  /** A Celery rate limit is a task's, not a queue's: named as one. */
  resultCelery: (system: string, task: string, answers: string[]) =>
    `task ${task} of ${system}: ${answers.join('; ')}`,
  workerAnswer: (worker: string, answer: string, after: string | null | undefined) =>
    `${worker}: ${answer}${after === undefined ? ' (not read back)' : ` → ${rate(after)}`}`,
  resultBullmq: (target: string, before: string, after: string) => `${target}: ${before} → ${after}`,
  resultUntil: (until: string) => `, until ${until}`,

  // status
  statusLine: (items: string[]) => `Limits: ${items.join(' · ')}`,
  statusItem: (target: string, what: string, until: string | null) =>
    `\`${target}\` ${what}${until ? ` until ${until}` : ''}`,
  statusCeleryItem: (task: string, value: string, until: string | null) =>
    `task \`${task}\` ${value}${until ? ` until ${until}` : ''}`,

  // The monitor's notice when a --for runs out
  expiredTitle: 'Limit lifted',
  expired: (target: string, what: string, back: string, by: string) =>
    `The ${what} of ${target} ran out and was lifted: back to ${back} (set by ${by}).`,
};
