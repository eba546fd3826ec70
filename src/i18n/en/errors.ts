import type { ErrorCode, ErrorParams, OpsError } from '../../errors.js';

const list = (value: unknown): string =>
  Array.isArray(value) && value.length > 0 ? value.map((v) => `\`${v}\``).join(', ') : 'none';
const hint = (suggestion: unknown): string =>
  typeof suggestion === 'string' && suggestion ? ` Did you mean \`${suggestion}\`?` : '';

/**
 * One line per error code. Values in params came from the user or from Redis: the caller
 * escapes the whole line for mrkdwn before it reaches Slack.
 */
const lines: Record<ErrorCode, (p: ErrorParams) => string> = {
  UsageError: (p) => `${p.message ?? 'That command is not complete.'} Usage: \`${p.usage ?? '/queue help'}\``,
  UnknownVerb: (p) =>
    `\`${p.verb}\` is not a /queue command.${hint(p.suggestion)} Valid commands: ${list(p.valid)}.`,
  UnknownSystem: (p) =>
    `There is no system called \`${p.system}\`.${hint(p.suggestion)} Systems: ${list(p.valid)}.`,
  UnknownQueue: (p) =>
    `\`${p.system}\` has no queue called \`${p.queue}\`.${hint(p.suggestion)} Queues: ${list(p.valid)}.`,
  BadArgument: (p) =>
    `${p.message ?? `\`${p.value}\` is not valid here.`}${p.valid ? ` Valid: ${p.valid}.` : ''}`,
  RedisUnavailable: (p) => `Redis for \`${p.system}\` is not answering (${p.reason ?? 'no reply'}).`,
  NotSupported: (p) => `\`${p.system}\` (${p.type}) cannot ${p.what}.`,
  NoWorkersAnswered: (p) =>
    `No worker of \`${p.system}\` answered within ${p.timeoutMs} ms, so \`${p.queue}\` was not ${p.action === 'resume' ? 'resumed' : 'paused'}. Check \`/queue workers ${p.system}\`.`,
  Forbidden: (p) => `You need the \`${p.role}\` role to ${p.action}.`,
  WrongChannel: (p) => `\`${p.action}\` only runs in ${list(p.channels)}; read-only commands work anywhere.`,
  TwoFactorRequired: () =>
    'This action needs two-factor authentication, and Slack did not confirm it is on for your account.',
  UnknownRequest: (p) => `There is no request \`${p.id}\`${p.channel ? ' in this channel' : ''}.`,
  RequestNotPending: (p) => `Request \`${p.id}\` is already ${p.status}; nothing was changed.`,
  RequestExpired: (p) => `Request \`${p.id}\` expired at ${p.expiresAt}; ask again if it is still needed.`,
  SelfApproval: (p) => `You asked for \`${p.id}\` yourself; someone else has to approve it.`,
  AlreadyApproved: (p) => `You already approved \`${p.id}\`; it needs someone else too.`,
  StoreUnavailable: (p) =>
    `The bot's own store is not answering (${p.reason ?? 'no reply'}); nothing was changed.`,
  ConfigInvalid: (p) =>
    `The config in ${p.source} is not valid:\n${(p.problems as string[] | undefined)?.map((x) => `  ${x}`).join('\n') ?? ''}`,
  AuditChainBroken: (p) => `${p.message}`,
  AlreadyInState: (p) => `\`${p.target}\` is already ${p.state}; nothing was changed.`,
  ArchiveInvalid: (p) =>
    `The archive ${p.path} cannot be trusted: \`${p.file}\` is ${p.problem === 'checksum' ? 'not what its manifest says (sha256 mismatch)' : p.problem}; nothing was restored.`,
  UndoConflict: (p) =>
    `Undo refused: ${p.count} job id${p.count === 1 ? '' : 's'} exist${p.count === 1 ? 's' : ''} again (${list(p.ids)}${Number(p.count) > ((p.ids as string[] | undefined) ?? []).length ? ', …' : ''}); nothing was overwritten or restored.`,
  NotUndoable: (p) => `\`${p.id}\` cannot be undone: ${p.reason}.`,
};

export const errors = {
  describe(error: Pick<OpsError, 'code' | 'params'>): string {
    return lines[error.code](error.params);
  },
};
