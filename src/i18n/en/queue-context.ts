/**
 * Who owns a queue and what to do about it (`queues[].owner`, `runbook`, `dashboard`, `notes`), as
 * `status`, `dlq`, `job` and alerts show it. Arguments arrive already escaped for mrkdwn.
 */
export const queueContext = {
  owner: (who: string) => `Owner ${who}`,
  runbook: 'runbook',
  dashboard: 'dashboard',
  notes: (text: string) => text,
  /** Flagged queues sharing one context (`\`a\`, \`b\` +2`), under the status table. */
  statusLine: (queues: string, context: string) => `${queues} · ${context}`,
  /** The status message's heading over those lines. */
  statusHeading: '*Flagged queues: who owns them*',
  /** A storm's summary: the owners its rules page. */
  owners: (mentions: string) => `Owners: ${mentions}`,
  /** Under an alert on a queue's failures: from the alert to one failed job. */
  alertJobHint: (command: string) =>
    `One failed job in full: *Show DLQ* lists their ids, then \`${command}\``,
};
