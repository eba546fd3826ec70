export const common = {
  somethingWentWrong: (ref: string) =>
    `Something went wrong on our side (ref ${ref}). The details are in the bot's log.`,
  didYouMean: (suggestion: string) => `did you mean \`${suggestion}\`?`,
  none: 'none',
  /** Under a read's answer when the bot's store takes no writes (a full disk, a read-only file). */
  unaudited: (reason: string) =>
    `:warning: Not audited: the bot's store cannot be written (${reason}). Reads still answer; actions and approvals are unavailable until it can.`,
};
