/**
 * Extra lines under a denial, saying why and what to do. The first line of a denial is the
 * error's own line from `errors.ts`.
 */
export const guards = {
  noAllowedChannels:
    'No channel is listed in `slack.allowedChannels` yet, so changes cannot run from Slack until an admin adds one.',
  twoFactorUnknown:
    'Slack did not say whether two-factor authentication is on for your account (it only tells the bot for workspace admins), so the bot cannot confirm it.',
  twoFactorOff:
    'Slack reports that two-factor authentication is off for your account. Turn it on and try again.',
  groupsUnresolved: (groups: string) =>
    `The bot could not check the user groups ${groups} with Slack just now; try again in a minute.`,
  cliActor: (actor: string) =>
    `On the command line you are \`${actor}\`, which only matches \`"*"\` in \`roles:\`. Pass \`--user U…\` to act as a Slack user.`,
};
