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
  RequestExpired: 'RequestExpired',
  SelfApproval: 'SelfApproval',
  AlreadyApproved: 'AlreadyApproved',
  StoreUnavailable: 'StoreUnavailable',
  ConfigInvalid: 'ConfigInvalid',
  AuditChainBroken: 'AuditChainBroken',
  AlreadyInState: 'AlreadyInState',
  /** An archive file is missing or does not match the sha256 its manifest holds. */
  ArchiveInvalid: 'ArchiveInvalid',
  /** Undo would overwrite jobs that exist again under the same ids. */
  UndoConflict: 'UndoConflict',
  /** `undo <id>` names no purge that can be undone (unknown, running, undone, archive gone). */
  NotUndoable: 'NotUndoable',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export type ErrorParams = Record<string, string | number | boolean | readonly string[] | undefined>;

export class OpsError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly params: ErrorParams = {},
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
