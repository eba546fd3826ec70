/**
 * Who owns a queue and what to do about it (`queues[].owner`, `runbook`, `dashboard`, `notes`), as
 * `status`, `dlq`, `job` and alerts show it. Arguments arrive already escaped for mrkdwn.
 */
export const queueContext = {
  owner: (who: string) => `Owner ${who}`,
  runbook: 'runbook',
  dashboard: 'dashboard',
  notes: (text: string) => text,
  /** One flagged queue's line under the status table. */
  statusLine: (queue: string, context: string) => `\`${queue}\` · ${context}`,
  /** The status message's heading over those lines. */
  statusHeading: '*Flagged queues: who owns them*',
  /** A storm's summary: the owners its rules page. */
  owners: (mentions: string) => `Owners: ${mentions}`,
  /** Under an alert on a queue's failures: from the alert to one failed job. */
  alertJobHint: (command: string) =>
    `One failed job in full: *Show DLQ* lists their ids, then \`${command}\``,
};
