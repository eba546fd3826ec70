/**
 * Expected failures are values with a code; `src/i18n` turns each code into one line for the
 * user. Anything that is not an `OpsError` is unexpected and is reported with a reference id.
 */
export const ErrorCode = {
  UsageError: 'UsageError',
  UnknownVerb: 'UnknownVerb',
  UnknownSystem: 'UnknownSystem',
  UnknownQueue: 'UnknownQueue',
  BadArgument: 'BadArgument',
  RedisUnavailable: 'RedisUnavailable',
  NotSupported: 'NotSupported',
  /** A remote-control action (Celery pause/resume) that no worker acknowledged. */
  NoWorkersAnswered: 'NoWorkersAnswered',
  Forbidden: 'Forbidden',
  WrongChannel: 'WrongChannel',
  TwoFactorRequired: 'TwoFactorRequired',
  UnknownRequest: 'UnknownRequest',
  RequestNotPending: 'RequestNotPending',
  DuplicateRequest: 'DuplicateRequest',
  RequestExpired: 'RequestExpired',
  SelfApproval: 'SelfApproval',
  /**
   * A command-line identity that `cli.users` does not bind, where it would count against a Slack
   * identity or a bound one; a bound OS account claiming an id it is not bound to; or an account
   * claiming an id `cli.users` binds to another account.
   */
  IdentityNotBound: 'IdentityNotBound',
  /**
   * The command line inside a non-initial user namespace, where the OS account and host name it
   * reads can be anything: it refuses every command that changes something, approvals included.
   */
  UserNamespace: 'UserNamespace',
  /** An App Home approval of a request asked in a private channel the clicker is not in (or unknown). */
  NotChannelMember: 'NotChannelMember',
  AlreadyApproved: 'AlreadyApproved',
  StoreUnavailable: 'StoreUnavailable',
  /**
   * An approved request whose start (`executing` and its audit entry, one write) the store refused:
   * nothing ran. `reason` is the store's.
   */
  StartNotStored: 'StartNotStored',
  /**
   * An action that ran, whose outcome (its status and its `action.<verb>` audit entry, one write)
   * the store refused. The bot keeps it and writes it again; the command line ends with this.
   */
  OutcomeNotStored: 'OutcomeNotStored',
  ConfigInvalid: 'ConfigInvalid',
  AuditChainBroken: 'AuditChainBroken',
  AlreadyInState: 'AlreadyInState',
  /** A job id that names no job (fail), or no failed job (retry), of the queue. */
  UnknownJob: 'UnknownJob',
  /** `revoke` of task ids that no worker, queue list or result of the system knows. */
  UnknownTask: 'UnknownTask',
  /** `revoke` of task ids that have all finished (a stored SUCCESS, FAILURE or REVOKED; none runs or waits). */
  TaskNotRunning: 'TaskNotRunning',
  /** A retry of a queue with no failed jobs. */
  NothingToRetry: 'NothingToRetry',
  /** A Celery retry whose failures lack the task name, arguments and queue (`result_extended`). */
  NeedsResultExtended: 'NeedsResultExtended',
  /** Too many mutating commands from one user in the last minute (`rateLimit.perUserPerMinute`). */
  RateLimited: 'RateLimited',
  UnknownAlert: 'UnknownAlert',
  AlertNotFiring: 'AlertNotFiring',
  /** `unsilence <id>` names no silence. */
  UnknownSilence: 'UnknownSilence',
  /** `page <alert-id> <pager>` names no pager of `paging:`. */
  UnknownPager: 'UnknownPager',
  /** `page <alert-id>`: no pager of `paging:` matches the alert. */
  NoPager: 'NoPager',
  /** `fail` of a job that is not active (waiting, completed, already failed…). */
  JobNotActive: 'JobNotActive',
  /** Redis refused a command to the system's user (ACL): a read-only user asked to act. */
  RedisForbidden: 'RedisForbidden',
  /** Kubernetes answered 403: the bot's service account lacks an RBAC verb on a resource. */
  KubernetesForbidden: 'KubernetesForbidden',
  /** Kubernetes answered 404: the named deployment (or namespace) does not exist. */
  KubernetesNotFound: 'KubernetesNotFound',
  /** A scaler could not do its work (Compose exited non-zero, no Kubernetes credentials…). */
  ScaleFailed: 'ScaleFailed',
  /** A restart could not be done (Compose exited non-zero, the Kubernetes patch refused…). */
  RestartFailed: 'RestartFailed',
  /** An archive file is missing or does not match the sha256 its manifest holds. */
  ArchiveInvalid: 'ArchiveInvalid',
  /** Undo would overwrite jobs that exist again under the same ids. */
  UndoConflict: 'UndoConflict',
  /**
   * A purge whose Redis stopped answering midway: what is archived and deleted stays so, the rest
   * is still queued, and the purge goes on from its archive once that Redis answers again.
   */
  PurgeInterrupted: 'PurgeInterrupted',
  /**
   * An undo whose Redis stopped answering midway: what is back stays back, the rest waits in the
   * archive, and the undo goes on from where Redis says it stopped once that Redis answers again.
   */
  UndoInterrupted: 'UndoInterrupted',
  /** Another process moved an undo's marker in Redis: it took the undo over; this one stops. */
  UndoTakenOver: 'UndoTakenOver',
  /** A retry whose Redis stopped answering after some of its batches were done. */
  RetryInterrupted: 'RetryInterrupted',
  /** `undo <id>` names no purge that can be undone (unknown, running, undone, archive gone). */
  NotUndoable: 'NotUndoable',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export type ErrorParams = Record<string, string | number | boolean | readonly string[] | undefined>;

/**
 * Text as a person can read it on one line: a line break, tab or other control character (a name
 * typed on the command line with `$'a\nb'`) is shown as `\n`, `\t`, `\u0000`, not acted on.
 */
export function visibleText(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029]/gu, showControl);
}

