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
};
