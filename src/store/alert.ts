import type { RuleMetric } from '../config/schema.js';

/**
 * One alert: one Slack message, from the first breach until it clears. Pure transitions over
 * this record (src/escalation/lifecycle.ts) decide what to say; the store keeps it, so its shape
 * lives here, on the floor that owns the data.
 */
export interface Alert {
  /** Short id shown to people and carried by the buttons, e.g. `a-7f3k9q2b`. */
  id: string;
  /** `rule|subject`: at most one firing alert per key. */
  key: string;
  rule: string;
  metric: RuleMetric;
  severity: 'critical' | 'warning' | 'info';
  subject: string;
  system: string;
  queue?: string;
  comparator: 'above' | 'below';
  threshold: number;
  status: 'firing' | 'resolved';
  /** The latest known value; null stands for "not draining" (an infinite minutesToDrain). */
  value: number | null;
  /** The value that went furthest past the threshold while it fired. */
  worst: number | null;
  /** The last values, oldest first (null: unknown). */
  series: (number | null)[];
  /** Minutes to drain at the current rate; null: not draining; absent: unknown or not a queue. */
  minutesToDrain?: number | null;
  /** Samples in a row back under the threshold, toward `clearAfterSamples`. */
  clearing: number;
  /** ISO 8601 UTC times. */
  openedAt: string;
  updatedAt: string;
  resolvedAt?: string;
  /** When people were last told (the post, a reminder, the end of a snooze). */
  lastNotifiedAt: string;
  escalatedAt?: string;
  ackedBy?: string;
  ackedAt?: string;
  snoozedBy?: string;
  snoozedUntil?: string;
  /**
   * Grouped alerts (`escalation.groupBy`): the group whose one message lists this alert; the
   * alert's `channel`/`messageTs` are that message's once it is posted, so its thread replies
   * and charts go into the group's thread.
   */
  groupId?: string;
  /** What the group shares (`escalation.groupBy`'s values, and the channel), or `burst`. */
  groupKey?: string;
  /** The silence (`silence …`) that holds this alert's notifications, while one matches it. */
  silencedBy?: string;
  /** Its first post was held by a silence: posted when no silence matches any more. */
  postHeld?: boolean;
  /**
   * The pages sent for this alert's message (`paging:`), one per pager. A grouped message's pages
   * are kept on the one alert of the group that was paged first (see src/paging/plan.ts).
   */
  pages?: AlertPage[];
  /**
   * The cause diagnosed for this alert's queue when it opened (issue 36 §3), fixed for the alert's
   * life so its message and its page stay the same; absent when no cause was strong.
   */
  cause?: AlertCause;
  /** Where the message is, once Slack has it. */
  channel?: string;
  messageTs?: string;
  /** Bumped on every write; writes are conditional on it. */
  version: number;
}

/** An alert's cause, as the monitor's diagnosis named it when the alert opened. */
export interface AlertCause {
  /** The cause's id (`no-workers`, `redis-memory`, … as `why --json` names them). */
  id: string;
  /** One line for a message's lead and a page: the cause, how many queues, its telling evidence. */
  summary: string;
  /** Its strongest evidence line. */
  evidence: string;
  /** The fixes, as typed after `/queue`; a button runs `why <system> --fix <key>`. */
  fixes: { command: string }[];
  /** How many queues of the system the cause explains (0: the whole system). */
  queues: number;
}

/** One pager's page of an alert's message, from the trigger to its acknowledgement and end. */
export interface AlertPage {
  /** The pager's `name` in `paging:`. */
  pager: string;
  /** The dedup key (PagerDuty) or alias (JSM): the alert's, or its group's, so a resend is harmless. */
  key: string;
  /** When it was triggered (ISO 8601 UTC), and by whom: `monitor`, or the person who typed `page`. */
  at: string;
  by: string;
  /** The last action queued for the pager: the page moves trigger → acknowledge → resolve. */
  sent: 'trigger' | 'acknowledge' | 'resolve';
  /** Who acknowledged it and where: a Slack id (Slack, the command line), or `pagerduty:<user id>`. */
  acknowledgedBy?: string;
  /** The name PagerDuty gave for its user. */
  acknowledgedName?: string;
  acknowledgedAt?: string;
  /** A person resolved the page in PagerDuty (`pagerduty:<user id>`); the alert resolves on its own. */
  resolvedBy?: string;
  resolvedName?: string;
  resolvedAt?: string;
  /** The pager refused the key (HTTP 400/401/403): not tried again for this page. */
  refused?: string;
}

/**
 * `silence <pattern> <duration> [reason]`: alerts matching `pattern` (`system`,
 * `system/queue-glob`, either after `rule@`) are tracked but notify nobody until `expiresAt`, or
 * until `unsilence <id>` lifts it.
 */
export interface Silence {
  /** Short id shown to people, e.g. `s-1a2b3c4d`. */
  id: string;
  pattern: string;
  reason?: string;
  createdBy: string;
  /** ISO 8601 UTC times. */
  createdAt: string;
  expiresAt: string;
  liftedBy?: string;
  liftedAt?: string;
}
