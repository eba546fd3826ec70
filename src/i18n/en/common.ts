export const common = {
  somethingWentWrong: (ref: string) =>
    `Something went wrong on our side (ref ${ref}). The details are in the bot's log.`,
  didYouMean: (suggestion: string) => `did you mean \`${suggestion}\`?`,
  none: 'none',
};
