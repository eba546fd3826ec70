/**
 * What a pager is to the rest of queue-ops: something that takes a page's trigger, acknowledgement
 * and end for one key. A new pager type is one file in this folder implementing `Pager`, its config
 * shape in `paging:` (src/config/paging.ts), and one line in `createPager` (./registry.ts).
 */
export interface PageEvent {
  action: 'trigger' | 'acknowledge' | 'resolve';
  /** The dedup key (PagerDuty) or alias (JSM): the same for every event of one page. */
  key: string;
  /** One line naming what is wrong (a phone shows this). */
  summary: string;
  /** `system/queue`, or the system. */
  source: string;
  severity: 'critical' | 'warning' | 'info';
  /** Value, threshold, since, evidence: shown with the page. */
  details: Record<string, string | number | null>;
  /** Back to the Slack message, when it is posted. */
  link?: { href: string; text: string };
}

export interface Pager {
  readonly name: string;
  readonly type: string;
  /** Resolves when the service took the event; throws a `PagerError` otherwise. */
  send(event: PageEvent): Promise<void>;
}

/**
 * A send that did not go through. `refused`: the service said no to the key or the event (HTTP
 * 400/401/403): trying again will not help. Otherwise it may be tried again, not before
 * `retryAfterMs` when the service said so (a 429's `Retry-After`).
 */
export class PagerError extends Error {
  constructor(
    readonly reason: string,
    readonly refused: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(reason);
    this.name = 'PagerError';
  }
}

/** What `/readyz` says of a pager: `refused` once it refused a key, `ok` again once it took one. */
export type PagerHealth = 'ok' | 'refused';