function showControl(ch: string): string {
  if (ch === '\n') return '\\n';
  if (ch === '\r') return '\\r';
  if (ch === '\t') return '\\t';
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Text for a terminal, as {@link visibleText} shows it, except the line breaks that lay it out:
 * every other C0 and C1 control (ESC and CSI sequences that clear the screen, set the window
 * title or hide an OSC 8 link, a carriage return that writes over the line) is shown, not acted
 * on. What the command line prints as text comes from job names, failure reasons and workers.
 */
export function terminalText(text: string): string {
  return text.replace(/[^\P{Cc}\n]|[\u2028\u2029]/gu, showControl);
}

/**
 * Params with every string (and string in a list) passed through {@link visibleText}: what an
 * error quotes came from a user or from Redis, and its answer must stay one line. Config problems
 * are left alone: the loader keeps each one on its own line already, and they are listed by line.
 */
export function visibleParams(params: ErrorParams): ErrorParams {
  const out: ErrorParams = {};
  for (const [key, value] of Object.entries(params)) {
    out[key] =
      key === 'problems'
        ? value
        : typeof value === 'string'
          ? visibleText(value)
          : Array.isArray(value)
            ? value.map((v) => (typeof v === 'string' ? visibleText(v) : v))
            : value;
  }
  return out;
}

export class OpsError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly params: ErrorParams = {},
    /**
     * What an action had done when it failed, shaped as its result would have been (an interrupted
     * retry: the ids its finished batches put back). Not shown to the user: the audit records it,
     * since some of it (a Celery retry's new task ids) is recorded nowhere else.
     */
    readonly partialResult?: Readonly<Record<string, unknown>>,
  ) {
    super(`${code} ${JSON.stringify(params)}`);
    this.name = 'OpsError';
  }
}

export function isOpsError(value: unknown): value is OpsError {
  return value instanceof OpsError;
}

/** Usage errors exit 2 on the command line; every other failure exits 1. */
export function isUsageError(error: OpsError): boolean {
  return (
    error.code === ErrorCode.UsageError ||
    error.code === ErrorCode.UnknownVerb ||
    error.code === ErrorCode.BadArgument
  );
}
