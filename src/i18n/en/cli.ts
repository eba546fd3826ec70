/** The command line's own words: usage, flag problems, config problems, the buttons hint. */
export const cli = {
  usage: [
    'Usage: queue-ops [--config FILE] [--user USER_ID] [--json] <words after /queue>',
    '',
    '  --config FILE   config file (default: $QUEUE_OPS_CONFIG, else ./queue-ops.yml)',
    '  --user ID       act as this Slack user id (default: cli:<your OS user>)',
    '  --json          print one JSON object {ok, message: {text, blocks}, data}',
    '  -h, --help      this text',
    '',
    "Options go before the command; the words after it are the command's own, flags included",
    '(`queue-ops audit export --since ISO`). `--json` also works at the end.',
    '',
    'Examples: queue-ops status   queue-ops dlq pushizo/dispatch-ios 20   queue-ops --json workers zeus',
    '          queue-ops monitor --once   (one escalation tick: sample, alert, post; for cron)',
    'Exit codes: 0 success, 1 the command failed (unknown queue, Redis down), 2 usage or config error.',
  ].join('\n'),
  unknownFlag: (flag: string) => `Unknown option ${flag}.`,
  unknownFlagSuggest: (flag: string, likely: string) => `Unknown option ${flag}. Did you mean ${likely}?`,
  flagNeedsValue: (flag: string) => `Option ${flag} needs a value.`,
  badUser: (value: string) =>
    `--user must be a Slack user id (U… or W…, as roles: lists them), not "${value}".`,
  configInvalid: (source: string) => `queue-ops: the config in ${source} is not valid:`,
  storeUnavailable: (reason: string) =>
    `${reason} Read-only commands still work; actions, approvals and the audit trail need the store.`,
  unexpectedFailure: (reason: string) => `queue-ops: unexpected failure: ${reason}`,
  /** A request whose process died (approved but never started, or mid-action), reported at the next start. */
  recovered: (id: string, action: string, target: string, error: string) =>
    `queue-ops: request ${id} (${action} ${target}): ${error}`,
  /** A read-only command answered first; a purge (or undo) a dead process left is finished now. */
  finishingAfter: (verb: string, kind: 'purge' | 'undo', id: string, target: string) =>
    `queue-ops: \`${verb}\` answered first; now finishing the ${kind === 'purge' ? 'purge' : 'undo of purge'} ${id} (${target}), which a process that died left unfinished.`,
  buttonsHeader: 'To press a button, run:',
  button: (index: number, command: string) => `  [${index}] ${command}`,
};
