/** Usage lines and argument problems of the read commands (status, dlq, workers, help). */
export const commands = {
  usage: {
    status: '/queue status [system[/queue]]',
    dlq: '/queue dlq <system>/<queue> [limit]',
    workers: '/queue workers [system]',
    help: '/queue help',
  },
  tooManyArguments: (extra: string) => `Unexpected \`${extra}\`.`,
  dlqNeedsQueue: 'Name the queue as system/queue.',
  dlqLimitInvalid: (value: string) => `\`${value}\` is not a valid limit.`,
  dlqLimitRange: (min: number, max: number) => `a whole number from ${min} to ${max}`,
  everySystemDown: 'every system asked for',
  statusTimedOut: (seconds: number) => `no answer within ${seconds} s`,
  internalSystemError: (ref: string) => `internal error, ref ${ref}`,
  quoteNotClosed: (quote: string) => `A quote (${quote}) is not closed.`,
  nameTarget: 'Name a system or system/queue.',
  notATarget: (text: string) => `\`${text}\` is not a system/queue.`,
  unknownOption: (word: string, suggestion?: string) =>
    `\`${word}\` is not an option here.${suggestion ? ` Did you mean \`${suggestion}\`?` : ''}`,
  didYouMean: (what: string) => `Did you mean \`${what}\`?`,
  targetValid: 'system or system/queue, e.g. pushizo/dispatch-ios',
  wordTooLong: (length: number) => `A word of ${length} characters is longer than any name or id.`,
  wordLengthValid: (max: number) => `words of at most ${max} characters`,
  moreNames: (count: number) => `…${count} more`,
};
