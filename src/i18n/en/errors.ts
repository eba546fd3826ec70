import { type ErrorCode, type ErrorParams, type OpsError, visibleParams } from '../../errors.js';

const list = (value: unknown): string =>
  Array.isArray(value) && value.length > 0 ? value.map((v) => `\`${v}\``).join(', ') : 'none';
/**
 * What a system cannot do, by the key commands pass (`what: 'listWorkers'`); anything else is
 * already a sentence of the catalog and is shown as it is.
 */
const abilities: Record<string, string> = {
  purge: 'purge',
  retry: 'retry',
  revoke: 'revoke',
  fail: 'fail',
  resizePool: 'resize a worker pool',
  listWorkers: 'list workers',
  listRunning: 'list running work',
  redisHealth: 'show its Redis',
  job: 'look up one job',
  results: 'hold Celery results (only a Celery system has a result backend)',
  'expire-results': 'expire Celery results (only a Celery system has a result backend)',
  'rate-limit': 'set a rate limit',
  concurrency: 'set a global concurrency per queue',
  revokeUseFail: 'revoke a task; `/queue fail <system>/<queue> <job-id>` moves an active job to failed',
  failUseRevoke: 'fail a job; `/queue revoke <system> <task-id>` stops a task',
  purgePart:
    'purge part of a state (--error, --name, --older-than, --newer-than, --keep): its purge takes whole states; `retry … all` takes these filters',
};
/** A message that ends as a sentence does, before the next one is put after it. */
const sentence = (text: unknown): string => {
  const s = String(text);
  return /[.!?:…]$/.test(s) ? s : `${s}.`;
};
/** `NotSupported` of a limit (`limit.<kind>.<reason>`): which BullMQ, and from which release it has it. */
const limitRefused = (p: ErrorParams): string => {
  const [, kind, reason] = String(p.what).split('.');
  if (reason === 'celery')
    return `\`${p.system}\` (celery) has no global concurrency per queue. Valid: \`/queue scale <system>/<group> <n>\` for the pool, or \`/queue rate-limit ${p.system} <task> <rate>\`.`;
  const what = `${kind === 'concurrency' ? 'a global concurrency' : 'a global rate limit'} on \`${p.queue}\``;
  const since = `BullMQ's workers honour it from ${p.since}`;
  if (reason === 'tooOld')
    return `\`${p.system}\` (bullmq) cannot set ${what}: its meta was written by \`${p.version}\`, and ${since}.`;
  if (reason === 'otherLibrary')
    return `\`${p.system}\` (bullmq) cannot set ${what}: its meta was written by \`${p.version}\`, not BullMQ; ${since}.`;
  return `\`${p.system}\` (bullmq) cannot set ${what}: its meta names no BullMQ version (stamped from 5.20.0), so whether its workers honour it is unknown; ${since}.`;
};
const ability = (what: unknown): string => abilities[String(what)] ?? String(what);
const hint = (suggestion: unknown): string =>
  typeof suggestion === 'string' && suggestion ? ` Did you mean \`${suggestion}\`?` : '';

/**
 * One line per error code. Values in params came from the user or from Redis: the caller
 * escapes the whole line for mrkdwn before it reaches Slack.
 */
/** What an undo refused after a resume has already put back, or that nothing was. */
const restoredSoFar = (before: unknown) =>
  Number(before) > 0
    ? `the ${Number(before).toLocaleString('en-US')} restored before it stopped stay back and the rest is still in the archive`
    : 'nothing was restored';

