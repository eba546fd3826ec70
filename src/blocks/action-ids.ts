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
  /**
   * value: `<group key>/system/queue` (the key: 12 hex characters of the error group's hash, never
   * its text); runs `retry system/queue all --group <key>`, through its policy and approval.
   */
  DlqRetryGroup: 'queue_ops.dlq.retry_group',
  /** value: `system` or "". */
  WorkersRefresh: 'queue_ops.workers.refresh',
  /** value: an approval request id. */
  Approve: 'queue_ops.request.approve',
  /** value: an approval request id. */
  Deny: 'queue_ops.request.deny',
  /** value: an alert id. */
  AlertAck: 'queue_ops.alert.ack',
  /** value: an alert id; the duration is in the action id, never in the value. */
  AlertSnooze30m: 'queue_ops.alert.snooze_half_hour',
  /** value: an alert id. */
  AlertSnooze2h: 'queue_ops.alert.snooze_two_hours',
  /** value: an alert id; runs `page <alert-id>` (every matching pager). */
  AlertPage: 'queue_ops.alert.page',
  /** value: `system/queue`; answers with a new message, the alert stays. */
  AlertDlq: 'queue_ops.alert.dlq',
  /**
   * value: `system/queue`; runs `workers <system>`: the system's worker groups with their replicas
   * and bounds, the step before `scale <system>/<group> <replicas>` (a queue is not a group, and
   * how many replicas is the operator's call).
   */
  AlertScale: 'queue_ops.alert.scale',
  /** value: `system/queue/id` (system and queue hold no `/`; the id is the rest). */
  JobRefresh: 'queue_ops.job.refresh',
  /** value: `system/queue/id`; runs `retry system/queue id`, through its policy and approval. */
  JobRetry: 'queue_ops.job.retry',
  /** value: `system/queue/id`; runs `fail system/queue id`, through its policy and approval. */
  JobFail: 'queue_ops.job.fail',
  /** value: `system//task-id`; runs `revoke system task-id`, through its policy and approval. */
  JobRevoke: 'queue_ops.job.revoke',
  /** value: the id of a done purge request; asks for its undo (policy and approval apply). */
  PurgeUndo: 'queue_ops.purge.undo',
  /**
   * value: `<fix key>/system[/queue]` (the key: 12 hex characters of the fix's hash, never its
   * command); runs `why <scope> --fix <key>`, which reads the evidence again and runs the fix of
   * that key as if it were typed, through its own guards, policy and approval.
   */
  WhyFix: 'queue_ops.why.fix',
  /** value: `system` or `system/queue`; runs `why <value>` (an alert message's Why? button). */
  AlertWhy: 'queue_ops.alert.why',
} as const;
export type ActionId = (typeof ActionId)[keyof typeof ActionId];

/**
 * The command words a button stands for, so that a click goes through the same parser, guards
 * and audit as typing the command. Returns undefined for an action id we never issued.
 */
export function wordsForAction(actionId: string, value: string): string[] | undefined {
  const scope = value.trim();
  switch (baseActionId(actionId)) {
    case ActionId.StatusRefresh:
      return scope ? ['status', scope] : ['status'];
    case ActionId.OpenDlq:
    case ActionId.DlqRefresh:
      return ['dlq', scope];
    case ActionId.DlqRetryGroup: {
      const match = /^([0-9a-f]{12})\/([^/]+\/.+)$/.exec(scope);
      return match ? ['retry', match[2]!, 'all', '--group', match[1]!] : undefined;
    }
    case ActionId.WorkersRefresh:
      return scope ? ['workers', scope] : ['workers'];
    case ActionId.Approve:
      return ['approve', scope];
    case ActionId.Deny:
      return ['deny', scope];
    case ActionId.AlertAck:
      return ['ack', scope];
    case ActionId.AlertSnooze30m:
      return ['snooze', scope, '30m'];
    case ActionId.AlertSnooze2h:
      return ['snooze', scope, '2h'];
    case ActionId.AlertPage:
      return ['page', scope];
    case ActionId.AlertDlq:
      return ['dlq', scope];
    case ActionId.AlertScale:
      return ['workers', scope.split('/')[0]!];
    case ActionId.JobRefresh:
      return jobWords('job', scope);
    case ActionId.JobRetry:
      return jobWords('retry', scope);
    case ActionId.JobFail:
      return jobWords('fail', scope);
    case ActionId.JobRevoke:
      return jobWords('revoke', scope);
    case ActionId.PurgeUndo:
      return ['undo', scope];
    case ActionId.AlertWhy:
      return /^[^/\s]+(\/\S+)?$/.test(scope) ? ['why', scope] : undefined;
    case ActionId.WhyFix: {
      const match = /^([0-9a-f]{12})\/([^/]+(\/.+)?)$/.exec(scope);
      return match ? ['why', match[2]!, '--fix', match[1]!] : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Slack wants every action_id unique within its block, so the n-th button of one kind in a block
 * (several "Open DLQ" buttons) gets a `#n` suffix. Listeners match with `ActionIdPattern` and
 * read the kind back with `baseActionId`.
 */
export function indexedActionId(id: ActionId, index: number): string {
  return index === 0 ? id : `${id}#${index}`;
}

/** The action id without the `#n` suffix that `indexedActionId` adds. */
export function baseActionId(actionId: string): string {
  const hash = actionId.indexOf('#');
  return hash < 0 ? actionId : actionId.slice(0, hash);
}

/** Matches every action id this app issues, suffixed or not (for `app.action(ActionIdPattern, …)`). */
export const ActionIdPattern = /^queue_ops\.[a-z_.]+(#\d+)?$/;

/** A job button's value: `system/queue/id`, or undefined when it would not fit a button. */
export function jobRef(target: string, id: string): string | undefined {
  const value = `${target}/${id}`;
  return value.length <= 255 && !/[\s\p{Cc}]/u.test(value) ? value : undefined;
}

/**
 * `verb system/queue id` from a job button's `system/queue/id` (system and queue names hold no
 * `/`); a Celery task's `system//id` gives `verb system id`.
 */
function jobWords(verb: string, value: string): string[] | undefined {
  const first = value.indexOf('/');
  const second = first < 0 ? -1 : value.indexOf('/', first + 1);
  if (second < 0 || second === value.length - 1 || first === 0) return undefined;
  const id = value.slice(second + 1);
  return second === first + 1 ? [verb, value.slice(0, first), id] : [verb, value.slice(0, second), id];
}
