/**
 * Every button's action_id, in one place. A button's value is only an id (a `system/queue`
 * scope or a request id); what a click does is decided again, on the server, from the id.
 */
export const ActionId = {
  /** value: the status scope (`""`, `system`, or `system/queue`). */
  StatusRefresh: 'queue_ops.status.refresh',
  /** value: `system/queue`. */
  OpenDlq: 'queue_ops.dlq.open',
  /** value: `system/queue`. */
  DlqRefresh: 'queue_ops.dlq.refresh',
  /** value: `system` or "". */
  WorkersRefresh: 'queue_ops.workers.refresh',
  /** value: an approval request id. */
  Approve: 'queue_ops.request.approve',
  /** value: an approval request id. */
  Deny: 'queue_ops.request.deny',
} as const;
export type ActionId = (typeof ActionId)[keyof typeof ActionId];

/**
 * The command words a button stands for, so that a click goes through the same parser, guards
 * and audit as typing the command. Returns undefined for an action id we never issued.
 */
export function wordsForAction(actionId: string, value: string): string[] | undefined {
  const scope = value.trim();
  switch (actionId) {
    case ActionId.StatusRefresh:
      return scope ? ['status', scope] : ['status'];
    case ActionId.OpenDlq:
    case ActionId.DlqRefresh:
      return ['dlq', scope];
    case ActionId.WorkersRefresh:
      return scope ? ['workers', scope] : ['workers'];
    case ActionId.Approve:
      return ['approve', scope];
    case ActionId.Deny:
      return ['deny', scope];
    default:
      return undefined;
  }
}
