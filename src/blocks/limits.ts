/**
 * Slack's Block Kit limits, from `@slack/types` JSDoc and docs.slack.dev (see
 * `shared/design/slack-platform.md` §1). Slack rejects the whole message when one is exceeded.
 */
export const SlackLimits = {
  messageBlocks: 50,
  modalBlocks: 100,
  blockId: 255,
  sectionText: 3000,
  sectionFields: 10,
  sectionFieldText: 2000,
  headerText: 150,
  actionsElements: 25,
  contextElements: 10,
  contextText: 3000,
  buttonText: 75,
  buttonValue: 2000,
  buttonUrl: 3000,
  accessibilityLabel: 75,
  actionId: 255,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  markdownText: 12_000,
  tableRows: 100,
  tableCells: 20,
  tableColumnSettings: 20,
  /** chat.update answers `msg_too_long` past this. */
  messageText: 4000,
  /**
   * Not documented: Slack answers `msg_blocks_too_long` when the text of all blocks together passes
   * roughly 12,000 characters, sometimes less (slackapi/bolt-js#2509, #2867). We stay well under.
   */
  totalBlockText: 10_000,
} as const;

/**
 * What the builders aim for in total block text, leaving room under `totalBlockText` for the
 * header, buttons and the JSON containers Slack also seems to count.
 */
export const BUILDER_TEXT_BUDGET = 8000;