const lines: Record<ErrorCode, (p: ErrorParams) => string> = {
  UsageError: (p) => `${p.message ?? 'That command is not complete.'} Usage: \`${p.usage ?? '/queue help'}\``,
  UnknownVerb: (p) =>
    `\`${p.verb}\` is not a /queue command.${hint(p.suggestion)} Valid commands: ${list(p.valid)}.`,
  UnknownSystem: (p) =>
    `There is no system called \`${p.system}\`.${hint(p.suggestion)} Systems: ${list(p.valid)}.`,
  UnknownQueue: (p) =>
    `\`${p.system}\` has no queue called \`${p.queue}\`.${hint(p.suggestion)} Queues: ${list(p.valid)}.`,
  BadArgument: (p) =>
    `${sentence(p.message ?? `\`${p.value}\` is not valid here.`)}${p.valid ? ` Valid: ${p.valid}.` : ''}`,
  RedisUnavailable: (p) => `Redis for \`${p.system}\` is not answering (${p.reason ?? 'no reply'}).`,
  NotSupported: (p) =>
    String(p.what).startsWith('limit.')
      ? limitRefused(p)
      : `\`${p.system}\` (${p.type}) cannot ${ability(p.what)}.`,
  NoWorkersAnswered: (p) =>
    p.action === 'rate-limit'
      ? `No worker of \`${p.system}\` that has task \`${p.queue}\` registered took the change, so its rate limit is as it was. Check \`/queue workers ${p.system}\`.`
      : `No worker of \`${p.system}\` answered within ${p.timeoutMs} ms, so \`${p.queue}\` was not ${p.action === 'resume' ? 'resumed' : 'paused'}. Check \`/queue workers ${p.system}\`.`,
  Forbidden: (p) => `You need the \`${p.role}\` role to ${p.action}.`,
  WrongChannel: (p) =>
    Array.isArray(p.channels) && p.channels.length > 0
      ? `\`${p.action}\` only runs in ${list(p.channels)}; read-only commands work anywhere.`
      : `\`${p.action}\` runs in no channel yet; read-only commands work anywhere.`,
  TwoFactorRequired: () =>
    'This action needs two-factor authentication, and Slack did not confirm it is on for your account.',
  UnknownRequest: (p) => `There is no request \`${p.id}\`${p.channel ? ' in this channel' : ''}.`,
  RequestNotPending: (p) => `Request \`${p.id}\` is already ${p.status}; nothing was changed.`,
  DuplicateRequest: (p) =>
    `The same ${p.action} of \`${p.target}\` is already waiting for approval as \`${p.id}\`: approve or deny that one; no second request was made.`,
  RequestExpired: (p) =>
    `Request \`${p.id}\` expired at ${p.expired ?? p.expiresAt}; ask again if it is still needed.`,
  SelfApproval: (p) => `You asked for \`${p.id}\` yourself; someone else has to approve it.`,
  IdentityNotBound: (p) =>
    p.kind === 'mismatch'
      ? `OS user \`${p.osUser}\` is bound to ${list(p.bound)} in \`cli.users\`, so it cannot act as \`${p.user}\`; nothing was done.`
      : p.kind === 'taken'
        ? `\`${p.user}\` belongs to OS user ${list(p.bound)} (\`cli.users\`), so OS user \`${p.osUser}\` cannot act as it; nothing was done.`
        : p.kind === 'claimed-vs-bound'
          ? `\`--user ${p.user}\` is only a claim (OS user \`${p.osUser}\` is not bound to it in \`cli.users\`), and \`${p.id}\` was asked or approved by OS user ${list(p.bound)}, which is bound: a claim never counts as the second person against a bound account; nothing was changed.`
          : p.kind === 'cli-party'
            ? `\`${p.id}\` was asked on the command line by OS user \`${p.osUser}\` as \`${p.user}\`, which \`cli.users\` does not bind, so it cannot be approved from Slack; approve it on the command line or bind that account in \`cli.users\`.`
            : `\`--user ${p.user}\` is only a claim: OS user \`${p.osUser}\` is not bound to it in \`cli.users\`, and \`${p.id}\` was asked or approved in Slack; nothing was changed. Answer it in Slack, or bind the account in \`cli.users\`.`,
  UserNamespace: (p) =>
    `The command line is running inside a user namespace (/proc/self/uid_map is \`${p.uidMap}\`, not the whole-system map), where the OS account and host name it reads can be anything; it does not run \`${p.verb}\` or any other command that changes something or approves there. Run it outside the namespace.`,
  NotChannelMember: (p) =>
    p.reason === 'not-member'
      ? `\`${p.id}\` was asked in a private channel you are not in; only its members can approve or deny it from the Home tab.`
      : `Slack did not say who is in the channel \`${p.id}\` was asked in (${p.reason}), so it cannot be answered from the Home tab; answer it in that channel.`,
  AlreadyApproved: (p) => `You already approved \`${p.id}\`; it needs someone else too.`,
  StoreUnavailable: (p) =>
    p.unsure
      ? `The bot's own store stopped answering while saving (${p.reason ?? 'no reply'}); whether it was saved is not known: look with \`/queue pending\` or \`/queue audit\` before doing it again.`
      : `The bot's own store is not answering (${p.reason ?? 'no reply'}); nothing was changed.`,
  StartNotStored: (p) =>
    `\`${p.id}\` (${p.action} ${p.target}) is approved, but the store refused the write of its start (\`executing\` with the audit entry \`request.executing\`: ${p.reason}), so it did not run. Once the store takes writes again it is closed as never started; ask again then.`,
  OutcomeNotStored: (p) =>
    `\`${p.id}\` (${p.action} ${p.target}) ran and ${p.outcome === 'done' ? 'is done' : 'failed'}, but the store refused the write of its outcome (the status \`${p.outcome}\` with the audit entry \`action.${p.action}\`: ${p.reason}). Check \`${p.target}\`; the request shows as running, then as interrupted ("may have run"), until the bot writes it.`,
  ConfigInvalid: (p) =>
    `The config in ${p.source} is not valid:\n${(p.problems as string[] | undefined)?.map((x) => `  ${x}`).join('\n') ?? ''}`,
  AuditChainBroken: (p) => `${p.message}`,
  AlreadyInState: (p) =>
    p.outOf === undefined
      ? `\`${p.target}\` is already ${p.state}; nothing was changed.`
      : p.keep !== undefined
        ? `\`${p.target}\` holds ${Number(p.outOf).toLocaleString('en-US')} ${p.state} job${p.outOf === 1 ? '' : 's'}, and ${Number(p.outOf).toLocaleString('en-US')} ≤ ${Number(p.keep).toLocaleString('en-US')} (--keep ${p.keep}): all are kept, so nothing would be deleted; nothing was changed.`
        : `None of the ${Number(p.outOf).toLocaleString('en-US')} ${p.state} job${p.outOf === 1 ? '' : 's'} of \`${p.target}\` matches ${p.selection}; nothing was changed.`,
  UnknownJob: (p) =>
    p.target
      ? `\`${p.target}\` has no failed job \`${p.id}\`. Valid: the id of one of its failed jobs (\`/queue dlq ${p.target}\`), or \`all\`.`
      : `\`${p.queue === undefined ? p.system : `${p.system}/${p.queue}`}\` has no ${p.queue === undefined ? 'task' : 'job'} \`${p.id}\`.${p.looked ? ` Looked for ${p.looked}.` : ''}`,
  UnknownTask: (p) =>
    `No worker, queue or result of \`${p.system}\` knows task ${((p.ids as readonly string[]) ?? []).map((id) => `\`${id}\``).join(', ')}; nothing was revoked. Valid: the id of a task that runs (\`/queue stuck ${p.system}\`), waits in a queue or has a result.`,
  TaskNotRunning: (p) => {
    const states = (p.states as readonly string[]) ?? [];
    const tasks = ((p.ids as readonly string[]) ?? []).map((id, i) => ({ id, state: states[i] ?? '?' }));
    const many = tasks.length > 1;
    return `Task${many ? 's' : ''} ${tasks.map((x) => `\`${x.id}\` (finished: ${x.state})`).join(', ')} of \`${p.system}\` ${many ? 'are' : 'is'} no longer running; nothing was revoked and no request was made. Valid: the id of a task that runs (\`/queue stuck ${p.system}\`) or waits in a queue.`;
  },
  NothingToRetry: (p) =>
    p.filter
      ? `None of the ${Number(p.failed).toLocaleString('en-US')} failed job${p.failed === 1 ? '' : 's'} of \`${p.target}\` matches ${p.filter}; nothing was changed. Error groups there: ${((p.groups as readonly string[] | undefined) ?? []).join('; ') || 'none'} (\`/queue dlq ${p.target}\`).`
      : `\`${p.target}\` has no failed jobs to retry; nothing was changed.`,
  NeedsResultExtended: (p) =>
    `${p.id ? `\`${p.target}\` cannot retry task \`${p.id}\`: its stored failure has` : `\`${p.target}\` cannot be retried: ${p.unnamed} stored failure${p.unnamed === 1 ? '' : 's'} of \`${p.system}\` ${p.unnamed === 1 ? 'has' : 'have'}`} no task name, arguments or queue. Celery stores them only when the app sets \`result_extended=True\`.`,
  RateLimited: (p) =>
    `You ran ${p.limit} commands that change things in the last minute, the most allowed; \`${p.action}\` did not run. Try again in ${p.retryAfterSeconds} s.`,
  UnknownAlert: (p) => `There is no alert \`${p.id}\`. Valid: an id from \`/queue alerts\`.`,
  UnknownPager: (p) => `There is no pager \`${p.pager}\`. Valid: ${list(p.valid)}.`,
  NoPager: (p) =>
    !Array.isArray(p.valid) || p.valid.length === 0
      ? 'No pager is configured: add one under `paging:` in the config (docs/configuration.md).'
      : `No pager matches alert \`${p.id}\`. Name one to page it anyway: \`/queue page ${p.id} <pager>\`, pagers: ${list(p.valid)}.`,
  UnknownSilence: (p) => `There is no silence \`${p.id}\`. Valid: an id from \`/queue silences\`.`,
  AlertNotFiring: (p) =>
    p.page
      ? `Alert \`${p.id}\` is resolved; there is nobody to page for it.`
      : `Alert \`${p.id}\` is resolved; there is nothing to acknowledge or snooze.`,
  JobNotActive: (p) =>
    `Job \`${p.id}\` of \`${p.system}/${p.queue}\` is ${p.state}, not active; only an active or stalled job can be failed.`,
  RedisForbidden: (p) =>
    `Redis for \`${p.system}\` refused: its user may not change the queues (ACL: ${p.reason}). Nothing was changed; actions need the actions user (docs/deploy.md: "Least-privilege Redis users").`,
  KubernetesForbidden: (p) =>
    `Kubernetes refused: the bot's service account may not \`${p.verb}\` \`${p.resource}\` in namespace \`${p.namespace}\`. Grant it in the Role (docs/deploy.md: "Kubernetes RBAC for scale").`,
  KubernetesNotFound: (p) => `Kubernetes has no ${p.kind} \`${p.name}\` in namespace \`${p.namespace}\`.`,
  ScaleFailed: (p) => `Scaling \`${p.target}\` failed: ${p.reason}`,
  RestartFailed: (p) => `Restarting \`${p.target}\` failed: ${p.reason}`,
  ArchiveInvalid: (p) =>
    `The archive ${p.path} cannot be trusted: \`${p.file}\` is ${p.problem === 'checksum' ? 'not what its manifest says (sha256 mismatch)' : p.problem}; ${restoredSoFar(p.restoredBefore)}.`,
  UndoConflict: (p) =>
    `Undo refused: ${p.count} job id${p.count === 1 ? '' : 's'} exist${p.count === 1 ? 's' : ''} again (${list(p.ids)}${Number(p.count) > ((p.ids as string[] | undefined) ?? []).length ? ', …' : ''}); nothing was overwritten, ${restoredSoFar(p.restoredBefore)}.`,
  NotUndoable: (p) => `\`${p.id}\` cannot be undone: ${p.reason}.`,
  RetryInterrupted: (p) =>
    `Redis for \`${p.system}\` stopped answering during the retry of \`${p.target}\` (${p.reason}): at least ${Number(p.done).toLocaleString('en-US')} of ${Number(p.total).toLocaleString('en-US')} jobs were done before, the rest are still failed; \`/queue retry ${p.target} all\` takes only those once Redis answers.`,
  UndoInterrupted: (p) =>
    `Redis for \`${p.system}\` stopped answering during the undo of \`${p.id}\` (${p.reason}): ${Number(p.done).toLocaleString('en-US')} of ${Number(p.total).toLocaleString('en-US')} jobs of \`${p.target}\` are back, the rest are still in the archive. The undo goes on from where it stopped once Redis answers again (the bot tries every 30 s, the command line at its next run); nothing is put back twice.`,
  UndoTakenOver: (p) =>
    `\`${p.id}\`: another run took this undo over; this one stopped without putting anything back twice.`,
  PurgeInterrupted: (p) =>
    `Redis for \`${p.system}\` stopped answering during the purge of \`${p.target}\` (${p.reason}): ${Number(p.done).toLocaleString('en-US')} of ${Number(p.total).toLocaleString('en-US')} jobs are archived and deleted, the rest are still queued. The purge goes on from its archive once Redis answers again (the bot tries every 30 s, the command line at its next run).`,
};

export const errors = {
  describe(error: Pick<OpsError, 'code' | 'params'>): string {
    // What the params quote came from a user or Redis: shown on one line (see visibleParams).
    return lines[error.code](visibleParams(error.params));
  },
  /** Why a Redis did not answer, in a word or two (the rest of ioredis' text is left as it is). */
  redisReasons: {
    commandTimedOut: 'command timed out',
    connectTimedOut: 'connect timed out',
    connectionRefused: 'connection refused',
    connectionLost: 'connection lost',
    notConnected: 'not connected',
    noSuchDatabase: (db: number) =>
      `it has no database ${db}: its \`databases\` setting is lower; check the number at the end of the URL`,
  },
};
